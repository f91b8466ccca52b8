// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package extclient

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// standIn writes a clients/<lang> folder whose rpclab-client appends one
// record per step to the steps' out file (a failed one if failed) and exits
// with code: the contract's side of docs/clients.md, "Exit codes", without
// a gRPC stack to build.
func standIn(t *testing.T, failed bool, code int) *External {
	t.Helper()
	dir := t.TempDir()
	rec := &result.Record{SchemaVersion: result.SchemaVersion, Kind: result.KindPing, Status: result.StatusOK,
		StartedAt: time.Now().UTC(), Spec: result.Spec{Target: "127.0.0.1:1", RPC: "unary", ConnMode: "shared", ConnsRequested: 1, Inflight: 1, IntervalNS: 1e9, LoadModel: "closed"},
		Env: result.Env{Language: "python", GRPCImpl: "grpcio", HostCPUs: 1, OS: "linux"}, Errors: map[string]int64{}}
	if failed {
		rec.Status, rec.Error = result.StatusFailed, "target unreachable"
	}
	var line bytes.Buffer
	if err := result.NewWriter(&line).Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "record.jsonl"), line.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
out=$(sed -n 's/.*"out":"\([^"]*\)".*/\1/p' "$2" | head -n 1)
while read -r step; do cat "$(dirname "$0")/record.jsonl" >> "$out"; done < "$2"
exit ` + strconv.Itoa(code) + "\n"
	for name, body := range map[string]string{"rpclab-client": script, "build.sh": "#!/bin/sh\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	return &External{Lang: "python", Dir: dir, Conns: []string{"shared"}, Stderr: &stderr, SampleEvery: 10 * time.Millisecond}
}

// What Sweep returns for each exit of a client: 1 after failed steps is
// ErrStepsFailed (the records say why, and every one reached the sink); 1
// with no failed record is an ExitError; 2 is a rejected command line.
func TestSweepExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		failed bool
		code   int
		check  func(error) bool
	}{
		{"exit 0", false, 0, func(err error) bool { return err == nil }},
		{"exit 1 after failed steps", true, 1, func(err error) bool { return errors.Is(err, ErrStepsFailed) }},
		{"exit 1 with no failed step", false, 1, func(err error) bool {
			var ee *ExitError
			return errors.As(err, &ee) && ee.Code == 1 && !errors.Is(err, ErrStepsFailed)
		}},
		{"exit 3 after failed steps", true, 3, func(err error) bool {
			var ee *ExitError
			return errors.As(err, &ee) && ee.Code == 3
		}},
		{"exit 2", false, 2, func(err error) bool {
			var ue *usage.Error
			return errors.As(err, &ue) && errors.Is(err, ErrClientFlags)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := standIn(t, tc.failed, tc.code)
			spec := &loadgen.Spec{Target: "127.0.0.1:1", Conns: []loadgen.ConnMode{{Kind: loadgen.Shared}}, RPCs: []string{loadgen.Unary},
				Inflight: []int{1, 2}, Interval: time.Second, DialTimeout: time.Second}
			got := 0
			err := e.Sweep(context.Background(), spec, func(*result.Record) error { got++; return nil }, nil)
			if !tc.check(err) {
				t.Errorf("Sweep: got %v", err)
			}
			if got != 2 {
				t.Errorf("records: got %d, want 2 (one per step, whatever the exit)", got)
			}
		})
	}
}
