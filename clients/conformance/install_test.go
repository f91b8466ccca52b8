// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/server"
)

// The pool libraries as a stranger installs them: each test packs or
// installs the library with its ecosystem's ordinary command into a
// temporary directory, builds the example project (outside the source tree)
// against what was installed, and runs it against a real `rpclab serve`.

// serveRpclab starts `rpclab serve` on loopback with extra flags, stopped
// when t ends, and returns its address.
func serveRpclab(t *testing.T, extra ...string) string {
	t.Helper()
	ctx := testutil.Context(t)
	srv, err := server.StartProcess(ctx, append([]string{rpclabBin, "serve", "--listen", "127.0.0.1:0"}, extra...), nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	return srv.Addr
}

// runIn runs name args in dir within timeout and returns its output; a
// failure fails t with the output.
func runIn(t *testing.T, dir string, timeout time.Duration, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// copyDir copies the regular files of src (not its subdirectories) into a
// new directory dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCppPoolInstall installs clients/cpp/pool with CMake into a temporary
// prefix, builds pool/example as a project of its own with
// find_package(rpclabPool) from that prefix, and runs it against rpclab
// serve: 200 unary calls over a pool of 4.
func TestCppPoolInstall(t *testing.T) {
	selected(t, "cpp")
	tmp := t.TempDir()
	src, err := filepath.Abs(filepath.Join("..", "cpp", "pool"))
	if err != nil {
		t.Fatal(err)
	}
	prefix, b := filepath.Join(tmp, "prefix"), filepath.Join(tmp, "build")
	runIn(t, tmp, 5*time.Minute, nil, "cmake", "-S", src, "-B", b, "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_INSTALL_PREFIX="+prefix)
	runIn(t, tmp, 5*time.Minute, nil, "cmake", "--build", b)
	runIn(t, tmp, time.Minute, nil, "cmake", "--install", b)
	app := filepath.Join(tmp, "app")
	copyDir(t, filepath.Join(src, "example"), app)
	runIn(t, app, 5*time.Minute, nil, "cmake", "-S", ".", "-B", "build", "-DCMAKE_PREFIX_PATH="+prefix)
	runIn(t, app, 5*time.Minute, nil, "cmake", "--build", "build")
	addr := serveRpclab(t)
	if out := runIn(t, app, time.Minute, nil, "./build/pool-example", addr, "200"); !strings.Contains(out, "ok 200") {
		t.Fatalf("pool-example: %s", out)
	}
}
