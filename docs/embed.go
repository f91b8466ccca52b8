// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package docs carries the files of docs/ that programs need at run time:
// the JSON Schema of each record kind.
package docs

import _ "embed"

// ResultSchema is docs/result.schema.json, the schema of kind "ping" records.
//
//go:embed result.schema.json
var ResultSchema []byte

// BulkSchema is docs/bulk.schema.json, the schema of kind "bulk" records.
//
//go:embed bulk.schema.json
var BulkSchema []byte

// FlowSchema is docs/flow.schema.json, the schema of kind "flow" records.
//
//go:embed flow.schema.json
var FlowSchema []byte

// LiveSchema is docs/live.schema.json, the schema of kind "live" records.
//
//go:embed live.schema.json
var LiveSchema []byte

// StepSchema is docs/step.schema.json, the schema of one line of the steps
// file a driver hands a client (docs/clients.md, "The step spec").
//
//go:embed step.schema.json
var StepSchema []byte
