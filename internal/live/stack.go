// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
)

// maxMapsBytes bounds the /proc/PID/maps read for the stack's libraries.
const maxMapsBytes = 16 << 20

// maxExeScan bounds the bytes of the executable scanned for a Rust
// binary's tonic or a static C-core.
const maxExeScan = 512 << 20

// tonicMark finds tonic's crate path with its version in a Rust binary
// (panic locations keep ".../tonic-0.12.3/src/...").
var tonicMark = regexp.MustCompile(`tonic-(\d+\.\d+\.\d+)`)

// cCoreMark is a string C-core's channel arguments carry, in a binary
// that links it statically.
var cCoreMark = []byte("grpc.primary_user_agent")

// DetectStack names pid's gRPC stack from what it runs and maps: a Go
// binary's build info (and its grpc-go version), a JVM, C-core's library
// for C++, Python and Ruby, node for grpc-js, tonic's crate in a Rust
// binary; else unknown. It reads only /proc/PID/exe and /proc/PID/maps.
func DetectStack(pid int) result.LiveProcess {
	p := result.LiveProcess{PID: pid, Stack: result.StackUnknown, Language: "unknown"}
	exePath := fmt.Sprintf("/proc/%d/exe", pid)
	if exe, err := os.Readlink(exePath); err == nil {
		p.Exe = exe
	}
	base := filepath.Base(p.Exe)
	if bi, err := buildinfo.ReadFile(exePath); err == nil {
		p.Language = "go"
		for _, d := range bi.Deps {
			if d.Path == "google.golang.org/grpc" {
				p.Stack, p.StackDetail = result.StackGo, d.Path+" "+d.Version
				return p
			}
		}
		// A binary built without module deps in its build info (a test
		// binary) still names grpc-go's packages in its symbols.
		if exeHas(exePath, goGRPCMark) {
			p.Stack, p.StackDetail = result.StackGo, "google.golang.org/grpc (version not in the build info)"
		}
		return p
	}
	lib := mappedLib(pid, "libjvm.so", "libgrpc", "cygrpc", "grpc_c.so", "libnode")
	switch {
	case strings.Contains(lib, "libjvm.so") || base == "java":
		p.Stack, p.Language, p.StackDetail = result.StackJava, "java", filepath.Base(lib)
	case base == "node" || strings.HasPrefix(base, "node") || strings.Contains(lib, "libnode"):
		p.Stack, p.Language = result.StackNode, "node"
	case lib != "":
		p.Stack, p.StackDetail, p.Language = result.StackCCore, filepath.Base(lib), "cpp"
		switch {
		case strings.HasPrefix(base, "python"):
			p.Language = "python"
		case strings.HasPrefix(base, "ruby"):
			p.Language = "ruby"
		}
	default:
		scanExe(exePath, &p)
	}
	return p
}

// mappedLib returns the path of the first mapping naming one of libs.
func mappedLib(pid int, libs ...string) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxMapsBytes))
	sc.Buffer(make([]byte, 4096), 1<<16)
	for sc.Scan() {
		line := sc.Text()
		for _, l := range libs {
			if strings.Contains(line, l) {
				f := strings.Fields(line)
				return f[len(f)-1]
			}
		}
	}
	return ""
}

// goGRPCMark is a grpc-go package path as a Go binary's symbols hold it.
var goGRPCMark = []byte("google.golang.org/grpc/internal/transport")

// exeHas reports whether the executable holds mark, scanning it in bounded
// chunks.
func exeHas(path string, mark []byte) bool {
	found := false
	scan(path, func(chunk []byte) bool {
		found = bytes.Contains(chunk, mark)
		return found
	})
	return found
}

// scan calls f on the executable's bytes in overlapping chunks of 1 MiB,
// up to maxExeScan, until f returns true.
func scan(path string, f func([]byte) bool) {
	file, err := os.Open(path)
	if err != nil {
		return
	}
	defer file.Close()
	r := io.LimitReader(file, maxExeScan)
	buf := make([]byte, 1<<20+128)
	keep := 0
	for {
		n, err := io.ReadFull(r, buf[keep:])
		chunk := buf[:keep+n]
		if f(chunk) || err != nil {
			return
		}
		keep = copy(buf, chunk[len(chunk)-min(128, len(chunk)):])
	}
}

// scanExe looks through the executable for tonic's crate or a static
// C-core, in bounded chunks.
func scanExe(path string, p *result.LiveProcess) {
	scan(path, func(chunk []byte) bool {
		if m := tonicMark.FindSubmatch(chunk); m != nil {
			p.Stack, p.Language, p.StackDetail = result.StackTonic, "rust", "tonic "+string(m[1])
			return true
		}
		if bytes.Contains(chunk, cCoreMark) {
			p.Stack, p.Language, p.StackDetail = result.StackCCore, "cpp", "C-core linked statically"
			return true
		}
		return false
	})
}
