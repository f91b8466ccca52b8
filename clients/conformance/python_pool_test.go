// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"archive/zip"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/server"
)

// serveRPCLab starts `rpclab serve` on a free loopback port with extra
// flags and returns it; it stops when the test ends.
func serveRPCLab(t *testing.T, extra ...string) *server.Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	argv := append([]string{rpclabBin, "serve", "--listen", "127.0.0.1:0"}, extra...)
	srv, err := server.StartProcess(ctx, argv, nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// run runs name with args in dir within timeout and returns its combined
// output; a failure fails t with it.
func run(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, out)
	}
	return string(out)
}

// copyTree copies the files of src (a directory of the source tree) into
// dst, leaving out what builds leave there.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		name := d.Name()
		if d.IsDir() && (name == "__pycache__" || name == "node_modules" || name == "build" || strings.HasSuffix(name, ".egg-info")) {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// benchmarkProtos writes grpc.testing's benchmark_service.proto and
// messages.proto into dir, flat (the import made relative), for a fresh
// project to generate its own stubs from.
func benchmarkProtos(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"benchmark_service.proto", "messages.proto"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "proto", "grpc", "testing", name))
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.ReplaceAll(string(b), `import "grpc/testing/messages.proto";`, `import "messages.proto";`))
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPythonPoolPackage is rpclab-grpc-pool as a stranger installs it: its
// sdist and wheel built (python -m build with PyPI's setuptools, from a copy
// of clients/python/pool, so nothing lands in the tree) in a fresh venv in a
// temporary directory, the wheel installed there with pip from PyPI, the
// example's stubs generated there, and the README's example run against
// rpclab serve (about 100 s on a busy 2-core host, mostly pip).
func TestPythonPoolPackage(t *testing.T) {
	selected(t, "python")
	py := os.Getenv("PYTHON")
	if py == "" {
		py = "python3"
	}
	tmp := t.TempDir()
	src, app, dist, venv := filepath.Join(tmp, "src"), filepath.Join(tmp, "app"), filepath.Join(tmp, "dist"), filepath.Join(tmp, "venv")
	copyTree(t, filepath.Join("..", "python", "pool"), src)
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	pipEnv := []string{"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1"}
	run(t, 2*time.Minute, tmp, nil, py, "-m", "venv", venv)
	vpy := filepath.Join(venv, "bin", "python")
	// One pip run for the build tools and the example's stub generator; the
	// build runs in this venv (--no-isolation) rather than in two more.
	run(t, 5*time.Minute, tmp, pipEnv, vpy, "-m", "pip", "install", "-q", "build", "setuptools>=77", "grpcio-tools")
	run(t, 5*time.Minute, tmp, pipEnv, vpy, "-m", "build", "-q", "--no-isolation", "--sdist", "--wheel", "--outdir", dist, src)
	wheels, _ := filepath.Glob(filepath.Join(dist, "rpclab_grpc_pool-*.whl"))
	sdists, _ := filepath.Glob(filepath.Join(dist, "rpclab_grpc_pool-*.tar.gz"))
	if len(wheels) != 1 || len(sdists) != 1 {
		t.Fatalf("got wheels %v and sdists %v, want one of each", wheels, sdists)
	}
	zr, err := zip.OpenReader(wheels[0])
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, f := range zr.File {
		in[filepath.Base(f.Name)] = true
	}
	zr.Close()
	for _, want := range []string{"py.typed", "aio.py", "LICENSE", "METADATA"} {
		if !in[want] {
			t.Errorf("the wheel %s has no %s", filepath.Base(wheels[0]), want)
		}
	}
	sdist := map[string]bool{}
	for _, name := range tarNames(t, sdists[0]) {
		sdist[name[strings.Index(name, "/")+1:]] = true
	}
	for _, want := range []string{"LICENSE", "README.md", "pyproject.toml", "rpclab_pool/py.typed", "rpclab_pool/aio.py"} {
		if !sdist[want] {
			t.Errorf("the sdist %s has no %s", filepath.Base(sdists[0]), want)
		}
	}
	run(t, 5*time.Minute, app, pipEnv, vpy, "-m", "pip", "install", "-q", wheels[0])
	benchmarkProtos(t, app)
	run(t, time.Minute, app, nil, vpy, "-m", "grpc_tools.protoc", "-I", ".", "--python_out=.", "--grpc_python_out=.",
		"benchmark_service.proto", "messages.proto")
	example, err := os.ReadFile(filepath.Join("..", "python", "pool", "example", "example.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "example.py"), example, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := serveRPCLab(t)
	out := run(t, time.Minute, app, nil, vpy, "example.py", srv.Addr)
	if want := "100 RPCs over 4 channels, in flight now: (0, 0, 0, 0)"; !strings.Contains(out, want) {
		t.Errorf("the example printed:\n%s\nwant a line %q", out, want)
	}
	// The installed module is the wheel's, not the tree's.
	where := run(t, time.Minute, app, nil, vpy, "-c", "import rpclab_pool; print(rpclab_pool.__file__)")
	if !strings.HasPrefix(strings.TrimSpace(where), venv) {
		t.Errorf("rpclab_pool was imported from %s, want the fresh venv %s", where, venv)
	}
}

// TestPythonPoolStreamLimit is the known answer for growth at the server's
// stream limit: against rpclab serve --max-concurrent-streams 4 --delay 2ms,
// 16 RPCs in flight through a pool of size 1 make 4 connections as the
// kernel sees them with growth on (max 8, 4 streams each) and 1 with it off.
// The throughput ratio is logged, not asserted: the Python client's own CPU
// caps it on a shared machine (each connection can carry 2000 RPCs/s).
func TestPythonPoolStreamLimit(t *testing.T) {
	py := buildPython(t)
	srv := serveRPCLab(t, "--max-concurrent-streams", "4", "--delay", "2ms")
	dir := filepath.Join("..", "python", "pool")
	out := run(t, 3*time.Minute, dir, []string{"PYTHONPATH=.."}, py, "-m", "tests.streamlimit", srv.Addr, "2")
	checkStreamLimit(t, out, "RPCs/s")
}

// checkStreamLimit reads the last line of a stream-limit script's output
// (tests/streamlimit.py, test/streamlimit.js: JSON with growth on and off)
// and wants 4 connections with growth on and 1 with it off, as the kernel
// counted them; the throughput, in unit, is logged, not asserted.
func checkStreamLimit(t *testing.T, out, unit string) {
	t.Helper()
	line := strings.TrimSpace(out)
	line = line[strings.LastIndex(line, "\n")+1:]
	var got struct {
		On, Off struct {
			Conns, Channels, RPS, Resizes int
		}
		Ratio float64
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.On.Conns != 4 || got.Off.Conns != 1 {
		t.Errorf("got %d connections with growth on and %d off, want 4 and 1 (%s)", got.On.Conns, got.Off.Conns, line)
	}
	t.Logf("growth on: %d connections, %d %s; off: %d connection, %d %s; ratio %.2f",
		got.On.Conns, got.On.RPS, unit, got.Off.Conns, got.Off.RPS, unit, got.Ratio)
}
