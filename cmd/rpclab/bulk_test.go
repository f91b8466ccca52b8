// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/selfcert"
	"github.com/rpclab/rpclab/internal/server"

	"github.com/rpclab/rpclab/internal/testutil"
)

func TestBulkBadInputIsAUsageError(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"size zero", []string{"--size", "0"}, []string{"--size 0"}},
		{"unparsable size", []string{"--size", "big"}, []string{"--size", `"big"`}},
		{"chunk above the gRPC max message", []string{"--chunk", "8MiB"}, []string{"--chunk 8MiB", "4194304 bytes (4MiB)", "--max-message-size"}},
		{"unknown transport", []string{"--transport", "grpc,carrier-pigeon"}, []string{`"carrier-pigeon"`}},
		{"chunk above the server's", []string{"--chunk", "32MiB", "--transport", "tcp"}, []string{"--chunk 32MiB", "16MiB"}},
		{"requests and duration", []string{"--requests", "2", "--duration", "1s"}, []string{"--requests and --duration"}},
		{"arguments", []string{"now"}, []string{"unknown command"}},
		// Before the limit, this spun computing the CRC of 9.5 PiB and ignored SIGINT.
		{"size above the largest", []string{"--size", "9999999GiB", "--transport", "tcp"}, []string{"--size 9999999GiB", "64GiB"}},
		{"size past int64", []string{"--size", "9999999TiB"}, []string{"--size", `"9999999TiB"`, "above the largest byte count"}},
		{"negative size", []string{"--size", "-1"}, []string{"--size", `"-1"`, "negative"}},
		{"zero requests", []string{"--requests", "0"}, []string{"--requests 0"}},
		{"warm-up above the largest", []string{"--warmup", "65GiB"}, []string{"--warmup 65GiB", "64GiB"}},
		{"cacert without tls", []string{"--target", "127.0.0.1:1", "--cacert", "ca.pem"}, []string{"--cacert needs --tls"}},
		{"cacert without target", []string{"--tls", "--cacert", "ca.pem"}, []string{"--cacert needs --target"}},
		{"missing cacert", []string{"--tls", "--target", "127.0.0.1:1", "--cacert", "/nonexistent/ca.pem"}, []string{"--cacert", "/nonexistent/ca.pem", "no such file"}},
		{"cacert without a certificate", []string{"--tls", "--target", "127.0.0.1:1", "--cacert", "/dev/null"}, []string{"--cacert", "/dev/null", "no PEM certificate"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(append([]string{"bulk"}, tc.args...)...)
			if code != exitUsage {
				t.Errorf("got exit %d (%q), want %d", code, stderr, exitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("got %q, want it to name %s", stderr, w)
				}
			}
		})
	}
}

// TestBulkEndToEnd runs "rpclab bulk" as a user would: it starts "rpclab
// serve" as a child process and measures every transport.
func TestBulkEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "bulk.jsonl")
	cmd := rpclabCmd(ctx, "bulk", "--size", "8MiB", "--chunk", "64KiB,1MiB", "--warmup", "0", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("rpclab bulk: %v\n%s\n%s", err, stdout, stderr.String())
	}
	// A progress line per step, as it ends: its place, settings, throughput and time.
	n := 2 * len(bulk.Transports)
	lines := regexp.MustCompile(fmt.Sprintf(`(?m)^\[(\d+)/%d\] (\S+) +size=8MiB +chunk=(64KiB|1MiB) +streams=1 +\d+ MB/s  \(\d+\.\ds\)$`, n)).
		FindAllStringSubmatch(stderr.String(), -1)
	if len(lines) != n || lines[0][1] != "1" || lines[0][2] != bulk.Transports[0] || lines[n-1][1] != strconv.Itoa(n) {
		t.Errorf("got %d progress lines, want %d, [1/%d] %s first:\n%s", len(lines), n, n, bulk.Transports[0], stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := result.ReadAll(t.Context(), f)
	recs := set.Bulk
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), 2*len(bulk.Transports); got != want {
		t.Fatalf("got %d records, want %d", got, want)
	}
	for _, r := range recs {
		if r.Status != result.StatusOK || r.Bytes != 8<<20 || r.Spec.Server != "go" {
			t.Errorf("got %s chunk %d: %s, %d bytes, server %q; want ok, %d bytes, server go",
				r.Spec.Transport, r.Spec.ChunkBytes, r.Status, r.Bytes, r.Spec.Server, 8<<20)
		}
	}
	for _, tr := range bulk.Transports {
		if !strings.Contains(string(stdout), " "+tr+" ") {
			t.Errorf("the table has no row for %s:\n%s", tr, stdout)
		}
	}
}

// TestBulkThroughNetem puts a netem proxy in front of every listener.
func TestBulkThroughNetem(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "bulk.jsonl")
	cmd := rpclabCmd(ctx, "bulk", "--size", "4MiB", "--chunk", "64KiB", "--transport", "grpc,sidechannel,http2",
		"--warmup", "0", "--delay", "500us", "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rpclab bulk --delay: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := result.ReadAll(t.Context(), f)
	recs := set.Bulk
	if err != nil || len(recs) != 3 {
		t.Fatalf("got %d records, %v; want 3", len(recs), err)
	}
	for _, r := range recs {
		if r.Status != result.StatusOK || r.Spec.Netem == nil || r.Spec.Netem.Up.DelayNS != 500e3 || r.Spec.Netem.Down.DelayNS != 500e3 {
			t.Errorf("got %s: %s (%s), netem %+v; want ok through 500µs each way", r.Spec.Transport, r.Status, r.Error, r.Spec.Netem)
		}
	}
}

// TestBulkOverTLSEndToEnd runs "rpclab bulk --tls" as a user would: the
// child server gets a fresh certificate, every transport runs over TLS,
// the records say so and the table names the transports "+tls" beside
// TCP over TLS as their reference.
func TestBulkOverTLSEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "bulk.jsonl")
	cmd := rpclabCmd(ctx, "bulk", "--tls", "--size", "4MiB", "--chunk", "64KiB", "--warmup", "0", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("rpclab bulk --tls: %v\n%s\n%s", err, stdout, stderr.String())
	}
	set, err := result.ReadAllFile(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(set.Bulk), len(bulk.Transports); got != want {
		t.Fatalf("got %d records, want %d", got, want)
	}
	for _, r := range set.Bulk {
		if r.Status != result.StatusOK || r.Bytes != 4<<20 || !r.Spec.TLS {
			t.Errorf("got %s: %s (%s), %d bytes, tls %v; want ok, %d bytes, tls true", r.Spec.Transport, r.Status, r.Error, r.Bytes, r.Spec.TLS, 4<<20)
		}
	}
	for _, tr := range bulk.Transports {
		if !strings.Contains(string(stdout), " "+tr+"+tls ") {
			t.Errorf("the table has no row for %s+tls:\n%s", tr, stdout)
		}
	}
}

// TestBulkTLSWrongCA: "rpclab bulk --tls --target" against a TLS server
// whose certificate --cacert does not hold fails at once, naming the
// certificate, with no record.
func TestBulkTLSWrongCA(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	dir := t.TempDir()
	served, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := served.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	otherCA := filepath.Join(dir, "other.pem")
	if err := os.WriteFile(otherCA, other.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(asMain, "1")
	srv, err := server.StartProcess(ctx, []string{os.Args[0], "serve", "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile}, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	out := filepath.Join(dir, "bulk.jsonl")
	for _, tc := range []struct {
		name string
		ca   string
		code int
		want string
	}{
		{"its own certificate", certFile, 0, ""},
		{"another certificate", otherCA, 1, "certificate signed by unknown authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess("bulk", "--tls", "--target", srv.Addr, "--cacert", tc.ca, "--transport", "tcp,sidechannel",
				"--size", "1MiB", "--chunk", "64KiB", "--out", out, "--force")
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d (%q), want %d naming %q", code, stderr, tc.code, tc.want)
			}
			if testing.Verbose() {
				t.Log(stderr)
			}
		})
	}
}
