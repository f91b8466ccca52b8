// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build unix

package result

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadAllFileStopsOnASilentFIFO: a FIFO whose writer sends one record
// and then nothing, without closing, is read until ctx ends, not forever;
// the record read is kept.
func TestReadAllFileStopsOnASilentFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	writerDone := make(chan struct{})
	defer func() { <-writerDone }()
	go func() {
		defer close(writerDone)
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the reader opens
		if err != nil {
			t.Error(err)
			return
		}
		defer w.Close()
		if err := NewWriter(w).Write(flowSample()); err != nil {
			t.Error(err)
		}
		time.Sleep(300 * time.Millisecond) // silent, open: the reader must not wait for it
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	var set *Set
	var err error
	go func() {
		set, err = ReadAllFile(ctx, fifo)
		close(done)
	}()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatal("ReadAllFile still blocked 10s after its context ended")
	}
	if !errors.Is(err, context.DeadlineExceeded) || len(set.Flow) != 1 {
		t.Errorf("got %d records, %v; want the one record and the context's error", len(set.Flow), err)
	}
}
