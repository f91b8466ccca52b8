// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
)

// TestDoctorClient runs `rpclab doctor --client python` against `rpclab
// serve`: every record is the Python client's, each layout (shared and
// the pools asked for, no adaptive pool) ran over the in-flight counts
// that fit the budget, each pool's connections as the kernel saw them are
// its size, and the verdict prints Python's pool change when it advises a
// pool, and no change otherwise. Which verdict comes depends on the
// machine, so either is accepted.
func TestDoctorClient(t *testing.T) {
	const lang = "python"
	selected(t, lang)
	build(t, lang)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := server.StartProcess(ctx, []string{rpclabBin, "serve", "--listen", "127.0.0.1:0"}, nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop() }()
	out := filepath.Join(t.TempDir(), "doctor.jsonl")
	// 3 layouts × 2 in-flight counts × 2 s a step (doctor's 500 ms warm-up
	// and 1.5 s interval): the counts 1 and 2.
	stdout, stderr, code := rpclab(t, 2*time.Minute, "doctor", "--target", srv.Addr, "--client", lang, "--clients-dir", ".",
		"--pools", "2,4", "--budget", "12s", "-o", out)
	if code != 0 {
		t.Fatalf("doctor exit code %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"rpclab: building the python client if needed", "the adaptive pool (pool:auto) is Go's only"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	recs, err := result.ReadFile(out) // validates against the schema
	if err != nil {
		t.Fatal(err)
	}
	inflights := map[string][]int{}
	for _, r := range recs {
		label := r.Spec.ConnLabel()
		inflights[label] = append(inflights[label], r.Spec.Inflight)
		if r.Env.Language != lang {
			t.Errorf("%s in-flight %d: got env.language %q, want %q", label, r.Spec.Inflight, r.Env.Language, lang)
		}
		if r.Status != result.StatusOK {
			t.Errorf("%s in-flight %d: got status %q (%s), want ok", label, r.Spec.Inflight, r.Status, r.Error)
		}
		if r.Spec.ConnMode == "pool" && r.ConnsObserved != r.Spec.ConnsRequested {
			t.Errorf("%s in-flight %d: got %d connections seen, want %d", label, r.Spec.Inflight, r.ConnsObserved, r.Spec.ConnsRequested)
		}
	}
	for _, conn := range []string{"shared", "pool:2", "pool:4"} {
		if got, want := inflights[conn], []int{1, 2}; !slices.Equal(got, want) {
			t.Errorf("%s: got in-flight counts %v, want %v", conn, got, want)
		}
	}
	if len(inflights) != 3 {
		t.Errorf("got layouts %v, want shared, pool:2 and pool:4 only", inflights)
	}
	if m := regexp.MustCompile(`use (\d+) connections \(pool:`).FindStringSubmatch(stdout); m != nil {
		if want := "rpclab_pool.ChannelPool(target, " + m[1] + ", credentials=creds)"; !strings.Contains(stdout, want) {
			t.Errorf("the verdict advises a pool of %s but lacks %q:\n%s", m[1], want, stdout)
		}
		if strings.Contains(stdout, "pool.WithSize") {
			t.Errorf("the verdict prints Go's change for the Python client:\n%s", stdout)
		}
	} else if strings.Contains(stdout, "rpclab_pool") || strings.Contains(stdout, "The change") {
		t.Errorf("the verdict advises no pool but prints a change:\n%s", stdout)
	}
	if !strings.Contains(stdout, "Verdict:\n") {
		t.Errorf("stdout has no verdict:\n%s", stdout)
	}
}

// TestDoctorClientUnreachable: a study through the Python client of a
// target that refuses connections ends with doctor's own unreachable
// error (exit 1), as the Go client's does, not with the client's exit
// code: the client exits 1 when a step failed, and the failed records
// are the study's to judge.
func TestDoctorClientUnreachable(t *testing.T) {
	const lang = "python"
	selected(t, lang)
	build(t, lang)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	_, stderr, code := rpclab(t, 2*time.Minute, "doctor", "--target", addr, "--client", lang, "--clients-dir", ".",
		"--pools", "2", "--budget", "8s")
	if want := "doctor: target unreachable"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("got exit %d, want 1 and a message with %q; stderr:\n%s", code, want, stderr)
	}
}
