// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
)

// useFakeClock makes the package's clock a testutil.FakeClock at t0 for
// the test.
func useFakeClock(t *testing.T) *testutil.FakeClock {
	t.Helper()
	fc := testutil.NewFakeClock(t0)
	oldNow, oldUntil := now, sleepUntil
	now = fc.Now
	sleepUntil = func(_ *waker, t time.Time) { fc.SleepUntil(t) }
	t.Cleanup(func() { now, sleepUntil = oldNow, oldUntil })
	return fc
}

func TestPipeDeliversAtScheduledTimes(t *testing.T) {
	fc := useFakeClock(t)
	// 50 µs delay and 8 Mbit/s (a byte per µs).
	p := newPipe(Link{Delay: 50 * time.Microsecond, RateBps: 8e6}.Effects(1), 1<<20)
	mustWrite(t, p, bytes.Repeat([]byte{'a'}, 100)) // t=0: due 150
	fc.Advance(10 * time.Microsecond)
	mustWrite(t, p, bytes.Repeat([]byte{'b'}, 100)) // t=10: line free at 100, due 250

	tests := []struct {
		want   byte
		wantAt time.Time
	}{
		{'a', us(150)},
		{'b', us(250)},
	}
	for _, tc := range tests {
		buf := make([]byte, 1000)
		n, err := p.Read(buf)
		if err != nil || n != 100 {
			t.Fatalf("Read = %d, %v; want 100, nil", n, err)
		}
		if !bytes.Equal(buf[:n], bytes.Repeat([]byte{tc.want}, 100)) {
			t.Fatalf("got %q..., want 100 x %q", buf[:4], tc.want)
		}
		if got := fc.Now(); !got.Equal(tc.wantAt) {
			t.Errorf("read %q at %v, want %v", tc.want, got.Sub(t0), tc.wantAt.Sub(t0))
		}
	}
	if got, want := fc.Sleeps(), []time.Time{us(150), us(250)}; !equalTimes(got, want) {
		t.Errorf("got sleeps %v, want %v", since(got), since(want))
	}
}

func TestPipeLongDelaySleepsInSlices(t *testing.T) {
	fc := useFakeClock(t)
	p := newPipe(Link{Delay: 16 * time.Millisecond}.Effects(1), 1<<20)
	mustWrite(t, p, []byte("x"))
	buf := make([]byte, 8)
	if n, err := p.Read(buf); err != nil || n != 1 {
		t.Fatalf("Read = %d, %v", n, err)
	}
	if got, want := fc.Now(), t0.Add(16*time.Millisecond); !got.Equal(want) {
		t.Errorf("read at %v, want %v", got.Sub(t0), want.Sub(t0))
	}
	// 16 ms: 5 ms slices (to notice Close), the last one to the due time.
	want := []time.Time{us(5000), us(10000), us(15000), us(16000)}
	if !equalTimes(fc.Sleeps(), want) {
		t.Errorf("got sleeps %v, want %v", since(fc.Sleeps()), since(want))
	}
}

func TestPipeReadGathersDueChunksInOrder(t *testing.T) {
	fc := useFakeClock(t)
	p := newPipe(Link{Delay: time.Millisecond}.Effects(1), 1<<20)
	for i := 0; i < 5; i++ {
		mustWrite(t, p, []byte{byte('0' + i)})
		fc.Advance(100 * time.Microsecond)
	}
	fc.Advance(2 * time.Millisecond) // every chunk is due: no sleep
	buf := make([]byte, 3)
	var got []byte
	for len(got) < 5 {
		n, err := p.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "01234" {
		t.Errorf("got %q, want %q", got, "01234")
	}
	if len(fc.Sleeps()) != 0 {
		t.Errorf("got sleeps %v, want none", since(fc.Sleeps()))
	}
}

func TestPipeWriteToRespectsTimes(t *testing.T) {
	fc := useFakeClock(t)
	p := newPipe(Link{Delay: 200 * time.Microsecond}.Effects(1), 1<<20)
	mustWrite(t, p, []byte("ab"))
	fc.Advance(50 * time.Microsecond)
	mustWrite(t, p, []byte("cd"))
	p.closeWrite(nil)
	var w timedWriter
	w.clock = fc
	if _, err := p.WriteTo(&w); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	if got := w.buf.String(); got != "abcd" {
		t.Errorf("got %q, want %q", got, "abcd")
	}
	if want := []time.Time{us(200), us(250)}; !equalTimes(w.at, want) {
		t.Errorf("got writes at %v, want %v", since(w.at), since(want))
	}
}

func TestPipeCloseAndErrors(t *testing.T) {
	useFakeClock(t)
	p := newPipe(nil, 1<<20)
	mustWrite(t, p, []byte("last words"))
	p.closeWrite(nil)
	got, err := io.ReadAll(p)
	if err != nil || string(got) != "last words" {
		t.Fatalf("ReadAll = %q, %v; want the queued bytes then EOF", got, err)
	}
	if _, err := p.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after closeWrite: got %v, want net.ErrClosed", err)
	}

	q := newPipe(nil, 1<<20)
	mustWrite(t, q, []byte("dropped"))
	q.closeRead()
	if _, err := q.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after closeRead: got %v, want net.ErrClosed", err)
	}
	if _, err := q.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after closeRead: got %v, want net.ErrClosed", err)
	}
}

func TestPipeFullQueueBlocksWriter(t *testing.T) {
	p := newPipe(nil, smallBuf) // room for one small chunk
	mustWrite(t, p, []byte("first"))
	done := make(chan error, 1)
	go func() {
		_, err := p.Write([]byte("second"))
		done <- err
	}()
	buf := make([]byte, 16)
	n, err := p.Read(buf)
	if err != nil || string(buf[:n]) != "first" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	if err := <-done; err != nil {
		t.Fatalf("blocked Write: %v", err)
	}
	n, err = p.Read(buf)
	if err != nil || string(buf[:n]) != "second" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	// A write deadline frees a writer stuck on a full queue.
	mustWrite(t, newPipe(nil, 1), []byte("fits: a queue always takes one chunk"))
	full := newPipe(nil, 1)
	mustWrite(t, full, []byte("a"))
	full.setDeadline(time.Now().Add(time.Millisecond), false)
	if _, err := full.Write([]byte("b")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Write on a full queue past its deadline: got %v, want deadline exceeded", err)
	}
}

func TestPipeReadDeadline(t *testing.T) {
	p := newPipe(nil, 1<<20)
	p.setDeadline(time.Now().Add(time.Millisecond), true)
	if _, err := p.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read on an empty pipe past its deadline: got %v, want deadline exceeded", err)
	}
	p.setDeadline(time.Time{}, true)
	mustWrite(t, p, []byte("ok"))
	if n, err := p.Read(make([]byte, 4)); err != nil || n != 2 {
		t.Fatalf("Read after clearing the deadline = %d, %v", n, err)
	}
}

func mustWrite(t *testing.T, w io.Writer, b []byte) {
	t.Helper()
	if n, err := w.Write(b); err != nil || n != len(b) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(b))
	}
}

type timedWriter struct {
	clock *testutil.FakeClock
	buf   bytes.Buffer
	at    []time.Time
}

func (w *timedWriter) Write(b []byte) (int, error) {
	w.at = append(w.at, w.clock.Now())
	return w.buf.Write(b)
}

func equalTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

func since(ts []time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(t0)
	}
	return out
}
