// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package limitread reads the files a user names (a request, .proto files,
// a protoset, a CA certificate, another tool's output) with a stated size
// limit: a file past it, or a device that never ends (/dev/zero), is a
// clear error after at most the limit is read, never a read that grows
// until the kernel ends the process. Each caller states its limit beside
// its flag. Records files are not read here: package result streams them
// line by line, each line capped (result.MaxLineBytes).
//
// OpenFile is the one open of every path rpclab reads or writes that a
// user names: a FIFO never blocks it past its context (the open waits for
// the other end until the context ends), where os.OpenFile would block in
// open(2), out of reach of any cancellation.
package limitread

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// ErrNoReader is wrapped by OpenFile's error for a FIFO opened to write
// that no process read before the context ended (at once for a context
// that never ends).
var ErrNoReader = errors.New("a FIFO that no process reads (start its reader first)")

// ErrNoWriter is wrapped by OpenFile's error for a FIFO opened to read
// whose writer did not come before the context ended.
var ErrNoWriter = errors.New("a FIFO that no process writes")

// OpenFile opens path as os.OpenFile does, but never blocks past ctx: a
// regular file, a device or a path to create is opened as it is; a FIFO
// waits for the process at its other end until ctx ends, then is an error
// wrapping ErrNoWriter or ErrNoReader and ctx's cause. A ctx that never
// ends (context.Background) does not wait: a FIFO opened to write with no
// reader is refused at once (ErrNoReader); one opened to read waits for
// its writer, as a read of it would. A FIFO's file is in the runtime's
// poller, so closing it ends a read or write blocked on it.
func OpenFile(ctx context.Context, path string, flag int, perm os.FileMode) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return os.OpenFile(path, flag, perm)
	}
	var (
		missing error // what waits at the other end
		wake    int   // how to open the other end without blocking
	)
	switch flag & syscall.O_ACCMODE {
	case os.O_RDWR: // never waits: the opener is its own partner
		return os.OpenFile(path, flag, perm)
	case os.O_WRONLY:
		f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, perm)
		if !errors.Is(err, syscall.ENXIO) {
			return f, err
		}
		if ctx.Done() == nil {
			return nil, fmt.Errorf("open %s: %w", path, ErrNoReader)
		}
		missing, wake = ErrNoReader, os.O_RDONLY
	default:
		missing, wake = ErrNoWriter, os.O_WRONLY
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(path, flag, perm) // blocks until the other end opens
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
	}
	wakeOpen(path, wake, done)
	return nil, fmt.Errorf("open %s: %w: stopped waiting: %w", path, missing, context.Cause(ctx))
}

// wakeTries bounds how long wakeOpen tries to open a FIFO's other end: the
// waiting open reaches open(2) within a scheduling delay, and a process
// without the right to open the other end never will.
const (
	wakeTries = 200
	wakeEvery = 5 * time.Millisecond
)

// wakeOpen ends an open of a FIFO blocked in a goroutine (its result comes
// on done): it opens the other end without blocking (the waiting open
// counts as its partner) and holds it until the waiting open returns, then
// closes both. Opening a write end without blocking fails (ENXIO) until the
// waiting reader is inside open(2), which the goroutine may not have
// reached yet, so that open is retried, every wakeEvery, at most wakeTries
// times; no fixed wait could tell when a goroutine has reached a system
// call. Past that, the waiting open is left to its partner, if one comes,
// and its file is closed then.
func wakeOpen(path string, wake int, done <-chan opened) {
	tick := time.NewTicker(wakeEvery)
	defer tick.Stop()
	for range wakeTries {
		if w, err := os.OpenFile(path, wake|syscall.O_NONBLOCK, 0); err == nil {
			o := <-done // returns once it has its partner
			w.Close()
			o.close()
			return
		}
		select {
		case o := <-done:
			o.close()
			return
		case <-tick.C:
		}
	}
	go func() { (<-done).close() }()
}

// opened is an open's result.
type opened struct {
	f   *os.File
	err error
}

// close closes o's file, if it has one.
func (o opened) close() {
	if o.f != nil {
		o.f.Close()
	}
}

// ErrTooLarge is wrapped by the error of a file longer than its limit.
var ErrTooLarge = errors.New("larger than its limit")

// ReadFile reads the file at path whole, if it holds at most limit bytes.
// A longer file (checked first by its size when it is a regular file) is
// an error wrapping ErrTooLarge, naming the file and the limit.
func ReadFile(path string, limit int64) ([]byte, error) {
	return ReadFileContext(context.Background(), path, limit)
}

// ReadFileContext is ReadFile that stops waiting for a FIFO's writer when
// ctx ends (OpenFile), and stops reading a FIFO or pipe that goes silent
// when ctx ends.
func ReadFileContext(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := OpenFile(ctx, path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("limitread: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	stop := context.AfterFunc(ctx, func() { f.Close() }) // ends a read blocked on a silent pipe
	defer stop()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		}
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
	f, err := OpenFile(context.Background(), path, os.O_RDONLY, 0)
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
