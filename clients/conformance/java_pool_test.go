// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// javaPoolPrograms compiles clients/java/pool and its test classes (the
// programs StreamLimit and Restart live there, beside the unit tests) and
// returns that directory and the class path that runs them: the pool, its
// test classes and its test-scope dependencies (grpc-netty-shaded), as Maven
// resolved them.
func javaPoolPrograms(t *testing.T) (dir, cp string) {
	t.Helper()
	selected(t, "java")
	if _, err := exec.LookPath("mvn"); err != nil {
		t.Skip("mvn not found: no Java toolchain")
	}
	dir = filepath.Join("..", "java", "pool")
	out := filepath.Join(t.TempDir(), "cp.txt")
	args := append([]string{"-q", "-B", "-Dstyle.color=never"}, strings.Fields(os.Getenv("RPCLAB_MVN_FLAGS"))...)
	run(t, 10*time.Minute, dir, nil, "mvn", append(args, "test-compile", "dependency:build-classpath",
		"-Dmdep.includeScope=test", "-Dmdep.outputFile="+out)...)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return dir, "target/classes:target/test-classes:" + strings.TrimSpace(string(b))
}

// TestJavaPoolStreamLimit is the known answer for growth at the server's
// stream limit with the Java pool (io.rpclab.pool.StreamLimit in the pool's
// test sources): against rpclab serve --max-concurrent-streams 4 --delay
// 2ms, 16 calls in flight through a pool of size 1 make 4 connections as the
// kernel sees them with growth on (max 8, 4 streams each) and 1 with it off.
// The throughput ratio is logged, not asserted.
func TestJavaPoolStreamLimit(t *testing.T) {
	dir, cp := javaPoolPrograms(t)
	srv := serveRPCLab(t, "--max-concurrent-streams", "4", "--delay", "2ms")
	out := run(t, 3*time.Minute, dir, nil, "java", "-cp", cp, "io.rpclab.pool.StreamLimit", srv.Addr, "2")
	checkStreamLimit(t, out, "RPCs/s")
}

// TestJavaPoolRestart: see testPoolRestart (io.rpclab.pool.Restart in the
// pool's test sources).
func TestJavaPoolRestart(t *testing.T) {
	dir, cp := javaPoolPrograms(t)
	// grpc-java reports a connection reset while it writes a call's headers
	// as UNKNOWN "channel closed" (grpc/grpc-java#10120), not UNAVAILABLE:
	// at most the 4 calls in flight on the killed connections.
	javaReset := upstreamFault{code: "UNKNOWN", words: "channel closed", issue: "grpc/grpc-java#10120", most: 4}
	testPoolRestartAllowing(t, []upstreamFault{javaReset}, dir, nil, "java", "-cp", cp, "io.rpclab.pool.Restart")
}
