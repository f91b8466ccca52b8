// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
)

// bar is the live progress bar on a terminal (step i of n, the last step's
// throughput, time left) drawn by schollz/progressbar. It refreshes every
// second until the last step ends or stop is called, and is cleared then.
type bar struct {
	w                   io.Writer
	mu                  sync.Mutex
	pb                  *progressbar.ProgressBar
	sweepStart, started time.Time
	lastEnd             time.Time
	done, total         int
	step                loadgen.Step
	last                string
	quit                chan struct{}
}

// describe says where the sweep is; mu must be held.
func (b *bar) describe() string {
	d := fmt.Sprintf("step %d/%d %s %s inflight=%d", min(b.done+1, b.total), b.total, b.step.Conn, b.step.RPC, b.step.Inflight)
	if b.last != "" {
		d += " | last " + b.last
	}
	if b.done == 0 {
		return d + " | estimating time left"
	}
	per := b.lastEnd.Sub(b.sweepStart).Seconds() / float64(b.done) // finished steps only
	left := per*float64(b.total-b.done) - time.Since(b.started).Seconds()
	return d + fmt.Sprintf(" | ~%s left", time.Duration(max(left, 0)*float64(time.Second)).Round(time.Second))
}

func (b *bar) start(i, n int, s loadgen.Step) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.step, b.started, b.total = s, time.Now(), n
	if b.pb == nil {
		b.sweepStart, b.done, b.last = b.started, 0, ""
		b.pb = progressbar.NewOptions(n, progressbar.OptionSetWriter(b.w), progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(25), progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetElapsedTime(false), progressbar.OptionUseANSICodes(true),
			progressbar.OptionSetRenderBlankState(true), progressbar.OptionShowDescriptionAtLineEnd())
		b.quit = make(chan struct{})
		go b.tick(b.pb, b.quit)
	}
	b.pb.Describe(b.describe())
}

// tick redraws pb every second until quit is closed.
func (b *bar) tick(pb *progressbar.ProgressBar, quit chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.mu.Lock()
			if b.pb == pb {
				pb.Describe(b.describe())
			}
			b.mu.Unlock()
		case <-quit:
			return
		}
	}
}

func (b *bar) end(i, n int, line string, r *result.Record) {
	b.mu.Lock()
	if b.pb == nil { // no start came first
		fmt.Fprintln(b.w, line)
		b.mu.Unlock()
		return
	}
	_ = b.pb.Clear()
	fmt.Fprintln(b.w, line)
	b.done, b.lastEnd = i+1, time.Now()
	b.last = "-"
	if r.Status == result.StatusOK {
		b.last = fmt.Sprintf("%.0f req/s", r.ThroughputRPS)
	}
	b.pb.Describe(b.describe())
	_ = b.pb.Set(b.done)
	b.mu.Unlock()
	if i == n-1 {
		b.stop()
	}
}

// stop clears the bar; the next start draws a new one.
func (b *bar) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pb == nil {
		return
	}
	close(b.quit)
	_ = b.pb.Clear()
	b.pb = nil
}
