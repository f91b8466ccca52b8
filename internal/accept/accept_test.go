// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package accept

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/rpclab/rpclab/internal/testutil"
)

// failing fails its first n Accepts with err, then accepts.
type failing struct {
	net.Listener
	n   int
	err error
}

func (f *failing) Accept() (net.Conn, error) {
	if f.n > 0 {
		f.n--
		return nil, f.err
	}
	return f.Listener.Accept()
}

func TestNext(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fails   int
		err     error
		retries int
		wantErr error
	}{
		{"no error", 0, nil, 0, nil},
		{"too many open files once", 1, syscall.EMFILE, 1, nil},
		{"three aborted connections", 3, &net.OpError{Op: "accept", Err: syscall.ECONNABORTED}, 3, nil},
		{"closed", 1, net.ErrClosed, 0, net.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testutil.Context(t)
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer lis.Close()
			go func() {
				var d net.Dialer
				if c, err := d.DialContext(ctx, "tcp", lis.Addr().String()); err == nil {
					<-ctx.Done()
					c.Close()
				}
			}()
			retries := 0
			c, err := Next(&failing{Listener: lis, n: tc.fails, err: tc.err}, ctx.Done(), func(error) { retries++ })
			if !errors.Is(err, tc.wantErr) || retries != tc.retries {
				t.Errorf("got %v after %d retries, want %v after %d", err, retries, tc.wantErr, tc.retries)
			}
			if c != nil {
				c.Close()
			}
		})
	}
}

// TestNextStopsWhenDone: a listener that keeps failing ends when done
// closes.
func TestNextStopsWhenDone(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	done := make(chan struct{})
	_, err = Next(&failing{Listener: lis, n: 1 << 30, err: syscall.EMFILE}, done, func(error) {
		select {
		case <-done:
		default:
			close(done)
		}
	})
	if !errors.Is(err, net.ErrClosed) {
		t.Errorf("got %v, want net.ErrClosed", err)
	}
}
