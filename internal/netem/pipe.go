// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultQueueBytes is how many bytes one direction of a link holds in
// flight (written, not yet delivered) before writers block. A link holding
// L bytes per one-way delay D passes at most L/D bytes per second, much as
// a TCP window of 2L does over a round trip of 2D.
const DefaultQueueBytes = 16 << 20

// Buffer sizes: small writes (gRPC's frames, pings) take small buffers so
// a queue of many small chunks does not pin 32 KiB each.
const (
	smallBuf = 2 << 10
	bigBuf   = 32 << 10
)

var (
	smallPool = sync.Pool{New: func() any { b := make([]byte, smallBuf); return &b }}
	bigPool   = sync.Pool{New: func() any { b := make([]byte, bigBuf); return &b }}
)

func getBuf(n int) *[]byte {
	if n <= smallBuf {
		return smallPool.Get().(*[]byte)
	}
	return bigPool.Get().(*[]byte)
}

func putBuf(b *[]byte) {
	if cap(*b) == smallBuf {
		smallPool.Put(b)
	} else {
		bigPool.Put(b)
	}
}

// maxSlice bounds each wait of a reader so that Close and deadline changes
// are noticed within it.
const maxSlice = 5 * time.Millisecond

// chunk is bytes written together, due at at.
type chunk struct {
	buf *[]byte
	b   []byte // the part of *buf not yet read
	at  time.Time
}

// pipe is one direction of a link: an in-memory pipe whose bytes come out
// in the order they went in, each chunk no earlier than the time the link's
// effects give it. Writers block only when the queue is full; readers wait
// for each chunk's time.
type pipe struct {
	mu      sync.Mutex
	cond    sync.Cond
	q       []chunk
	mem     int // buffer bytes held by q
	limit   int
	effects []Effect
	last    time.Time

	werr    error       // the writing side is done: io.EOF or its error
	rerr    error       // the reading side is closed: writes fail with it
	rclosed atomic.Bool // rerr != nil, readable without the lock

	rdl, wdl       time.Time
	rtimer, wtimer *time.Timer

	// count, if set, is added the bytes WriteTo delivers.
	count *atomic.Int64

	wmu   sync.Mutex
	waker *waker // created at the first wait, closed by closeRead
}

func newPipe(effects []Effect, limit int) *pipe {
	if limit <= 0 {
		limit = DefaultQueueBytes
	}
	p := &pipe{effects: effects, limit: limit}
	p.cond.L = &p.mu
	return p
}

func expired(dl time.Time) bool { return !dl.IsZero() && !now().Before(dl) }

// waitRoom blocks until the queue has room. Called with p.mu held.
func (p *pipe) waitRoom() error {
	for {
		switch {
		case p.rerr != nil:
			return p.rerr
		case p.werr != nil:
			return net.ErrClosed
		case expired(p.wdl):
			return os.ErrDeadlineExceeded
		case p.mem < p.limit:
			return nil
		}
		p.cond.Wait()
	}
}

// push queues b[:n] (b from getBuf), stamped now. Called with p.mu held.
func (p *pipe) push(b *[]byte, n int) {
	t := now()
	at := schedule(p.effects, t, p.last, n)
	p.last = at
	p.q = append(p.q, chunk{buf: b, b: (*b)[:n], at: at})
	p.mem += cap(*b)
	p.cond.Broadcast()
}

// Write queues a copy of b. It blocks only while the queue is full.
func (p *pipe) Write(b []byte) (int, error) {
	var total int
	for len(b) > 0 {
		n := min(len(b), bigBuf)
		buf := getBuf(n)
		copy(*buf, b[:n])
		p.mu.Lock()
		if err := p.waitRoom(); err != nil {
			p.mu.Unlock()
			putBuf(buf)
			return total, err
		}
		p.push(buf, n)
		p.mu.Unlock()
		total += n
		b = b[n:]
	}
	return total, nil
}

// ReadFrom queues everything read from r, reading straight into the queue's
// buffers and only while the queue has room, until r fails or ends. It
// returns nil at io.EOF. It does not close the pipe.
func (p *pipe) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		p.mu.Lock()
		err := p.waitRoom()
		p.mu.Unlock()
		if err != nil {
			return total, err
		}
		buf := getBuf(bigBuf)
		n, rerr := r.Read(*buf)
		if n > 0 {
			p.mu.Lock()
			if p.rerr != nil {
				p.mu.Unlock()
				putBuf(buf)
				return total, p.rerr
			}
			p.push(buf, n)
			p.mu.Unlock()
			total += int64(n)
		} else {
			putBuf(buf)
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
}

// waitHead blocks until the queue has a chunk and returns its time, or
// returns the writing side's error (io.EOF) once the queue is drained.
// Called with p.mu held.
func (p *pipe) waitHead() (time.Time, error) {
	for {
		switch {
		case p.rerr != nil:
			return time.Time{}, p.rerr
		case expired(p.rdl):
			return time.Time{}, os.ErrDeadlineExceeded
		case len(p.q) > 0:
			return p.q[0].at, nil
		case p.werr != nil:
			return time.Time{}, p.werr
		}
		p.cond.Wait()
	}
}

// waitUntil sleeps until at: in slices of maxSlice while far away, then
// precisely. It stops early if the pipe is closed for reading or the read
// deadline passes.
func (p *pipe) waitUntil(at time.Time) error {
	for {
		if p.rclosed.Load() {
			return net.ErrClosed
		}
		t := now()
		if !at.After(t) {
			return nil
		}
		p.mu.Lock()
		dl := p.rdl
		p.mu.Unlock()
		if !dl.IsZero() && !t.Before(dl) {
			return os.ErrDeadlineExceeded
		}
		target := at
		if !dl.IsZero() && dl.Before(target) {
			target = dl
		}
		if target.Sub(t) > maxSlice {
			target = t.Add(maxSlice)
		}
		w := p.getWaker()
		if w == nil {
			return net.ErrClosed
		}
		sleepUntil(w, target)
	}
}

func (p *pipe) getWaker() *waker {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.waker == nil && !p.rclosed.Load() {
		p.waker = newWaker()
	}
	return p.waker
}

// popInto copies due bytes into b. Called with p.mu held.
func (p *pipe) popInto(b []byte) int {
	t := now()
	var n int
	for len(p.q) > 0 && n < len(b) && !p.q[0].at.After(t) {
		c := &p.q[0]
		k := copy(b[n:], c.b)
		n += k
		c.b = c.b[k:]
		if len(c.b) == 0 {
			p.dropHead()
		}
	}
	if n > 0 {
		p.cond.Broadcast()
	}
	return n
}

func (p *pipe) dropHead() {
	p.mem -= cap(*p.q[0].buf)
	putBuf(p.q[0].buf)
	p.q[0] = chunk{}
	p.q = p.q[1:]
	if len(p.q) == 0 {
		p.q = p.q[:0:0] // let the backing array go once drained
	}
}

// Read copies due bytes into b, waiting for the first to be due.
func (p *pipe) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		p.mu.Lock()
		at, err := p.waitHead()
		p.mu.Unlock()
		if err != nil {
			return 0, err
		}
		if err := p.waitUntil(at); err != nil {
			return 0, err
		}
		p.mu.Lock()
		n := p.popInto(b)
		p.mu.Unlock()
		if n > 0 {
			return n, nil
		}
	}
}

// WriteTo writes each chunk to w when it is due, several due chunks in one
// writev, until the writing side closes (it returns nil after io.EOF) or w
// fails.
func (p *pipe) WriteTo(w io.Writer) (int64, error) {
	var total int64
	var bufs net.Buffers
	var held []*[]byte
	for {
		p.mu.Lock()
		at, err := p.waitHead()
		p.mu.Unlock()
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		if err := p.waitUntil(at); err != nil {
			return total, err
		}
		p.mu.Lock()
		t := now()
		bufs, held = bufs[:0], held[:0]
		for len(p.q) > 0 && !p.q[0].at.After(t) && len(bufs) < 64 {
			c := p.q[0]
			bufs = append(bufs, c.b)
			held = append(held, c.buf)
			p.mem -= cap(*c.buf)
			p.q[0] = chunk{}
			p.q = p.q[1:]
		}
		if len(p.q) == 0 {
			p.q = p.q[:0:0]
		}
		p.cond.Broadcast()
		p.mu.Unlock()
		wbufs := bufs // WriteTo consumes its receiver
		n, werr := wbufs.WriteTo(w)
		total += n
		if p.count != nil {
			p.count.Add(n)
		}
		for _, b := range held {
			putBuf(b)
		}
		if werr != nil {
			return total, werr
		}
	}
}

// closeWrite ends the writing side: readers get err (io.EOF if nil) once
// the queued bytes are read.
func (p *pipe) closeWrite(err error) {
	if err == nil {
		err = io.EOF
	}
	p.mu.Lock()
	if p.werr == nil {
		p.werr = err
	}
	p.cond.Broadcast()
	p.mu.Unlock()
}

// closeRead ends the reading side: queued bytes are dropped, readers and
// writers get net.ErrClosed.
func (p *pipe) closeRead() {
	p.mu.Lock()
	if p.rerr == nil {
		p.rerr = net.ErrClosed
		p.rclosed.Store(true)
	}
	for len(p.q) > 0 {
		p.dropHead()
	}
	p.wmu.Lock()
	if p.waker != nil {
		p.waker.close()
	}
	p.wmu.Unlock()
	for _, t := range []*time.Timer{p.rtimer, p.wtimer} {
		if t != nil {
			t.Stop()
		}
	}
	p.cond.Broadcast()
	p.mu.Unlock()
}

// setDeadline sets the read or the write deadline; a timer wakes blocked
// callers when it passes.
func (p *pipe) setDeadline(t time.Time, read bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	dl, tm := &p.wdl, &p.wtimer
	if read {
		dl, tm = &p.rdl, &p.rtimer
	}
	*dl = t
	if *tm != nil {
		(*tm).Stop()
	}
	if t.IsZero() {
		return
	}
	wake := func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	if *tm == nil {
		*tm = time.AfterFunc(time.Until(t), wake)
	} else {
		(*tm).Reset(time.Until(t))
	}
	p.cond.Broadcast()
}
