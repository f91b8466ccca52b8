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

// The pool libraries as a stranger installs them: each test packs or
// installs the library with its ecosystem's ordinary command into a
// temporary directory, builds the example project (outside the source tree)
// against what was installed, and runs it against a real `rpclab serve`.

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
	run(t, 5*time.Minute, tmp, nil, "cmake", "-S", src, "-B", b, "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_INSTALL_PREFIX="+prefix)
	run(t, 5*time.Minute, tmp, nil, "cmake", "--build", b)
	run(t, time.Minute, tmp, nil, "cmake", "--install", b)
	app := filepath.Join(tmp, "app")
	copyDir(t, filepath.Join(src, "example"), app)
	run(t, 5*time.Minute, app, nil, "cmake", "-S", ".", "-B", "build", "-DCMAKE_PREFIX_PATH="+prefix)
	run(t, 5*time.Minute, app, nil, "cmake", "--build", "build")
	addr := serveRPCLab(t).Addr
	if out := run(t, time.Minute, app, nil, "./build/pool-example", addr, "200"); !strings.Contains(out, "ok 200") {
		t.Fatalf("pool-example: %s", out)
	}
}

// TestJavaPoolInstall runs `mvn install` of the pool library (and its
// parent pom) into a temporary local repository, builds pool/example as a
// project of its own against that repository, and runs it against rpclab
// serve: 200 unary calls over a pool of 4. Maven reads every other artifact
// from ~/.m2/repository through a mirror (so the temporary repository holds
// what a stranger's would, without fetching the world again); a first step
// with the ordinary repository puts the plugins install needs there.
func TestJavaPoolInstall(t *testing.T) {
	selected(t, "java")
	if _, err := exec.LookPath("mvn"); err != nil {
		t.Skip("mvn not found: no Java toolchain")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	java, err := filepath.Abs(filepath.Join("..", "java"))
	if err != nil {
		t.Fatal(err)
	}
	flags := append([]string{"-q", "-B", "-Dstyle.color=never"}, strings.Fields(os.Getenv("RPCLAB_MVN_FLAGS"))...)
	mvn := func(dir string, args ...string) string {
		return run(t, 10*time.Minute, dir, nil, "mvn", append(append([]string(nil), flags...), args...)...)
	}
	mvn(java, "-f", "parent/pom.xml", "-pl", ":rpclab-pool", "-am", "-DskipTests", "package", "install:help")

	settings := filepath.Join(tmp, "settings.xml")
	mirror := "<settings><mirrors><mirror><id>home-cache</id><mirrorOf>*</mirrorOf><url>file://" +
		filepath.Join(home, ".m2", "repository") + "</url></mirror></mirrors></settings>\n"
	if err := os.WriteFile(settings, []byte(mirror), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := "-Dmaven.repo.local=" + filepath.Join(tmp, "m2")
	mvn(java, "-s", settings, repo, "-f", "parent/pom.xml", "-pl", ":rpclab-pool", "-am", "-DskipTests", "install")
	for _, f := range []string{"rpclab-pool-0.1.0.jar", "rpclab-pool-0.1.0-sources.jar", "rpclab-pool-0.1.0-javadoc.jar", "rpclab-pool-0.1.0.pom"} {
		if _, err := os.Stat(filepath.Join(tmp, "m2", "io", "rpclab", "rpclab-pool", "0.1.0", f)); err != nil {
			t.Errorf("installed: %v", err)
		}
	}
	app := filepath.Join(tmp, "app")
	if err := os.CopyFS(app, os.DirFS(filepath.Join(java, "pool", "example"))); err != nil {
		t.Fatal(err)
	}
	mvn(app, "-s", settings, repo, "compile", "dependency:build-classpath", "-Dmdep.outputFile=cp.txt")
	cp, err := os.ReadFile(filepath.Join(app, "cp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cp), filepath.Join(tmp, "m2", "io", "rpclab", "rpclab-pool")) {
		t.Fatalf("the example's class path does not take rpclab-pool from the temporary repository: %s", cp)
	}
	addr := serveRPCLab(t).Addr
	out := run(t, 2*time.Minute, app, nil, "java", "-cp", "target/classes:"+strings.TrimSpace(string(cp)), "example.PoolExample", addr, "200")
	if !strings.Contains(out, "ok 200") {
		t.Fatalf("PoolExample: %s", out)
	}
}

// TestRustPoolPackage packs clients/rust/pool with `cargo package`, unpacks
// the .crate into a temporary directory, builds pool/example there as a
// crate of its own depending on the unpacked package by path (so the packed
// crate is built alone, reaching nothing outside it: cargo package's own
// verify build, a second debug build of every dependency, is skipped), and
// runs it against rpclab serve: 200 unary calls over a pool of 4. Compiled
// dependencies are shared with clients/rust's target directory.
func TestRustPoolPackage(t *testing.T) {
	selected(t, "rust")
	rust, err := filepath.Abs(filepath.Join("..", "rust"))
	if err != nil {
		t.Fatal(err)
	}
	target := []string{"CARGO_TARGET_DIR=" + filepath.Join(rust, "target")}
	run(t, 15*time.Minute, rust, target, "cargo", "package", "-q", "-p", "rpclab-pool", "--allow-dirty", "--no-verify")
	tmp := t.TempDir()
	crate := filepath.Join(rust, "target", "package", "rpclab-pool-0.1.0.crate")
	run(t, time.Minute, tmp, nil, "tar", "-xzf", crate)
	for _, f := range []string{"Cargo.toml", "README.md", "src/lib.rs", "tests/pool.rs", "tests/kernel/mod.rs", "examples/streamlimit.rs", "examples/restart.rs"} {
		if _, err := os.Stat(filepath.Join(tmp, "rpclab-pool-0.1.0", f)); err != nil {
			t.Errorf("packed crate: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "rpclab-pool-0.1.0", "build.rs")); err == nil {
		t.Errorf("packed crate: has a build.rs")
	}
	app := filepath.Join(tmp, "app")
	if err := os.CopyFS(app, os.DirFS(filepath.Join(rust, "pool", "example"))); err != nil {
		t.Fatal(err)
	}
	run(t, 15*time.Minute, app, target, "cargo", "build", "-q", "--release")
	addr := serveRPCLab(t).Addr
	bin := filepath.Join(rust, "target", "release", "pool-example")
	if out := run(t, time.Minute, app, nil, bin, addr, "200"); !strings.Contains(out, "ok 200") {
		t.Fatalf("pool-example: %s", out)
	}
}
