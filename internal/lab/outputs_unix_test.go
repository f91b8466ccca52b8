// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build unix

package lab

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestWriteFileThroughLinksAndDevices: a symlink stays a link to the file
// now written, and a FIFO (as /dev/null or /dev/stdout would) is written
// into, not replaced by a regular file.
func TestWriteFileThroughLinksAndDevices(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.csv")
	link := filepath.Join(dir, "link.csv")
	if err := os.WriteFile(target, []byte("before\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, func(w io.Writer) error { _, err := io.WriteString(w, "after\n"); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(link)
	if err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is now %v (%v), want a symlink", st.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "after\n" {
		t.Errorf("the target holds %q, want %q", b, "after\n")
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o600 {
		t.Errorf("the target's mode is %v, want 0600 kept", st.Mode().Perm())
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	// Its reader may open after the writer: WriteFileContext waits for it.
	if err := WriteFileContext(testutil.Context(t), fifo, func(w io.Writer) error { _, err := io.WriteString(w, "piped\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if b := <-got; b != "piped\n" {
		t.Errorf("the FIFO's reader got %q, want %q", b, "piped\n")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v (%v), want a named pipe", st.Mode(), err)
	}
}
