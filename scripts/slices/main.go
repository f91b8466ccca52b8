// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command slices measures what an adaptive pool's paired trial measures,
// by hand: one pool of two connections under a closed loop of -inflight
// callers, the second connection parked (pool.WithSizer's Active) or not,
// interval by interval, in long slices (6 intervals on one connection, 6 on
// two) and in the trial's short ones (both, one, one, both: Rule's B A A B
// order), -rounds times. It prints each interval's throughput, so the two
// ways can be set side by side. Start a server first and pin the two apart:
//
//	taskset -c 1 rpclab serve --listen 127.0.0.1:47001 &
//	taskset -c 0 go run ./scripts/slices -target 127.0.0.1:47001
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/pool"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// alt grows to 2 at once, then runs plan: each entry is the Active of one
// interval (1: one connection takes new RPCs; 0: both).
// done is closed once every interval of plan has been logged.
type alt struct {
	mu   sync.Mutex
	k    int
	plan []int
	cur  int
	log  []string
	done chan struct{}
}

func (a *alt) Size(now time.Time, s pool.Signals) pool.Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(s.Conns) < 2 {
		return pool.Decision{Action: pool.Grow}
	}
	if a.k > 0 {
		a.log = append(a.log, fmt.Sprintf("%d\t%d\t%.0f\t%.0f\t%.2f", a.k-1, a.cur, s.Throughput(), s.MeanInFlight, s.CPUBusy))
	}
	if a.k < len(a.plan) {
		a.cur = a.plan[a.k]
	} else {
		a.cur = 0
	}
	if a.k == len(a.plan) {
		close(a.done)
	}
	a.k++
	return pool.Decision{Action: pool.Hold}
}
func (a *alt) GrowFailed(time.Time) {}
func (a *alt) Active() int          { a.mu.Lock(); defer a.mu.Unlock(); return a.cur }
func (a *alt) ParkLimit() int64     { return 0 }

func main() {
	target := flag.String("target", "", "the server, HOST:PORT (rpclab serve)")
	inflight := flag.Int("inflight", 2000, "callers, each with one RPC in flight")
	interval := flag.Duration("interval", time.Second, "one slice (the pool's control interval)")
	rounds := flag.Int("rounds", 3, "rounds of long then short slices")
	flag.Parse()
	if *target == "" || *inflight < 1 || *interval <= 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "slices: want -target HOST:PORT, -inflight and -rounds of at least 1, and a positive -interval")
		os.Exit(2)
	}
	var plan []int
	for r := 0; r < *rounds; r++ {
		for i := 0; i < 6; i++ {
			plan = append(plan, 1)
		}
		for i := 0; i < 6; i++ {
			plan = append(plan, 0)
		}
		for b := 0; b < 3; b++ {
			plan = append(plan, 0, 1, 1, 0)
		}
	}
	a := &alt{plan: plan, done: make(chan struct{})}
	p, err := pool.New(*target, pool.WithSizer(1, 2, *interval, a), pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer p.Close()
	c := pb.NewBenchmarkServiceClient(p)
	ctx, cancel := context.WithCancelCause(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < *inflight; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := &pb.SimpleRequest{}
			for ctx.Err() == nil {
				if _, err := c.UnaryCall(ctx, req); err != nil && ctx.Err() == nil {
					cancel(err) // a server gone or refusing: stop, do not spin
				}
			}
		}()
	}
	select {
	case <-a.done:
		cancel(nil)
	case <-ctx.Done():
	}
	wg.Wait()
	if err := context.Cause(ctx); err != context.Canceled {
		fmt.Fprintln(os.Stderr, "slices:", err)
		os.Exit(1)
	}
	a.mu.Lock()
	fmt.Println("k\tactive\trpc/s\tmean in flight\tcpu busy")
	for _, l := range a.log {
		fmt.Println(l)
	}
	a.mu.Unlock()
}
