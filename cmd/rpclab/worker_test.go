// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/worker"
)

func TestWorkerBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"port out of range", []string{"worker", "--driver-port", "70000"}, "--driver-port"},
		{"negative dial timeout", []string{"worker", "--driver-port", "0", "--dial-timeout", "-1s"}, "--dial-timeout"},
		{"arguments", []string{"worker", "extra"}, "extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want exit %d naming %s", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// TestWorkerProcessQuits runs "rpclab worker" as a process: it prints its
// address, answers a driver as an rpclab worker, and QuitWorker ends it
// with exit 0.
func TestWorkerProcessQuits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), defaultTestTimeout)
	defer cancel()
	cmd := rpclabCmd(ctx, "worker", "--driver-port", "0", "--host", "127.0.0.1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		cmd.Process.Kill()
		t.Fatalf("got first line %q (%v), want \"listening on ADDR\"", line, err)
	}
	r, err := worker.Dial(ctx, addr, 5*time.Second)
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	defer r.Close()
	if !r.RPCLab {
		t.Error("got an official worker, want rpclab's (WorkerDetail)")
	}
	if err := r.Quit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after QuitWorker: got %v, want exit 0", err)
	}
}
