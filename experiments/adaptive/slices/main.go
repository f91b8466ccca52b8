// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command slices measures what an adaptive pool's paired trial measures,
// by hand: one pool of two connections under a closed loop of -inflight
// callers, the second connection parked (adaptive.WithSizer's Active) or not,
// interval by interval, in long slices (6 intervals on one connection, 6 on
// two) and in the trial's short ones (both, one, one, both: Rule's B A A B
// order), -rounds times. It prints each interval's throughput, so the two
// ways can be set side by side. Start a server first and pin the two apart:
//
//	taskset -c 1 rpclab serve --listen 127.0.0.1:47001 &
//	taskset -c 0 go run ./experiments/adaptive/slices -target 127.0.0.1:47001
//
// With -sizes (e.g. 1,2,4,8) it compares fixed sizes instead, side by side
// in one process: one pool of the largest size, all but N of its
// connections parked in each slice of -slice intervals, the sizes taken in
// turn (rotated, and reversed every other round, so a drift of the host
// weighs on each alike), -rounds times. The first -skip intervals of each
// slice are left out (the RPCs of the size before are still draining).
// After the intervals it prints, per size, the median over the rounds of
// each slice's throughput and CPU time per RPC, and each round's
// throughput over the same round's first size: what the closed-loop sweep
// compares one process per layout, where a host whose speed moves by a
// fifth from one step to the next hides a tenth.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/adaptive"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// alt grows to max, one connection an interval, then runs plan: each entry
// is the Active of one interval (N: N connections take new RPCs; 0: all).
// done is closed once every interval of plan has been logged.
type alt struct {
	mu      sync.Mutex
	max     int
	k       int
	plan    []int
	cur     int
	got     []sample      // one per interval of plan
	lastCPU time.Duration // processCPU at the previous interval's end
	done    chan struct{}
}

// sample is what one interval of the plan measured.
type sample struct {
	active   int
	rps      float64
	inFlight float64       // the mean RPCs in flight
	cpuBusy  float64       // the process's CPU time over the interval's wall time
	cpu      time.Duration // the process's CPU time per RPC; negative: unknown
}

func (a *alt) Size(now time.Time, s adaptive.Signals) adaptive.Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(s.Conns) < a.max {
		return adaptive.Decision{Action: adaptive.Grow}
	}
	if a.k > 0 {
		var done uint64
		for _, c := range s.Conns {
			done += c.Completed
		}
		used := processCPU()
		spent := used - a.lastCPU
		a.lastCPU = used
		cpu, busy := time.Duration(-1), -1.0
		if used >= 0 && done > 0 {
			cpu = spent / time.Duration(done)
		}
		if used >= 0 && s.Interval > 0 {
			busy = spent.Seconds() / s.Interval.Seconds()
		}
		a.got = append(a.got, sample{active: a.cur, rps: s.Throughput(), inFlight: s.MeanInFlight, cpuBusy: busy, cpu: cpu})
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
	return adaptive.Decision{Action: adaptive.Hold}
}
func (a *alt) GrowFailed(time.Time) {}

// processCPU is the process's user and system CPU time so far; negative
// when unknown.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
func (a *alt) Active() int      { a.mu.Lock(); defer a.mu.Unlock(); return a.cur }
func (a *alt) ParkLimit() int64 { return 0 }

func main() {
	target := flag.String("target", "", "the server, HOST:PORT (rpclab serve)")
	inflight := flag.Int("inflight", 2000, "callers, each with one RPC in flight")
	interval := flag.Duration("interval", time.Second, "one slice (the pool's control interval)")
	rounds := flag.Int("rounds", 3, "rounds of long then short slices (with -sizes: of one slice per size)")
	sizeList := flag.String("sizes", "", "compare these pool sizes side by side instead (comma-separated, e.g. 1,2,4,8)")
	slice := flag.Int("slice", 5, "with -sizes: intervals per slice")
	skip := flag.Int("skip", 1, "with -sizes: intervals left out at the start of each slice")
	flag.Parse()
	if *target == "" || *inflight < 1 || *interval <= 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "slices: want -target HOST:PORT, -inflight and -rounds of at least 1, and a positive -interval")
		os.Exit(2)
	}
	sizes, err := parseSizes(*sizeList)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slices: -sizes:", err)
		os.Exit(2)
	}
	if sizes != nil && (*skip < 0 || *slice <= *skip) {
		fmt.Fprintln(os.Stderr, "slices: want -skip of at least 0 and -slice above it")
		os.Exit(2)
	}
	a := &alt{max: 2, done: make(chan struct{})}
	if sizes != nil {
		a.max = sizes[len(sizes)-1]
		a.plan = sizePlan(sizes, *rounds, *slice)
	} else {
		a.plan = trialPlan(*rounds)
	}
	p, err := pool.New(*target, adaptive.WithSizer(1, a.max, *interval, a), pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())))
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
	defer a.mu.Unlock()
	fmt.Println("k\tactive\trpc/s\tmean in flight\tcpu busy")
	for k, g := range a.got {
		fmt.Printf("%d\t%d\t%.0f\t%.0f\t%.2f\n", k, g.active, g.rps, g.inFlight, g.cpuBusy)
	}
	if sizes != nil {
		fmt.Println()
		summarize(os.Stdout, sizes, a.got, *slice, *skip)
	}
}

// parseSizes reads -sizes: nil when empty, else the sizes in increasing
// order.
func parseSizes(list string) ([]int, error) {
	if list == "" {
		return nil, nil
	}
	var sizes []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("%q is not a count from 1 to 1024", f)
		}
		if slices.Contains(sizes, n) {
			return nil, fmt.Errorf("%d is given twice", n)
		}
		sizes = append(sizes, n)
	}
	if len(sizes) < 2 {
		return nil, fmt.Errorf("want two sizes or more")
	}
	slices.Sort(sizes)
	return sizes, nil
}

// sizePlan takes each size for slice intervals in turn, rounds times: the
// order rotates by one each round and runs backwards every other round.
// The largest size is written 0 (every connection active).
func sizePlan(sizes []int, rounds, slice int) []int {
	var plan []int
	for r := 0; r < rounds; r++ {
		order := append(slices.Clone(sizes[r%len(sizes):]), sizes[:r%len(sizes)]...)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, n := range order {
			if n == sizes[len(sizes)-1] {
				n = 0
			}
			for i := 0; i < slice; i++ {
				plan = append(plan, n)
			}
		}
	}
	return plan
}

// trialPlan is the two-connection plan: long slices, then the trial's.
func trialPlan(rounds int) []int {
	var plan []int
	for r := 0; r < rounds; r++ {
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
	return plan
}

// summarize prints, per size, the median over the rounds of each slice's
// mean throughput and CPU time per RPC (its first skip intervals left
// out), the median over the best size's, and the throughput over the
// first size's measured in the same round.
func summarize(w io.Writer, sizes []int, got []sample, slice, skip int) {
	type side struct{ rps, cpu, paired []float64 }
	by := make(map[int]*side)
	for _, n := range sizes {
		by[n] = &side{}
	}
	round := make(map[int]float64) // size -> this round's throughput
	for j := 0; (j+1)*slice <= len(got); j++ {
		kept := got[j*slice+skip : (j+1)*slice]
		n := kept[0].active
		if n == 0 {
			n = sizes[len(sizes)-1]
		}
		var rps, cpu float64
		for _, g := range kept {
			rps += g.rps / float64(len(kept))
			if cpu >= 0 && g.cpu >= 0 {
				cpu += g.cpu.Seconds() * 1e6 / float64(len(kept))
			} else {
				cpu = -1
			}
		}
		by[n].rps = append(by[n].rps, rps)
		if cpu >= 0 {
			by[n].cpu = append(by[n].cpu, cpu)
		}
		round[n] = rps
		if len(round) == len(sizes) { // a round is whole
			for _, m := range sizes {
				by[m].paired = append(by[m].paired, round[m]/round[sizes[0]])
			}
			clear(round)
		}
	}
	best := 0.0
	for _, n := range sizes {
		best = max(best, median(by[n].rps))
	}
	fmt.Fprintf(w, "size\tslices\tmedian rpc/s\tmin\tmax\tcpu µs/rpc\tx best\tx size %d (same round): median\tmin\tmax\n", sizes[0])
	for _, n := range sizes {
		b := by[n]
		fmt.Fprintf(w, "%d\t%d\t%.0f\t%.0f\t%.0f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\n", n, len(b.rps),
			median(b.rps), slices.Min(b.rps), slices.Max(b.rps), median(b.cpu), median(b.rps)/best,
			median(b.paired), slices.Min(b.paired), slices.Max(b.paired))
	}
}

// median of xs (NaN when empty).
func median(xs []float64) float64 {
	if m, ok := stats.Median(xs); ok {
		return m
	}
	return math.NaN()
}
