// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package foreign

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// table is a comma-separated table with a fixed header, as the published
// tables (../shared/published) are written: the header on the first
// non-blank line, then one row per line, blank lines ignored.
type table struct {
	header []string
	rows   []row
}

// row is one line of a table: its fields and where it is.
type row struct {
	line   int
	fields []string
}

// maxRows bounds a table: the published tables have tens of rows.
const maxRows = 100000

// readTable reads data as a table with exactly header's columns. Every
// error names the line and the column (1-based) it is about: an empty
// input (line 1, column 1), a header that differs (its first differing
// column), a row with too few or too many fields (the first missing or
// extra column).
func readTable(data []byte, header string) (*table, error) {
	return readTableFrom(data, header, 0, false)
}

// readTableFrom is readTable from the line after skip (lines counted from
// 1 in all of data); with stopAtBlank the table ends at the first blank
// line after a row (what follows it is another part of a tool's output).
func readTableFrom(data []byte, header string, skip int, stopAtBlank bool) (*table, error) {
	t := &table{header: strings.Split(header, ",")}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	found := false
	for sc.Scan() {
		line++
		if line <= skip {
			continue
		}
		s := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if s == "" {
			if stopAtBlank && len(t.rows) > 0 {
				break
			}
			continue
		}
		f := splitFields(s)
		if !found {
			for i, want := range t.header {
				if i >= len(f) {
					return nil, posErr(line, i+1, "header ends after %d columns, want %q", len(f), header)
				}
				if f[i] != want {
					return nil, posErr(line, i+1, "header column %q, want %q (header %q)", f[i], want, header)
				}
			}
			if len(f) > len(t.header) {
				return nil, posErr(line, len(t.header)+1, "header has %d columns, want %d (%q)", len(f), len(t.header), header)
			}
			found = true
			continue
		}
		if len(f) < len(t.header) {
			return nil, posErr(line, len(f)+1, "short row: %d fields, want %d (%s missing)", len(f), len(t.header), t.header[len(f)])
		}
		if len(f) > len(t.header) {
			return nil, posErr(line, len(t.header)+1, "long row: %d fields, want %d (%q)", len(f), len(t.header), header)
		}
		if len(t.rows) == maxRows {
			return nil, posErr(line, 1, "more than %d rows: no published table is that long", maxRows)
		}
		t.rows = append(t.rows, row{line: line, fields: f})
	}
	if err := sc.Err(); err != nil {
		return nil, posErr(line+1, 1, "%v", err)
	}
	if !found {
		return nil, posErr(skip+1, 1, "empty: want the header %q", header)
	}
	if len(t.rows) == 0 {
		return nil, posErr(line+1, 1, "a header but no rows")
	}
	return t, nil
}

func splitFields(s string) []string {
	f := strings.Split(s, ",")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

// posErr is ErrBadInput at a line and column.
func posErr(line, col int, format string, args ...any) error {
	return fmt.Errorf("%w: line %d, column %d: %s", ErrBadInput, line, col, fmt.Sprintf(format, args...))
}

// num reads column col (0-based) of r as a finite number in [lo, hi].
func (t *table) num(r row, col int, lo, hi float64) (float64, error) {
	s := r.fields[col]
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, posErr(r.line, col+1, "%s %q is not a number", t.header[col], s)
	}
	if x < lo || x > hi {
		return 0, posErr(r.line, col+1, "%s %s is outside %g..%g", t.header[col], s, lo, hi)
	}
	return x, nil
}

// count reads column col of r as a whole number in [lo, hi].
func (t *table) count(r row, col int, lo, hi int64) (int64, error) {
	x, err := t.num(r, col, float64(lo), float64(hi))
	if err != nil {
		return 0, err
	}
	if x != math.Trunc(x) {
		return 0, posErr(r.line, col+1, "%s %s is not a whole number", t.header[col], r.fields[col])
	}
	return int64(x), nil
}

// oneOf reads column col of r as one of the values allowed.
func (t *table) oneOf(r row, col int, allowed ...string) (string, error) {
	s := r.fields[col]
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", posErr(r.line, col+1, "%s %q: want one of %s", t.header[col], s, strings.Join(allowed, ", "))
}
