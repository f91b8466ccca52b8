// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package sidechannel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rpclab/rpclab/internal/testutil"
)

func TestDownload(t *testing.T) {
	for _, secure := range []bool{false, true} {
		ts := startServer(t, secure)
		cc, c := ts.dial(t)
		for _, size := range []int64{0, 1, 1<<20 + 3} {
			t.Run(fmt.Sprintf("tls=%v/size=%d", secure, size), func(t *testing.T) {
				ctx := testutil.Context(t)
				got, sent, err := download(ctx, cc, c, size)
				if err != nil {
					t.Fatalf("download: %v", err)
				}
				if got != size || sent != size {
					t.Errorf("got %d bytes, the call sent %d, want %d and %d", got, sent, size, size)
				}
			})
		}
	}
}

func TestUpload(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", secure), func(t *testing.T) {
			ts := startServer(t, secure)
			cc, c := ts.dial(t)
			ctx := testutil.Context(t)
			const size = 3<<20 + 5
			var out wrapperspb.Int64Value
			err := c.Do(ctx, func(ctx context.Context) error {
				return cc.Invoke(ctx, uploadMethod, wrapperspb.Int64(0), &out)
			}, func(sc *Conn) error {
				if _, err := io.Copy(sc, io.LimitReader(bytes.NewReader(make([]byte, size)), size)); err != nil {
					return err
				}
				return sc.CloseWrite()
			})
			if err != nil {
				t.Fatalf("upload: %v", err)
			}
			if out.GetValue() != size {
				t.Errorf("got %d bytes received, want %d", out.GetValue(), size)
			}
		})
	}
}

// TestTLSRefusesPlain: a TLS server refuses a sidechannel hello without
// TLS, and a plaintext one refuses TLS: the call never gets the bytes.
func TestTLSMismatch(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(fmt.Sprintf("server-tls=%v", secure), func(t *testing.T) {
			ts := startServer(t, secure, WithExpiry(testutil.DefaultTimeout))
			var opts []Option
			if !secure {
				_, cli := selfSigned(t)
				opts = append(opts, WithTLS(cli))
			}
			c, err := NewClient(ts.addr, append(opts, WithHelloTimeout(testutil.DefaultTimeout/30))...)
			if err != nil {
				t.Fatal(err)
			}
			ctx := testutil.Context(t)
			_, sc, err := c.Open(ctx)
			if err == nil {
				// Plain hello to a TLS server: the server's handshake reads
				// the id as a bad TLS record and closes.
				_, err = sc.Read(make([]byte, 1))
				sc.Close()
			}
			if err == nil {
				t.Fatalf("got no error, want the hello refused")
			}
			// A plaintext server cannot tell a TLS record from an id: it
			// keeps the "id" until it expires. A TLS server refuses at once.
			if got := ts.sc.Pending(); secure && got != 0 {
				t.Errorf("got %d pending, want 0", got)
			}
		})
	}
}

// TestCancelCallClosesSidechannel: cancelling the call mid-transfer closes
// both ends of the sidechannel, and the handler's status says Canceled.
func TestCancelCallClosesSidechannel(t *testing.T) {
	ts := startServer(t, false)
	cc, c := ts.dial(t)
	ctx := testutil.Context(t)
	callCtx, cancel := context.WithCancel(ctx)
	octx, sc, err := c.Open(callCtx)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	done := make(chan error, 1)
	go func() {
		done <- cc.Invoke(octx, downloadMethod, wrapperspb.Int64(1<<40), new(wrapperspb.Int64Value))
	}()
	if _, err := io.ReadFull(sc, make([]byte, 1<<20)); err != nil {
		t.Fatalf("read: %v", err)
	}
	cancel()
	if _, err := io.Copy(io.Discard, sc); err == nil {
		// Either a read error (closed locally) or EOF (closed by the
		// server): both end the copy; only a hang would fail, by deadline.
		t.Log("the server closed first")
	}
	// The cancel closes the client's socket and sends RST_STREAM at once:
	// the server learns of it by whichever arrives first, so its handler
	// ends Canceled or Unavailable (and the call with the handler's status
	// if it beat the cancel). Without the cancel, the download of 1 TiB
	// would run past the test's deadline.
	for _, tc := range []struct {
		name string
		err  error
	}{{"call", <-done}, {"handler", <-ts.files.ended}} {
		if got := status.Code(tc.err); got != codes.Canceled && got != codes.Unavailable {
			t.Errorf("%s: got %v (%v), want %v or %v", tc.name, got, tc.err, codes.Canceled, codes.Unavailable)
		}
	}
}

// TestCloseWithErrorCancelsCall: the client closing its sidechannel with an
// error cancels the call with that cause, and the handler ends.
func TestCloseWithErrorCancelsCall(t *testing.T) {
	ts := startServer(t, false)
	cc, c := ts.dial(t)
	ctx := testutil.Context(t)
	errDisk := errors.New("disk full")
	err := c.Do(ctx, func(ctx context.Context) error {
		err := cc.Invoke(ctx, downloadMethod, wrapperspb.Int64(1<<40), new(wrapperspb.Int64Value))
		if cause := context.Cause(ctx); !errors.Is(cause, errDisk) {
			t.Errorf("cause: got %v, want %v", cause, errDisk)
		}
		return err
	}, func(sc *Conn) error {
		if _, err := io.ReadFull(sc, make([]byte, 1<<20)); err != nil {
			return err
		}
		return errDisk
	})
	if got := status.Code(err); got != codes.Canceled || !errors.Is(err, errDisk) {
		t.Errorf("call: got %v (%v), want %v wrapping %v", got, err, codes.Canceled, errDisk)
	}
	if herr := <-ts.files.ended; herr == nil {
		t.Errorf("handler: got nil, want an error")
	}
}

// TestDeadlineFlows: the call's deadline bounds the server's writes to a
// client that does not read, and the call ends DeadlineExceeded.
func TestDeadlineFlows(t *testing.T) {
	ts := startServer(t, false, WithWriteTimeout(0))
	cc, c := ts.dial(t)
	ctx, cancel := context.WithTimeout(testutil.Context(t), testutil.DefaultTimeout/60)
	defer cancel()
	octx, sc, err := c.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	err = cc.Invoke(octx, downloadMethod, wrapperspb.Int64(1<<40), new(wrapperspb.Int64Value))
	if got := status.Code(err); got != codes.DeadlineExceeded {
		t.Errorf("call: got %v (%v), want %v", got, err, codes.DeadlineExceeded)
	}
	// The server's deadline and the client's RST_STREAM race: either ends
	// the handler.
	if got := status.Code(<-ts.files.ended); got != codes.DeadlineExceeded && got != codes.Canceled {
		t.Errorf("handler: got %v, want %v or %v", got, codes.DeadlineExceeded, codes.Canceled)
	}
}

func TestStatusError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{nil, codes.OK},
		{ErrExpired, codes.FailedPrecondition},
		{fmt.Errorf("x: %w", context.Canceled), codes.Canceled},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), codes.DeadlineExceeded},
		{io.ErrUnexpectedEOF, codes.Unavailable},
	} {
		if got := status.Code(StatusError(tc.err)); got != tc.want {
			t.Errorf("StatusError(%v): got %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{"hello", WithHelloTimeout(0)},
		{"expiry", WithExpiry(-1)},
		{"write", WithWriteTimeout(-1)},
		{"pending", WithMaxPending(0)},
		{"handshakes", WithMaxHandshakes(0)},
		{"clock", WithClock(nil)},
		{"dialer", WithDialer(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewClient("127.0.0.1:1", tc.opt); !errors.Is(err, ErrInvalidOption) {
				t.Errorf("got %v, want %v", err, ErrInvalidOption)
			}
		})
	}
	if _, err := NewClient("no-port"); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("address without port: got %v, want %v", err, ErrInvalidOption)
	}
}

// TestAllocsPerCall: a sidechannel download allocates O(1) per call: the
// bytes allocated (server and client, this whole process) for 64 MiB are
// at most 1.25 times those for 1 MiB; the bytes themselves are never
// copied into new memory.
func TestAllocsPerCall(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race sync.Pool drops buffers on purpose")
	}
	ts := startServer(t, false)
	cc, c := ts.dial(t)
	ctx := testutil.Context(t)
	go func() {
		for range ts.files.ended {
		}
	}()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	alloc := func(size int64) uint64 {
		var runs [3]uint64
		for i := range runs {
			var a, b runtime.MemStats
			runtime.ReadMemStats(&a)
			if _, _, err := download(ctx, cc, c, size); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&b)
			runs[i] = b.TotalAlloc - a.TotalAlloc
		}
		slices.Sort(runs[:])
		return runs[1]
	}
	alloc(1 << 20) // warm up
	small, large := alloc(1<<20), alloc(64<<20)
	t.Logf("bytes allocated per call: %d for 1 MiB, %d for 64 MiB", small, large)
	if large > small+small/4 {
		t.Errorf("64 MiB: got %d bytes allocated, want at most 1.25x the %d of 1 MiB", large, small)
	}
}
