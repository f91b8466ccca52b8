// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rpclab/rpclab/internal/limitread"
)

// Writer appends records of any kind to a JSON Lines stream. Each Write is
// flushed at once (and a file synced), so a run that is stopped keeps every
// record measured so far.
type Writer struct {
	w   io.Writer
	enc *json.Encoder
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, enc: json.NewEncoder(w)}
}

// Write appends r (a *Record, *BulkRecord or *FlowRecord) as one line.
func (w *Writer) Write(r Kinded) error {
	if err := w.enc.Encode(r); err != nil {
		return fmt.Errorf("result: write %s record: %w", r.recordKind(), err)
	}
	if f, ok := w.w.(*os.File); ok {
		_ = f.Sync()
	}
	return nil
}

// MaxLineBytes bounds one line of a results file. The longest record
// rpclab writes (a flow cell of many RPCs, a ping record's histogram) is a
// few hundred KiB.
const MaxLineBytes = 64 << 20

// Set is the records of one stream or file, by kind, each kind in the order
// of its lines.
type Set struct {
	Ping []Record
	Bulk []BulkRecord
	Flow []FlowRecord
	Live []LiveRecord
	// kinds lists the kinds present, in order of first appearance, and
	// counts the records of each.
	kinds  []string
	counts map[string]int
	// drop: count each record once checked, keep none (CheckAllFile).
	drop bool
}

// Len is the number of records of every kind.
func (s *Set) Len() int {
	n := 0
	for _, c := range s.counts {
		n += c
	}
	return n
}

// Count is the number of records of kind.
func (s *Set) Count(kind string) int { return s.counts[kind] }

// Kinds lists the kinds present, in order of their first record.
func (s *Set) Kinds() []string { return append([]string(nil), s.kinds...) }

func (s *Set) noteKind(k string) {
	if s.counts == nil {
		s.counts = map[string]int{}
	}
	s.counts[k]++
	if s.drop {
		s.Ping, s.Bulk, s.Flow, s.Live = s.Ping[:0], s.Bulk[:0], s.Flow[:0], s.Live[:0]
	}
	for _, have := range s.kinds {
		if have == k {
			return
		}
	}
	s.kinds = append(s.kinds, k)
}

// ReadAll parses a JSON Lines stream of records of every kind, dispatching
// on each line's "kind", and validates each against its kind's schema.
// Blank lines are skipped. A malformed last line without a final newline
// is a truncated write: the records before it are returned with a
// *LineError wrapping ErrTruncated. Any other bad line (not JSON, an
// unknown schema_version or kind, a schema violation, a line longer than
// MaxLineBytes) is a *LineError naming it, returned with the records
// before it. A stream without records is ErrNoRecords. Reading stops with
// ctx's error when ctx is done.
func ReadAll(ctx context.Context, r io.Reader) (*Set, error) {
	return readAll(ctx, r, &Set{})
}

func readAll(ctx context.Context, r io.Reader, set *Set) (*Set, error) {
	set, err := read(ctx, r, "", set)
	if err == nil && set.Len() == 0 {
		err = ErrNoRecords
	}
	return set, err
}

// ReadAllFile reads a results file of any kinds; see ReadAll. Errors name
// the file. When ctx is done the file is closed, so even a read blocked on
// a pipe or FIFO ends, and a FIFO that no process writes is given up
// (limitread.OpenFile).
func ReadAllFile(ctx context.Context, path string) (*Set, error) {
	return readAllFile(ctx, path, &Set{})
}

// CheckAllFile checks a results file of any kinds as ReadAllFile reads
// it, line by line (each line within MaxLineBytes), but keeps no record:
// the Set it returns only counts them (Len, Count, Kinds). rpclab
// validate reads with it, so a file of any size is checked in the memory
// of its longest line.
func CheckAllFile(ctx context.Context, path string) (*Set, error) {
	return readAllFile(ctx, path, &Set{drop: true})
}

func readAllFile(ctx context.Context, path string, set *Set) (*Set, error) {
	f, err := limitread.OpenFile(ctx, path, os.O_RDONLY, 0) // a FIFO without a writer waits only until ctx ends
	if err != nil {
		return &Set{}, fmt.Errorf("result: %w", err)
	}
	defer f.Close()
	// A read blocked on a pipe or FIFO that no one writes returns when ctx
	// is done: closing the file ends it.
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	set, err = readAll(ctx, f, set)
	if err != nil {
		return set, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// Read parses a stream of ping records; see ReadAll. A record of another
// kind is a *LineError naming its line. An empty stream is no records and
// no error.
func Read(r io.Reader) ([]Record, error) {
	set, err := read(context.Background(), r, KindPing, &Set{})
	return set.Ping, err
}

// ReadFile reads a file of ping records; see Read.
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

// read is the one reader behind ReadAll, CheckAllFile and Read, adding
// to set: only records of kind only are accepted when only is not empty.
func read(ctx context.Context, r io.Reader, only string, set *Set) (*Set, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		b, err := readLine(ctx, br)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, ErrLineTooLong) {
				return set, &LineError{Line: line, Err: err}
			}
			if ctx.Err() != nil {
				return set, fmt.Errorf("result: reading stopped at line %d: %w", line, ctx.Err())
			}
			return set, fmt.Errorf("result: read line %d: %w", line, err)
		}
		last := errors.Is(err, io.EOF)
		trimmed := bytes.TrimSpace(b)
		if len(trimmed) > 0 {
			perr := parse(set, trimmed, only)
			switch {
			case perr == nil:
			case last && !bytes.HasSuffix(b, []byte("\n")) && !json.Valid(trimmed):
				return set, &LineError{Line: line, Err: ErrTruncated}
			default:
				return set, &LineError{Line: line, Err: perr}
			}
		}
		if last {
			return set, nil
		}
	}
}

// readLine returns the next line with its newline (without one at the end
// of the stream, with io.EOF). It checks ctx between chunks, so an endless
// line (/dev/zero) ends at MaxLineBytes or when ctx is done.
func readLine(ctx context.Context, br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		if err := ctx.Err(); err != nil {
			return line, err
		}
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLineBytes {
			return nil, ErrLineTooLong
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// parse checks one line and appends its record to set.
func parse(set *Set, b []byte, only string) error {
	var probe struct {
		SchemaVersion *int    `json:"schema_version"`
		Kind          *string `json:"kind"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if probe.SchemaVersion == nil {
		return errors.New("not an rpclab record: no schema_version")
	}
	if *probe.SchemaVersion != SchemaVersion {
		return fmt.Errorf("schema_version %d is not supported (this rpclab reads %d)", *probe.SchemaVersion, SchemaVersion)
	}
	if probe.Kind == nil {
		return fmt.Errorf("%w: no \"kind\" key", ErrUnknownKind)
	}
	kind := *probe.Kind
	if _, ok := schemaSource[kind]; !ok {
		return fmt.Errorf("%w %q (this rpclab reads %q)", ErrUnknownKind, kind, Kinds)
	}
	if only != "" && kind != only {
		return fmt.Errorf("a %q record where %q records are expected", kind, only)
	}
	if err := ValidateKind(kind, b); err != nil {
		return err
	}
	var err error
	switch kind {
	case KindPing:
		var r Record
		if err = unmarshalChecked(b, &r); err == nil {
			set.Ping = append(set.Ping, r)
		}
	case KindBulk:
		var r BulkRecord
		if err = unmarshalChecked(b, &r); err == nil {
			set.Bulk = append(set.Bulk, r)
		}
	case KindFlow:
		var r FlowRecord
		if err = unmarshalChecked(b, &r); err == nil {
			set.Flow = append(set.Flow, r)
		}
	case KindLive:
		var r LiveRecord
		if err = unmarshalChecked(b, &r); err == nil {
			set.Live = append(set.Live, r)
		}
	}
	if err != nil {
		return fmt.Errorf("%s record: %w", kind, err)
	}
	set.noteKind(kind)
	return nil
}

// unmarshalChecked decodes a line the schema passed into r and checks its
// figures (Check's arithmetic: JSON holds no NaN, and the schema ran).
func unmarshalChecked(b []byte, r Kinded) error {
	if err := json.Unmarshal(b, r); err != nil {
		return err
	}
	if err := checkFigures(r); err != nil {
		return fmt.Errorf("%w: %w", ErrImpossible, err)
	}
	return nil
}
