// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package conformance checks every language's client against the contract
// of docs/clients.md: it builds rpclab, runs `rpclab sweep --client LANG`
// against rpclab's own server on loopback, validates the records against the
// schema, and checks the connections the operating system saw per layout.
//
// Which clients run is set by RPCLAB_CLIENTS (comma-separated, e.g.
// "cpp,python"; "all" for every language with a clients/<lang>/build.sh).
// Unset, the suite skips: building every stack takes minutes. CI sets it.
package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/loadgen/extclient"
	"github.com/rpclab/rpclab/internal/result"
)

// Expectation is what a language's client must show for one layout.
type Expectation struct {
	// Conn is the --conn value.
	Conn string
	// Conns gives the connections the OS must see at a given in-flight count.
	Conns func(inflight int) int
}

// expectations maps a language to the layouts its test runs. Each language's
// file registers its own in an init function.
var expectations = map[string][]Expectation{}

// One and PerWorker are the common expectations.
func one(int) int         { return 1 }
func perWorker(n int) int { return n }

// ownConnPerChannel is what a stack that opens a connection per channel
// (grpc-java, tonic) must show: shared is one connection whatever the
// in-flight count, per-worker one per worker, pool:2 two.
var ownConnPerChannel = []Expectation{
	{Conn: "shared", Conns: one},
	{Conn: "per-worker", Conns: perWorker},
	{Conn: "pool:2", Conns: func(int) int { return 2 }},
}

// cCoreStyle is what a stack that shares subchannels between channels with
// identical arguments (C++, grpcio, grpc-js) must show: channel-per-worker
// (the trap) is ONE connection like shared, local-pool, distinct-args and
// per-worker one per worker, pool:2 two.
var cCoreStyle = []Expectation{
	{Conn: "shared", Conns: one},
	{Conn: "channel-per-worker", Conns: one},
	{Conn: "local-pool", Conns: perWorker},
	{Conn: "distinct-args", Conns: perWorker},
	{Conn: "per-worker", Conns: perWorker},
	{Conn: "pool:2", Conns: func(int) int { return 2 }},
}

// unitTests runs a client's own unit tests: name with args in
// clients/<lang>, within five minutes; a non-zero exit fails t with the
// output. At the bound the tests get SIGABRT, then SIGKILL 10 s later, so
// a hang in Python's tests shows where it was: faulthandler, turned on
// here, prints every thread's stack on SIGABRT.
func unitTests(t *testing.T, lang, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = filepath.Join("..", lang)
	cmd.Env = append(os.Environ(), "PYTHONFAULTHANDLER=1")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGABRT) }
	cmd.WaitDelay = 10 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v in clients/%s: %v\n%s", name, args, lang, err, out)
	}
}

// build builds lang's client (if out of date) with a generous bound, so
// the tests that run it can bound it tightly, and returns it.
func build(t *testing.T, lang string, conns ...string) *extclient.External {
	t.Helper()
	if len(conns) == 0 {
		conns = []string{"shared"}
	}
	e, err := extclient.NewExternal("..", lang, conns, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := e.Build(ctx); err != nil {
		t.Fatal(err)
	}
	return e
}

// sweep runs `rpclab sweep args... -o FILE` within timeout and returns
// its records; a non-zero exit or a record count other than want fails t.
func sweep(t *testing.T, timeout time.Duration, want int, args ...string) []result.Record {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	_, stderr, code := rpclab(t, timeout, append(append([]string{"sweep"}, args...), "-o", out)...)
	if code != 0 {
		t.Fatalf("rpclab sweep %v: exit code %d; stderr:\n%s", args, code, stderr)
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != want {
		t.Fatalf("rpclab sweep %v: got %d records, want %d", args, len(recs), want)
	}
	return recs
}

// stepsArgs writes spec's steps (each layout of conns; rpc, conn, in-flight
// outermost first, each appending its record to out) to a steps file in
// t's temporary directory, and returns a client's arguments for it, as
// rpclab's driver runs a client: --steps FILE, then extra.
func stepsArgs(t *testing.T, spec *loadgen.Spec, conns []string, out string, extra ...string) []string {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "steps.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := extclient.WriteSteps(f, extclient.Steps(spec, conns, nil, out)); err != nil {
		t.Fatal(err)
	}
	return append([]string{"--steps", f.Name()}, extra...)
}

var rpclabBin string

// stepLineRE matches a progress line of rpclab sweep on a non-terminal
// stderr, capturing the step's duration in seconds.
var stepLineRE = regexp.MustCompile(`(?m)^\[\d+/\d+\] .*\(([0-9.]+)s\)$`)

func TestMain(m *testing.M) {
	code := func() int {
		if os.Getenv("RPCLAB_CLIENTS") == "" {
			return m.Run() // every test skips
		}
		dir, err := os.MkdirTemp("", "rpclab-conformance-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		rpclabBin = filepath.Join(dir, "rpclab")
		out, err := exec.Command("go", "build", "-o", rpclabBin, "../../cmd/rpclab").CombinedOutput()
		if err != nil {
			os.Stderr.Write(out)
			panic(err)
		}
		return m.Run()
	}()
	os.Exit(code)
}

func selected(t *testing.T, lang string) {
	t.Helper()
	env := os.Getenv("RPCLAB_CLIENTS")
	if env == "" {
		t.Skip("RPCLAB_CLIENTS is not set; set it to e.g. cpp,python or all to test other languages' clients")
	}
	if env != "all" && !slices.Contains(strings.Split(env, ","), lang) {
		t.Skipf("%s is not in RPCLAB_CLIENTS=%s", lang, env)
	}
	if _, err := os.Stat(filepath.Join("..", lang, "build.sh")); err != nil {
		if env == "all" {
			t.Skipf("clients/%s has no build.sh yet", lang)
		}
		t.Fatalf("RPCLAB_CLIENTS names %s but clients/%s/build.sh is missing", lang, lang)
	}
}

func rpclab(t *testing.T, timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, rpclabBin, args...)
	cmd.Dir = ".."
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("rpclab %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("rpclab %v did not finish within %v; stderr:\n%s", args, timeout, e.String())
	}
	return o.String(), e.String(), code
}

// TestClients runs a short sweep per language and checks its records.
func TestClients(t *testing.T) {
	for _, lang := range extclient.Languages {
		t.Run(lang, func(t *testing.T) {
			selected(t, lang)
			exps := expectations[lang]
			if len(exps) == 0 {
				t.Fatalf("no expectations registered for %s", lang)
			}
			conns := make([]string, len(exps))
			for i, e := range exps {
				conns[i] = e.Conn
			}
			// Build first, with a generous bound, so the sweep's bound is tight.
			build(t, lang, conns...)
			out := filepath.Join(t.TempDir(), "r.jsonl")
			_, stderr, code := rpclab(t, 3*time.Minute, "sweep", "--client", lang, "--clients-dir", ".",
				"--inflight", "1,4", "--conn", strings.Join(conns, ","), "--rpc", "unary,streaming",
				"--warmup", "300ms", "--interval", "1s", "-o", out)
			if code != 0 {
				t.Fatalf("sweep exit code %d; stderr:\n%s", code, stderr)
			}
			// Progress: a line per step, each with the step's own time.
			steps := stepLineRE.FindAllStringSubmatch(stderr, -1)
			if len(steps) != 2*2*len(exps) {
				t.Errorf("got %d progress lines, want %d; stderr:\n%s", len(steps), 2*2*len(exps), stderr)
			}
			for _, m := range steps {
				if secs, _ := strconv.ParseFloat(m[1], 64); secs > 60 {
					t.Errorf("progress line says a step took %ss: %q", m[1], m[0])
				}
			}
			recs, err := result.ReadFile(out) // validates against the schema
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(recs), 2*2*len(exps); got != want {
				t.Fatalf("got %d records, want %d", got, want)
			}
			for _, r := range recs {
				if r.Env.Language != lang {
					t.Errorf("env.language = %q, want %q", r.Env.Language, lang)
				}
				if r.Status != result.StatusOK || r.Requests == 0 || r.HistogramHDR == "" {
					t.Errorf("%s %s inflight=%d: status %q, %d requests: %s", r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, r.Status, r.Requests, r.Error)
				}
				for _, e := range exps {
					if e.Conn == r.Spec.ConnMode || strings.HasPrefix(e.Conn, r.Spec.ConnMode+":") {
						if got, want := r.ConnsObserved, e.Conns(r.Spec.Inflight); got != want {
							t.Errorf("%s %s inflight=%d: got %d connections, want %d", e.Conn, r.Spec.RPC, r.Spec.Inflight, got, want)
						}
					}
				}
			}
		})
	}
}

// TestClientsBadInput checks the exit codes of the contract.
func TestClientsBadInput(t *testing.T) {
	for _, lang := range extclient.Languages {
		t.Run(lang, func(t *testing.T) {
			selected(t, lang)
			client := filepath.Join("..", lang, "rpclab-client")
			run := func(args ...string) (int, string) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, client, args...)
				var e bytes.Buffer
				cmd.Stderr = &e
				err := cmd.Run()
				if ctx.Err() != nil {
					t.Fatalf("%v hung", args)
				}
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return ee.ExitCode(), e.String()
				}
				return 0, e.String()
			}
			bad := filepath.Join(t.TempDir(), "bad.jsonl")
			line := `{"target":"127.0.0.1:50051","service":"benchmark","rpc":"unary","conn":"shared","inflight":"x",` +
				`"payload_bytes":0,"warmup_ns":0,"interval_ns":1000000,"out":"` + filepath.Join(t.TempDir(), "bad-r.jsonl") + `"}`
			if err := os.WriteFile(bad, []byte(line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, msg := run("--steps", bad); code != 2 || !strings.Contains(msg, "inflight") {
				t.Errorf("in-flight \"x\" in the steps file: got exit %d and %q, want 2 and a message naming inflight", code, msg)
			}
			out := filepath.Join(t.TempDir(), "r.jsonl")
			// Port 1 on loopback: nothing listens, connections are refused.
			code, msg := run(stepsArgs(t, &loadgen.Spec{Target: "127.0.0.1:1", RPCs: []string{loadgen.Unary}, Inflight: []int{1},
				Interval: 200 * time.Millisecond}, []string{"shared"}, out)...)
			if code != 1 {
				t.Errorf("unreachable target: got exit %d, want 1; stderr: %s", code, msg)
			}
			recs, err := result.ReadFile(out)
			if err != nil || len(recs) != 1 || recs[0].Status != result.StatusFailed {
				t.Errorf("unreachable target: want one failed record, got %d (%v)", len(recs), err)
			}
		})
	}
}

// TestCompare runs rpclab compare with the Go client and every selected
// client against one server: each client's records are there, valid, and
// the report charts them together.
func TestCompare(t *testing.T) {
	env := os.Getenv("RPCLAB_CLIENTS")
	if env == "" {
		t.Skip("RPCLAB_CLIENTS is not set")
	}
	langs := []string{"go"}
	for _, l := range extclient.Languages {
		if _, err := os.Stat(filepath.Join("..", l, "build.sh")); err == nil && (env == "all" || slices.Contains(strings.Split(env, ","), l)) {
			langs = append(langs, l)
		}
	}
	if len(langs) < 2 {
		t.Skip("no client of another language selected")
	}
	dir := t.TempDir()
	out, page := filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "c.html")
	stdout, stderr, code := rpclab(t, 10*time.Minute, "compare", "--clients", strings.Join(langs, ","), "--clients-dir", ".",
		"--inflight", "1,2", "--conn", "shared,per-worker", "--warmup", "300ms", "--interval", "700ms", "-o", out, "--report", page)
	if code != 0 {
		t.Fatalf("compare exit code %d; stderr:\n%s", code, stderr)
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, r := range recs {
		per[r.Env.Language]++
		if r.Status != result.StatusOK {
			t.Errorf("%s %s inflight=%d: %s %s", r.Env.Language, r.Spec.ConnMode, r.Spec.Inflight, r.Status, r.Error)
		}
	}
	for _, l := range langs {
		if per[l] != 4 {
			t.Errorf("%s: got %d records, want 4", l, per[l])
		}
		// The cross-client table has a line per client and layout.
		if !containsLine(stdout, l, "per-worker") {
			t.Errorf("the client table has no %s per-worker line:\n%s", l, stdout)
		}
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(string(html), `<figure class="chart" id="clients-`), 3; got != want {
		t.Errorf("report: got %d cross-client charts, want %d", got, want)
	}
	if want := fmt.Sprintf(`data-series="%d"`, 2*len(langs)); !strings.Contains(string(html), want) {
		t.Errorf("report: no chart with %s (every client's two layouts)", want)
	}
}

// containsLine reports whether some line of s has every one of words as a
// field.
func containsLine(s string, words ...string) bool {
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		all := true
		for _, w := range words {
			all = all && slices.Contains(f, w)
		}
		if all {
			return true
		}
	}
	return false
}

// TestClientThroughNetem puts rpclab's netem proxy (a separate process)
// between another language's client and the server: the records carry the
// emulated link, the client's one connection goes to the proxy, and no RPC
// is faster than the round trip the link adds.
func TestClientThroughNetem(t *testing.T) {
	env := os.Getenv("RPCLAB_CLIENTS")
	if env == "" {
		t.Skip("RPCLAB_CLIENTS is not set")
	}
	lang := ""
	for _, l := range []string{"cpp", "rust", "python", "node", "java"} {
		if _, err := os.Stat(filepath.Join("..", l, "build.sh")); err == nil && (env == "all" || slices.Contains(strings.Split(env, ","), l)) {
			lang = l
			break
		}
	}
	if lang == "" {
		t.Skip("no client of another language selected")
	}
	const delay = time.Millisecond
	recs := sweep(t, 5*time.Minute, 2, "--client", lang, "--clients-dir", ".", "--delay", delay.String(),
		"--inflight", "1,2", "--conn", "shared", "--warmup", "300ms", "--interval", "700ms")
	for _, r := range recs {
		if r.Status != result.StatusOK || r.Requests == 0 {
			t.Errorf("%s inflight=%d: %s %s", lang, r.Spec.Inflight, r.Status, r.Error)
		}
		if r.Spec.Netem == nil || r.Spec.Netem.Up.DelayNS != delay.Nanoseconds() || r.Spec.Netem.Down.DelayNS != delay.Nanoseconds() {
			t.Errorf("spec.netem = %+v, want %v each way", r.Spec.Netem, delay)
		}
		if r.Spec.Netem != nil && r.Spec.Netem.Upstream == r.Spec.Target {
			t.Errorf("spec.target %s is the server, want the proxy in front of it", r.Spec.Target)
		}
		if r.ConnsObserved != 1 {
			t.Errorf("inflight=%d: got %d connections to the proxy, want 1", r.Spec.Inflight, r.ConnsObserved)
		}
		if r.Latency.MinNS < 2*delay.Nanoseconds() {
			t.Errorf("inflight=%d: fastest RPC took %v, faster than the emulated round trip %v", r.Spec.Inflight, time.Duration(r.Latency.MinNS), 2*delay)
		}
	}
}
