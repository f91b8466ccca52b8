// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestScanFDs checks the getdents listing that kernels before 6.2 use in
// place of the count in one stat. It lists a directory the test owns, laid
// out as /proc/PID/fd is (one entry per descriptor number), so that nothing
// else in the process moves the count: more entries than one getdents
// buffer holds are all counted, "." and ".." are not, and the hash changes
// when one number is replaced by another, the count unchanged.
func TestScanFDs(t *testing.T) {
	dir := t.TempDir()
	const n = 2000 // about 48 KiB of dirents: several reads of the 32 KiB buffer
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := &diag{pid: os.Getpid(), fdDir: dir}
	list := func() fdList {
		t.Helper()
		l, err := d.scanFDs()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	before := list()
	if before.n != n {
		t.Fatalf("scanFDs counts %d entries, want %d", before.n, n)
	}
	if again := list(); again != before {
		t.Fatalf("the same directory listed twice: %+v, then %+v", before, again)
	}
	if err := os.Rename(filepath.Join(dir, "7"), filepath.Join(dir, "7000")); err != nil {
		t.Fatal(err)
	}
	moved := list()
	if moved.n != n || moved.h == before.h {
		t.Fatalf("after replacing entry 7 by 7000: %+v, want %d entries and a hash other than %x", moved, n, before.h)
	}

	// This process's own descriptors list without error, stdin to stderr
	// at least.
	d = &diag{pid: os.Getpid(), fdDir: "/proc/" + strconv.Itoa(os.Getpid()) + "/fd"}
	if own := list(); own.n < 3 {
		t.Fatalf("/proc/self/fd: %d descriptors, want at least 3", own.n)
	}
}
