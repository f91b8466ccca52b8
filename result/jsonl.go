// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Writer appends records to a JSON Lines stream. Each Write is flushed at
// once, so a run that is stopped keeps every record measured so far.
type Writer struct {
	w   io.Writer
	enc *json.Encoder
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, enc: json.NewEncoder(w)}
}

// Write appends r as one line.
func (w *Writer) Write(r *Record) error {
	if err := w.enc.Encode(r); err != nil {
		return fmt.Errorf("result: write: %w", err)
	}
	if f, ok := w.w.(*os.File); ok {
		_ = f.Sync()
	}
	return nil
}

// ErrTruncated reports a last line that is not a complete record, as left by
// a writer that was killed mid-line. Read returns the records before it.
var ErrTruncated = errors.New("result: last line is truncated")

// LineError is a malformed line in a results file.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Read parses a JSON Lines stream of records and validates each against the
// schema. Blank lines are skipped. A malformed last line without a final
// newline is a truncated write: the records before it are returned with an
// error wrapping ErrTruncated. Any other bad line is an error naming it.
func Read(r io.Reader) ([]Record, error) {
	br := bufio.NewReader(r)
	var recs []Record
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return recs, fmt.Errorf("result: read: %w", err)
		}
		last := errors.Is(err, io.EOF)
		trimmed := bytes.TrimSpace(b)
		if len(trimmed) > 0 {
			rec, perr := parse(trimmed)
			switch {
			case perr == nil:
				recs = append(recs, rec)
			case last && !bytes.HasSuffix(b, []byte("\n")) && !json.Valid(trimmed):
				return recs, &LineError{Line: line, Err: ErrTruncated}
			default:
				return recs, &LineError{Line: line, Err: perr}
			}
		}
		if last {
			return recs, nil
		}
	}
}

// ReadFile reads a results file; see Read.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	defer f.Close()
	recs, err := Read(f)
	if err != nil {
		return recs, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

func parse(b []byte) (Record, error) {
	var probe struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return Record{}, fmt.Errorf("not a JSON object: %w", err)
	}
	if probe.SchemaVersion == nil {
		return Record{}, errors.New("not an rpclab record: no schema_version")
	}
	if *probe.SchemaVersion != SchemaVersion {
		return Record{}, fmt.Errorf("schema_version %d is not supported (this rpclab reads %d)", *probe.SchemaVersion, SchemaVersion)
	}
	if err := Validate(b); err != nil {
		return Record{}, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("record: %w", err)
	}
	return r, nil
}
