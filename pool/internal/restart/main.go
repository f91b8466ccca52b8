// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command restart is a server killed and restarted under load, for the Go
// pool: 4 goroutines of unary RPCs through a pool of 3 (least-loaded) to
// argv[1]. It prints "running" after 200 RPCs, then waits for a line on
// stdin (the server has been killed and started again on the same port),
// runs until 200 more RPCs succeed, and prints one JSON line: the RPCs that
// succeeded, the failures by code, and the connections to the server as
// the kernel has them once the pool is connected again.
// clients/conformance (TestGoPoolRestart, through testPoolRestart) builds
// it in the pool module and drives it against `rpclab serve`, as it drives
// clients/python/pool/tests/restart.py.
//
//	restart 127.0.0.1:PORT
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	pb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/internal/pooltest"
)

// codeNames are the codes as gRPC's other stacks spell them.
var codeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

func codeName(c codes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return c.String()
}

// load is the callers' tally.
type load struct {
	mu     sync.Mutex
	ok     int
	failed map[string]int
	stop   bool
	more   chan struct{} // a wake for wait after each success
}

// call runs unary RPCs until stop, counting their ends.
func (l *load) call(client pb.BenchmarkServiceClient) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := client.UnaryCall(ctx, &pb.SimpleRequest{})
		cancel()
		l.mu.Lock()
		if err == nil {
			l.ok++
		} else {
			l.failed[codeName(status.Code(err))]++
		}
		stop := l.stop
		l.mu.Unlock()
		select {
		case l.more <- struct{}{}:
		default:
		}
		if stop {
			return
		}
	}
}

// wait waits until n more RPCs than before succeeded, or for d, and
// reports whether they did.
func (l *load) wait(n int, d time.Duration) bool {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	l.mu.Lock()
	goal := l.ok + n
	l.mu.Unlock()
	for {
		l.mu.Lock()
		done := l.ok >= goal
		l.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-l.more:
		case <-timeout.C:
			return false
		}
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "restart:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: restart 127.0.0.1:PORT")
	}
	target := os.Args[1]
	p, err := pool.New(target, pool.WithSize(3), pool.WithPolicy(pool.LeastLoaded),
		pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		return err
	}
	client := pb.NewBenchmarkServiceClient(p)
	l := &load{failed: map[string]int{}, more: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.call(client)
		}()
	}
	if !l.wait(200, time.Minute) {
		return fmt.Errorf("200 RPCs did not succeed within a minute: %v", l.failed)
	}
	fmt.Println("running")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("read the restart line: %w", err)
	}
	recovered := l.wait(200, time.Minute)
	l.mu.Lock()
	l.stop = true
	l.mu.Unlock()
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Connect(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "restart: connect after the restart:", err)
	}
	conns, err := pooltest.ConnsTo(target)
	if err != nil {
		return err
	}
	if err := p.Close(); err != nil {
		return err
	}
	out, err := json.Marshal(map[string]any{"ok": l.ok, "failed": l.failed, "recovered": recovered, "conns": conns})
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}
