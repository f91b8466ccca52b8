// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build linux

package result

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadAllFileStopsOnASilentFIFO: a FIFO whose writer sends one record
// and then nothing, without closing, is read until ctx ends, not forever;
// the record read is kept.
func TestReadAllFileStopsOnASilentFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan struct{})
	writerDone := make(chan struct{})
	defer func() { <-writerDone }()
	go func() {
		defer close(writerDone)
		defer cancel()
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the reader opens
		if err != nil {
			t.Error(err)
			return
		}
		defer w.Close()
		if err := NewWriter(w).Write(flowSample()); err != nil {
			t.Error(err)
			return
		}
		// Once the reader has taken the record out of the pipe (no byte
		// left in it: polled, as no event says so), the writer stays
		// silent and open: the read ends with ctx, and the writer closes
		// only after the reader returned.
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD: bytes in the pipe
			if err != nil {
				t.Errorf("FIONREAD: %v", err)
				return
			}
			if n == 0 {
				break
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
		cancel()
		<-done
	}()
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
	if !errors.Is(err, context.Canceled) || set == nil || len(set.Flow) != 1 {
		t.Errorf("got %d records, %v; want the one record and the context's error", len(set.Flow), err)
	}
}
