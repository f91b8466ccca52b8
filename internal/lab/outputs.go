// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/rpclab/rpclab/internal/limitread"
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
	// Keep marks a file of records. Any existing, non-empty output file
	// is kept (an error wrapping ErrExists) unless overwriting is forced;
	// an output without Keep (a CSV, an HTML report) never replaces a
	// records file, even forced (ErrRecordsFile).
	Keep bool
	// Open asks New to create the file; Session.File returns it.
	Open bool
}

// CheckOutputs checks, before any work, that every output can be written
// without destroying something: none is one of inputs or another output
// (same cleaned path, or os.SameFile, so ./f, a symlink or a hard link to
// f is f), a file that exists and is not empty is refused unless force,
// an output without Keep never replaces a records file (one whose first
// line is an rpclab record), a file's folder takes new files (or the
// existing file can be written), a Dir is created and takes new files. The
// error is an *OutputError naming the first output that fails. Nothing is
// written or emptied; nothing is left behind but the folders created.
// Commands register every file they read (--data-file, --proto, a report's
// records) as inputs.
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
	case err == nil && st.Mode()&os.ModeNamedPipe != 0:
		// Opening a FIFO could block, and closing it would end its
		// reader's stream: only the right to write is checked here; the
		// open (limitread.OpenFile) refuses one that no process reads.
		return unix.Access(o.Path, unix.W_OK)
	case err == nil:
		if !o.Keep && st.Mode().IsRegular() && isRecords(o.Path) {
			return ErrRecordsFile
		}
		if !force && st.Mode().IsRegular() && st.Size() > 0 {
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

// isRecords reports whether the file at path starts as a records file
// does: a JSON object whose first key is "schema_version" (every rpclab
// writer, in every language, puts it first), after any blank space.
func isRecords(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	head = bytes.TrimLeft(head[:n], " \t\r\n")
	return bytes.HasPrefix(head, []byte("{")) && bytes.HasPrefix(bytes.TrimLeft(head[1:], " \t\r\n"), []byte(`"schema_version"`))
}

// WriteFile writes a whole output (a CSV, an HTML report, a chart) with
// write, into a temporary file beside path that is renamed over it only
// when write succeeded: a run that fails or is stopped before its output
// is written leaves an existing file as it was (CheckOutputs has refused
// one unless forced). A symlink is followed (the file it names is
// replaced, the link kept); a path that is not a regular file (/dev/null,
// /dev/stdout, a FIFO) is written directly, never replaced. It is how
// every output that is not a records file (those are appended to as steps
// end) is written.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	return WriteFileContext(context.Background(), path, write)
}

// WriteFileContext is WriteFile that waits for a FIFO's reader until ctx
// ends (WriteFile refuses a FIFO that no process reads at once).
func WriteFileContext(ctx context.Context, path string, write func(io.Writer) error) (err error) {
	mode := os.FileMode(0o644)
	if st, serr := os.Stat(path); serr == nil {
		if !st.Mode().IsRegular() {
			return writeDirect(ctx, path, write)
		}
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return fmt.Errorf("lab: %w", err)
		}
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".rpclab-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lab: write %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("lab: write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	return nil
}

// writeDirect writes to a path that is not a regular file (a device, a
// FIFO), which renaming would replace. A FIFO that no process reads is
// waited for until ctx ends (limitread.ErrNoReader), never an open that
// cannot be stopped.
func writeDirect(ctx context.Context, path string, write func(io.Writer) error) error {
	f, err := limitread.OpenFile(ctx, path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("lab: write %s: %w", path, err)
	}
	return f.Close()
}
