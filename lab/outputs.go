// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Output is a file or folder a command writes.
type Output struct {
	// Name is the caller's name for it (the CLI gives its flag), used in
	// errors.
	Name string
	// Path is the file or folder; "" means no output.
	Path string
	// Dir marks a folder: it is created, and must take new files.
	Dir bool
	// Keep marks a file of records: an existing, non-empty one is kept
	// (an error wrapping ErrExists) unless overwriting is forced.
	Keep bool
	// Open asks New to create the file; Session.File returns it.
	Open bool
}

// CheckOutputs checks, before any work, that every output can be written
// without destroying something: none is one of inputs or another output
// (same cleaned path, or os.SameFile), a Keep file that exists and is not
// empty is refused unless force, a file's folder takes new files (or the
// existing file can be written), a Dir is created and takes new files. The
// error is an *OutputError naming the first output that fails. Nothing is
// left behind but the folders created.
func CheckOutputs(inputs []string, force bool, outs ...Output) error {
	type seen struct{ name, path string }
	var before []seen
	for _, in := range inputs {
		before = append(before, seen{"the input", in})
	}
	for _, o := range outs {
		if o.Path == "" {
			continue
		}
		for _, b := range before {
			if samePath(o.Path, b.path) {
				return &OutputError{o.Name, o.Path, fmt.Errorf("%w as %s %s: refusing to overwrite it", ErrSameFile, b.name, b.path)}
			}
		}
		before = append(before, seen{o.Name, o.Path})
		if err := writable(o, force); err != nil {
			return &OutputError{o.Name, o.Path, err}
		}
	}
	return nil
}

// samePath tells whether a and b name one file: the same cleaned absolute
// path, or (both existing) the same file by os.SameFile.
func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// writable checks that o can be written, creating a Dir.
func writable(o Output, force bool) error {
	if o.Dir {
		if err := os.MkdirAll(o.Path, 0o755); err != nil {
			return err
		}
		f, err := os.CreateTemp(o.Path, ".rpclab-probe-*")
		if err != nil {
			return fmt.Errorf("cannot write in it: %w", err)
		}
		f.Close()
		return os.Remove(f.Name())
	}
	st, err := os.Stat(o.Path)
	switch {
	case err == nil && st.IsDir():
		return errors.New("is a folder, want a file")
	case err == nil:
		if o.Keep && !force && st.Size() > 0 {
			return ErrExists
		}
		f, err := os.OpenFile(o.Path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case errors.Is(err, os.ErrNotExist):
		f, err := os.OpenFile(o.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		f.Close()
		return os.Remove(o.Path)
	default:
		return err
	}
}
