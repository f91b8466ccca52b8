// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rpclab/rpclab/schema"
)

// schemaSource is the embedded schema of each kind and the name errors give it.
var schemaSource = map[string]struct {
	doc  []byte
	file string
}{
	KindPing: {schema.Result, "schema/result.schema.json"},
	KindBulk: {schema.Bulk, "schema/bulk.schema.json"},
	KindFlow: {schema.Flow, "schema/flow.schema.json"},
	KindLive: {schema.Live, "schema/live.schema.json"},
}

// schemas compiles every kind's schema once.
var schemas = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	out := make(map[string]*jsonschema.Schema, len(schemaSource))
	for kind, src := range schemaSource {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src.doc))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.file, err)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		url := "https://rpclab.dev/schema/" + kind + "-v1.json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("%s: %w", src.file, err)
		}
		s, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.file, err)
		}
		out[kind] = s
	}
	return out, nil
})

// Validate checks one JSON-encoded record against the schema of its kind
// (its "kind" key): schema/result.schema.json for "ping",
// schema/bulk.schema.json for "bulk", schema/flow.schema.json for "flow".
func Validate(record []byte) error {
	var probe struct {
		Kind *string `json:"kind"`
	}
	if err := json.Unmarshal(record, &probe); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if probe.Kind == nil {
		return fmt.Errorf("%w: no \"kind\" key", ErrUnknownKind)
	}
	return ValidateKind(*probe.Kind, record)
}

// ValidateKind checks one JSON-encoded record against the schema of kind.
func ValidateKind(kind string, record []byte) error {
	all, err := schemas()
	if err != nil {
		return fmt.Errorf("result: schema: %w", err)
	}
	s, ok := all[kind]
	if !ok {
		return fmt.Errorf("%w: %q (this rpclab reads %q)", ErrUnknownKind, kind, Kinds)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(record))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := checkNumbers(v); err != nil {
		return err
	}
	if err := validate(s, v); err != nil {
		return fmt.Errorf("does not match the result schema for kind %q (%s): %w", kind, schemaSource[kind].file, err)
	}
	return nil
}

// maxExponent bounds a number's decimal exponent. The schema validator
// turns every number into a big.Rat: an exponent of a few million takes it
// seconds, and one that overflows an int makes it panic (jsonschema v6.0.3,
// found by FuzzReadAll). No figure rpclab writes comes near float64's 308.
const maxExponent = 400

// checkNumbers rejects numbers the validator cannot or should not expand.
func checkNumbers(v any) error {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
			if err != nil || e > maxExponent || e < -maxExponent {
				return fmt.Errorf("number %.40q is out of range (exponent beyond ±%d)", s, maxExponent)
			}
		}
	case map[string]any:
		for _, e := range v {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// validate runs the schema validator, turning a panic of it into an error:
// a hostile record must not crash rpclab.
func validate(s *jsonschema.Schema, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the schema validator failed on this record: %v", p)
		}
	}()
	return s.Validate(v)
}
