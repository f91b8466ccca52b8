// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build linux

package limitread

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestOpenFileFIFO: a FIFO opened to read waits for its writer, however
// late, and gives its bytes; with no writer it ends when ctx ends. One
// opened to write with no reader is refused at once; with a reader it is
// written. Devices open as before.
func TestOpenFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx := testutil.Context(t)

	// No writer: ends with ctx.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if f, err := OpenFile(cctx, fifo, os.O_RDONLY, 0); !errors.Is(err, ErrNoWriter) || !errors.Is(err, context.Canceled) {
		t.Errorf("read, no writer: got %v, %v; want ErrNoWriter and the context's error", f, err)
	}
	// No reader: refused at once when ctx never ends, else when it ends.
	if f, err := OpenFile(context.Background(), fifo, os.O_WRONLY, 0); !errors.Is(err, ErrNoReader) {
		t.Errorf("write, no reader, no deadline: got %v, %v; want ErrNoReader", f, err)
	}
	if f, err := OpenFile(cctx, fifo, os.O_WRONLY, 0); !errors.Is(err, ErrNoReader) || !errors.Is(err, context.Canceled) {
		t.Errorf("write, no reader: got %v, %v; want ErrNoReader and the context's error", f, err)
	}
	// A reader and a writer, in either order: the bytes go through.
	got := make(chan string, 1)
	go func() {
		b, err := ReadFileContext(ctx, fifo, 64)
		if err != nil {
			t.Error(err)
		}
		got <- string(b)
	}()
	w, err := OpenFile(ctx, fifo, os.O_WRONLY, 0) // waits for the reader
	if err != nil {
		t.Fatalf("write with a reader coming: %v", err)
	}
	if _, err := io.WriteString(w, "hello"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if s := <-got; s != "hello" {
		t.Errorf("read: got %q, want hello", s)
	}
	for _, dev := range []string{"/dev/null", "/dev/full"} {
		f, err := OpenFile(ctx, dev, os.O_WRONLY, 0)
		if err != nil {
			t.Errorf("%s: %v, want it opened", dev, err)
			continue
		}
		f.Close()
	}
}
