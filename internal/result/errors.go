// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"errors"
	"fmt"
)

var (
	// ErrTruncated reports a last line that is not a complete record, as
	// left by a writer that was killed mid-line. The reader returns the
	// records before it.
	ErrTruncated = errors.New("result: last line is truncated")
	// ErrNoRecords reports a stream or file without a single record (empty
	// or blank).
	ErrNoRecords = errors.New("no records")
	// ErrUnknownKind reports a record whose "kind" this rpclab does not read.
	ErrUnknownKind = errors.New("unknown record kind")
	// ErrImpossible reports a record whose figures cannot be true (errors
	// above requests, a NaN, a histogram that does not decode, a rate its
	// own counts cannot give): see Check.
	ErrImpossible = errors.New("impossible record")
	// ErrLineTooLong reports a line longer than MaxLineBytes: no record is
	// that long, so the input is not a results file (/dev/zero, a binary).
	ErrLineTooLong = fmt.Errorf("line longer than %d MiB: not a results file", MaxLineBytes>>20)
	// ErrBadBytes is wrapped by every error of ParseBytes.
	ErrBadBytes = errors.New("result: not a byte count")
)

// LineError is a malformed line in a results file.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }
