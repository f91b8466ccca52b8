// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package docs

import _ "embed"

// BulkSchema is docs/bulk.schema.json, the schema of kind "bulk" records.
//
//go:embed bulk.schema.json
var BulkSchema []byte
