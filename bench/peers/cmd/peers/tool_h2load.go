// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// h2loadTool is nghttp2's h2load posting a framed gRPC request (reqFile)
// to UnaryCall; fail is why that request is not a successful gRPC call,
// when a check with nghttp found so (it then does not run).
type h2loadTool struct{ bin, reqFile, fail string }

func (t h2loadTool) binary() string { return t.bin }

func (t h2loadTool) refused() string { return t.fail }

func (t h2loadTool) command(run toolRun) []string {
	cn, m := 1, run.n
	if run.layout == "per-worker" {
		cn, m = run.n, 1
	}
	argv := []string{t.bin, "-c", strconv.Itoa(cn), "-m", strconv.Itoa(m), "-d", t.reqFile,
		"-H", "content-type: application/grpc", "-H", "te: trailers"}
	if run.callgrind {
		argv = append(argv, "-n", strconv.Itoa(max(run.rpcs, cn)))
	} else {
		argv = append(argv, "-D", run.secs())
	}
	return append(argv, "http://"+run.addr+unaryPath)
}

func (t h2loadTool) parse(_ toolRun, stdout string, r *lgRow) error {
	return parseH2load(stdout, r)
}

// parseH2load reads "finished in 1.00s, 123.45 req/s, ..." and "requests: N
// total, N started, N done, N succeeded, N failed, ...".
func parseH2load(out string, r *lgRow) error {
	var okN, failed, errored int64 = -1, 0, 0
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(l, "finished in "); ok {
			f := strings.Split(v, ", ")
			if len(f) >= 2 {
				q, err := strconv.ParseFloat(strings.TrimSuffix(f[1], " req/s"), 64)
				if err != nil {
					return fmt.Errorf("h2load: rate %q: %w", f[1], err)
				}
				r.rps = q
			}
		}
		if v, ok := strings.CutPrefix(l, "requests: "); ok {
			for _, part := range strings.Split(v, ", ") {
				num, name, _ := strings.Cut(part, " ")
				n, err := strconv.ParseInt(num, 10, 64)
				if err != nil {
					return fmt.Errorf("h2load: requests line %q", l)
				}
				switch name {
				case "succeeded":
					okN = n
				case "failed":
					failed = n
				case "errored":
					errored = n
				}
			}
		}
	}
	if okN <= 0 {
		return fmt.Errorf("h2load: no succeeded request in its output: %s", tail(out, 200))
	}
	if failed+errored > 0 {
		return fmt.Errorf("h2load: %d failed, %d errored of %d", failed, errored, okN+failed)
	}
	r.requests = okN
	return nil
}
