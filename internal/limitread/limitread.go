// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package limitread reads the files a user names (a request, .proto files,
// a protoset, a CA certificate, another tool's output) with a stated size
// limit: a file past it, or a device that never ends (/dev/zero), is a
// clear error after at most the limit is read, never a read that grows
// until the kernel ends the process. Each caller states its limit beside
// its flag. Records files are not read here: package result streams them
// line by line, each line capped (result.MaxLineBytes).
package limitread

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is wrapped by the error of a file longer than its limit.
var ErrTooLarge = errors.New("larger than its limit")

// ReadFile reads the file at path whole, if it holds at most limit bytes.
// A longer file (checked first by its size when it is a regular file) is
// an error wrapping ErrTooLarge, naming the file and the limit.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("limitread: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("limitread: %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(path, limit)
	}
	return b, nil
}

// Open opens the file at path for a reader that gives at most limit bytes
// and then, if the file goes on, an error wrapping ErrTooLarge (for a
// parser that reads a file itself, such as a .proto compiler).
func Open(path string, limit int64) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("limitread: %w", err)
	}
	return &limited{f: f, path: path, left: limit, limit: limit}, nil
}

type limited struct {
	f     *os.File
	path  string
	left  int64
	limit int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more tells a file that ends at the limit from a longer one.
		var one [1]byte
		if n, _ := l.f.Read(one[:]); n > 0 {
			return 0, tooLarge(l.path, l.limit)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.f.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limited) Close() error { return l.f.Close() }

func tooLarge(path string, limit int64) error {
	return fmt.Errorf("limitread: %s: %w of %s (is it the right file?)", path, ErrTooLarge, FormatLimit(limit))
}

// FormatLimit spells a limit for people: "64 MiB", "1 GiB", or bytes.
func FormatLimit(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
