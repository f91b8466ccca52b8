// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Command mutate checks that the tests guarding the numbers users read fail
// when those numbers are broken. It copies the working tree (what git
// tracks or would track) to a scratch directory, applies each named mutation of scripts/mutations.txt there, one
// at a time, and runs the mutation's tests: every mutation must make them
// fail ("killed"). A mutation that leaves them green ("survived"), or whose
// text is no longer in its file ("stale"), fails the run.
//
//	go run ./scripts/mutate [-list scripts/mutations.txt] [-run REGEXP]
//
// The file holds blocks separated by blank lines, each with the keys
// name, file, find, replace and test (a package pattern, optionally
// followed by go test flags such as -run). find must occur exactly once in
// file; \n in find and replace stands for a newline.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// mutation is one named change that the tests must catch.
type mutation struct {
	name, file, find, replace string
	test                      []string
	line                      int // where the block starts in the list
}

func main() {
	list := flag.String("list", "scripts/mutations.txt", "the list of mutations")
	only := flag.String("run", "", "run only the mutations whose name matches this regexp")
	timeout := flag.Duration("timeout", 5*time.Minute, "the longest one mutation's tests may run")
	flag.Parse()
	if err := run(*list, *only, *timeout, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(list, only string, timeout time.Duration, out io.Writer) error {
	f, err := os.Open(list)
	if err != nil {
		return err
	}
	ms, err := parse(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", list, err)
	}
	if only != "" {
		re, err := regexp.Compile(only)
		if err != nil {
			return fmt.Errorf("-run: %w", err)
		}
		var keep []mutation
		for _, m := range ms {
			if re.MatchString(m.name) {
				keep = append(keep, m)
			}
		}
		ms = keep
	}
	if len(ms) == 0 {
		return errors.New("no mutations to run")
	}
	scratch, err := os.MkdirTemp("", "rpclab-mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if err := copyTracked(scratch); err != nil {
		return err
	}
	var bad []string
	for _, m := range ms {
		verdict, detail := try(scratch, m, timeout)
		fmt.Fprintf(out, "%-9s %s (%s)\n", verdict, m.name, m.file)
		if verdict != "killed" {
			bad = append(bad, m.name)
			if detail != "" {
				fmt.Fprintln(out, indent(detail))
			}
		}
	}
	fmt.Fprintf(out, "mutate: %d killed, %d not\n", len(ms)-len(bad), len(bad))
	if len(bad) > 0 {
		return fmt.Errorf("not killed: %s", strings.Join(bad, "; "))
	}
	return nil
}

// try applies m in the scratch tree, runs its tests and restores the file.
func try(scratch string, m mutation, timeout time.Duration) (verdict, detail string) {
	path := filepath.Join(scratch, m.file)
	orig, err := os.ReadFile(path)
	if err != nil {
		return "stale", err.Error()
	}
	if n := bytes.Count(orig, []byte(m.find)); n != 1 {
		return "stale", fmt.Sprintf("line %d: find occurs %d times in %s, want once", m.line, n, m.file)
	}
	mutated := bytes.Replace(orig, []byte(m.find), []byte(m.replace), 1)
	if err := os.WriteFile(path, mutated, 0o644); err != nil {
		return "stale", err.Error()
	}
	defer os.WriteFile(path, orig, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dir, pkgs := moduleOf(scratch, m.test)
	args := append([]string{"test", "-count=1"}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	outb, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		return "timeout", tail(outb)
	case err == nil && bytes.Contains(outb, []byte("[no tests to run]")):
		// A -run pattern that matches nothing is a broken entry, not a
		// surviving mutation.
		return "stale", "its test pattern matched no test: " + tail(outb)
	case err == nil:
		return "survived", ""
	case bytes.Contains(outb, []byte("[build failed]")) || bytes.Contains(outb, []byte("[setup failed]")):
		// A mutation that does not compile proves nothing about the tests.
		return "nobuild", tail(outb)
	}
	return "killed", ""
}

func parse(r io.Reader) ([]mutation, error) {
	var ms []mutation
	cur := mutation{}
	seen := false
	flush := func() error {
		if !seen {
			return nil
		}
		if cur.name == "" || cur.file == "" || cur.find == "" || len(cur.test) == 0 {
			return fmt.Errorf("line %d: a mutation needs name, file, find and test", cur.line)
		}
		ms = append(ms, cur)
		cur, seen = mutation{}, false
		return nil
	}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if strings.TrimSpace(line) == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want key: value", n)
		}
		if !seen {
			cur.line, seen = n, true
		}
		val = strings.ReplaceAll(strings.TrimSpace(val), `\n`, "\n")
		switch strings.TrimSpace(key) {
		case "name":
			cur.name = val
		case "file":
			cur.file = val
		case "find":
			cur.find = val
		case "replace":
			cur.replace = val
		case "test":
			cur.test = strings.Fields(val)
		default:
			return nil, fmt.Errorf("line %d: unknown key %q", n, key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return ms, nil
}

// copyTracked copies every file git tracks, or would track (untracked and
// not ignored), into dir.
func copyTracked(dir string) error {
	outb, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(outb), "\x00"), "\x00") {
		if name == "" || strings.HasPrefix(name, "clients/") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return err
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// moduleOf returns the directory to run go test in for test (a package
// pattern then flags) and the arguments to run there: a package inside a
// nested module (a go.mod of its own below scratch, such as pool/) runs
// from that module's directory, its pattern made relative to it.
func moduleOf(scratch string, test []string) (string, []string) {
	if len(test) == 0 || !strings.HasPrefix(test[0], "./") {
		return scratch, test
	}
	rel := strings.TrimSuffix(strings.TrimPrefix(test[0], "./"), "/...")
	for d := rel; d != "." && d != "/" && d != ""; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(scratch, d, "go.mod")); err == nil {
			inner, _ := filepath.Rel(d, strings.TrimPrefix(test[0], "./"))
			out := append([]string{"./" + filepath.ToSlash(inner)}, test[1:]...)
			return filepath.Join(scratch, d), out
		}
	}
	return scratch, test
}
