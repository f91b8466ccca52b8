// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package flow

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSONL writes r as one JSON line.
func WriteJSONL(w io.Writer, r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("flow: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("flow: %w", err)
	}
	return nil
}

// ReadJSONL reads flow records, one per line; it rejects other kinds and
// schema versions it does not know.
func ReadJSONL(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("flow: line %d: %w", n, err)
		}
		if rec.Kind != Kind || rec.SchemaVersion != 1 {
			return nil, fmt.Errorf("flow: line %d: kind %q schema %d, want %q schema 1", n, rec.Kind, rec.SchemaVersion, Kind)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("flow: %w", err)
	}
	return out, nil
}
