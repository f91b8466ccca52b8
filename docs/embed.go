// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package docs carries the files of docs/ that programs need at run time:
// the JSON Schema of the result record.
package docs

import _ "embed"

// ResultSchema is docs/result.schema.json.
//
//go:embed result.schema.json
var ResultSchema []byte
