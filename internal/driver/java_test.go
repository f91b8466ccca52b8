// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
)

// javaPOM is the parent pom of rpclab's Java client, whose grpc.version
// the official Java worker is fetched at.
const javaPOM = "../../clients/java/parent/pom.xml"

// javaWorkerPOM asks Maven for grpc-java's benchmarks (LoadWorker) at
// the newest version not above clients/java's: grpc-benchmarks is not
// published for every grpc-java release (1.83.0 has none on Maven
// Central; 1.79.0 is the newest at the time of writing).
const javaWorkerPOM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>rpclab</groupId>
  <artifactId>grpc-java-load-worker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.grpc</groupId>
      <artifactId>grpc-benchmarks</artifactId>
      <version>[,%s]</version>
    </dependency>
  </dependencies>
</project>
`

// javaWorkerClasspath resolves grpc-java's io.grpc:grpc-benchmarks and
// its dependencies from Maven Central with mvn dependency:build-classpath,
// once per clients/java grpc version, into the user cache directory, and
// returns the class path and the grpc-benchmarks version it holds.
func javaWorkerClasspath(t *testing.T) (classpath, version string) {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv(requireOfficial) == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format+" (set "+requireOfficial+"=1 to make this a failure)", args...)
	}
	if _, err := exec.LookPath("java"); err != nil {
		skip("grpc-java's worker: no java to run it: %v", err)
	}
	pom, err := os.ReadFile(javaPOM)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<grpc\.version>([^<]+)</grpc\.version>`).FindSubmatch(pom)
	if m == nil {
		t.Fatalf("%s: no <grpc.version>", javaPOM)
	}
	want := string(m[1])
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "rpclab", "grpc-java-benchmarks-"+want)
	cpFile := filepath.Join(dir, "classpath.txt")
	if b, err := os.ReadFile(cpFile); err == nil && len(b) > 0 {
		return strings.TrimSpace(string(b)), benchmarksVersion(t, string(b))
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		skip("grpc-java's worker: no mvn to fetch io.grpc:grpc-benchmarks: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pom.xml"), []byte(strings.Replace(javaWorkerPOM, "%s", want, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The first fetch downloads about 75 jars and took 3m41s here: it gets
	// its own bound, beyond the test's.
	fctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	tmp := cpFile + ".tmp" + strconv.Itoa(os.Getpid())
	fetch := exec.CommandContext(fctx, mvn, "-B", "-q", "dependency:build-classpath", "-Dmdep.outputFile="+tmp)
	fetch.Dir = dir
	if b, err := fetch.CombinedOutput(); err != nil {
		skip("grpc-java's worker: mvn dependency:build-classpath of io.grpc:grpc-benchmarks [,%s] in %s: %v\n%s", want, dir, err, b)
	}
	if err := os.Rename(tmp, cpFile); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(cpFile)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b)), benchmarksVersion(t, string(b))
}

// benchmarksVersion is the version of the grpc-benchmarks jar on cp.
func benchmarksVersion(t *testing.T, cp string) string {
	t.Helper()
	for _, jar := range filepath.SplitList(strings.TrimSpace(cp)) {
		if v, ok := strings.CutPrefix(filepath.Base(jar), "grpc-benchmarks-"); ok {
			return strings.TrimSuffix(v, ".jar")
		}
	}
	t.Fatalf("no grpc-benchmarks jar on the class path %q", cp)
	return ""
}

// startJava runs grpc-java's LoadWorker on free loopback ports until the
// test ends and returns its driver address; its output is logged if the
// test fails.
func startJava(t *testing.T) string {
	t.Helper()
	cp, version := javaWorkerClasspath(t)
	t.Logf("grpc-java's LoadWorker from io.grpc:grpc-benchmarks %s", version)
	ports := make([]int, 2)
	for i := range ports {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = lis.Addr().(*net.TCPAddr).Port
		lis.Close()
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "loadworker.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", "-cp", cp, "io.grpc.benchmarks.driver.LoadWorker",
		"--driver_port="+strconv.Itoa(ports[0]), "--server_port="+strconv.Itoa(ports[1]))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("LoadWorker's output:\n%s", b)
		}
	})
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
}

// TestSweepJavaAndRPCLabWorker: one step of rpclab's driver on
// grpc-java's official LoadWorker and an rpclab worker at once. The Java
// worker is seen as official (no WorkerDetail), answers the setup and the
// marks, its buckets are converted (error stated) and its request_results
// counted, and the record is the exact merge of both workers' figures.
func TestSweepJavaAndRPCLabWorker(t *testing.T) {
	jw := startJava(t) // may first fetch the class path, under its own bound
	// The test's bound (testutil.LongTimeout) starts once the JVM is
	// started: a cold JVM on a busy 2-core machine takes seconds to listen
	// and more to make its first RPCs, and nothing below waits on a clock
	// but this bound.
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	rl, _ := startWorker(t)
	target, served := startPing(t)
	// Dial waits for the JVM to listen.
	remotes, err := Connect(ctx, []string{jw, rl}, testutil.LongTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, r := range remotes {
			r.Close()
		}
	}()
	// Warm the JVM up with a run of its own until the server answered its
	// RPCs (a cold JVM took over a second for its first ones, which a
	// step's warm-up then had to cover): the step's warm-up is then only
	// the step's.
	warm, err := remotes[0].StartClient(ctx, testutil.ClosedLoopConfig(target, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	waitServed(t, ctx, served, 100)
	if err := warm.Close(ctx); err != nil {
		t.Fatal(err)
	}
	spec := sweepSpec(target, 4)
	spec.Conns = []loadgen.ConnMode{{Kind: loadgen.PerWorker}}
	spec.Interval = 500 * time.Millisecond
	var recs []*result.Record
	if err := Sweep(ctx, remotes, spec, collect(&recs), nil); err != nil {
		t.Fatal(err)
	}
	rec := recs[0]
	if rec.Status != result.StatusOK || len(rec.Workers) != 2 {
		t.Fatalf("got status %s (%s) with %d workers, want ok with 2", rec.Status, rec.Error, len(rec.Workers))
	}
	j, r := rec.Workers[0], rec.Workers[1]
	if j.Impl != "official" || j.Status != "ok" || j.Inflight != 2 || j.Requests == 0 || j.HistogramRelError != 0.005 || j.ConnsObserved != -1 || j.Cores <= 0 || j.CPUNS <= 0 {
		t.Errorf("Java worker: got %+v; want official, ok, share 2, requests > 0, rel error 0.005, conns -1, cores and CPU reported", j)
	}
	if r.Impl != "rpclab" || r.Requests == 0 || r.ConnsObserved != 2 {
		t.Errorf("rpclab worker: got impl %s, %d requests, %d connections; want rpclab, > 0, 2", r.Impl, r.Requests, r.ConnsObserved)
	}
	if total := j.Requests + r.Requests; total > served.Load() {
		t.Errorf("the workers counted %d RPCs, the server answered %d in all: want at most that", total, served.Load())
	}
	checkMerged(t, rec)
}
