// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package schema carries the JSON Schema of each record kind and of the
// steps file, embedded so that rpclab validates records without the source
// tree. The same files are read by the other languages' clients' builds and
// tests (docs/results.md, docs/clients.md).
package schema

import _ "embed"

// Result is result.schema.json, the schema of kind "ping" records.
//
//go:embed result.schema.json
var Result []byte

// Bulk is bulk.schema.json, the schema of kind "bulk" records.
//
//go:embed bulk.schema.json
var Bulk []byte

// Flow is flow.schema.json, the schema of kind "flow" records.
//
//go:embed flow.schema.json
var Flow []byte

// Live is live.schema.json, the schema of kind "live" records.
//
//go:embed live.schema.json
var Live []byte

// Step is step.schema.json, the schema of one line of the steps file a
// driver hands a client (docs/clients.md, "The step spec").
//
//go:embed step.schema.json
var Step []byte
