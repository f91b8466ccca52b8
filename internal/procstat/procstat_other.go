// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build !linux

package procstat

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// CPUTime returns the user plus system CPU time the process pid has used.
// Off Linux only this process's (pid 0) can be read.
func CPUTime(pid int) (time.Duration, error) {
	if pid == 0 || pid == os.Getpid() {
		return selfCPU()
	}
	return 0, unsupported("CPU time of another process")
}

// ConnsTo needs Linux; see the Linux documentation.
func ConnsTo(int, string) (int, error) { return 0, unsupported("connections of a process") }

// Pin needs Linux (sched_setaffinity).
func Pin(int, []int) error { return unsupported("CPU pinning") }

// StartPinned starts cmd unpinned off Linux (pinned is false).
func StartPinned(cmd *exec.Cmd, _ []int) (pinned bool, err error) { return false, cmd.Start() }

// AllowedCPUs needs Linux (sched_getaffinity).
func AllowedCPUs() ([]int, error) { return nil, unsupported("CPU affinity") }

// ResetPeakRSS needs Linux; it reports false elsewhere.
func ResetPeakRSS() bool { return false }

func peakRSS() int64 { return -1 }

// LockThreadOffCPUsOf needs Linux (sched_setaffinity); elsewhere it
// returns ErrUnsupported and a restore that does nothing.
func LockThreadOffCPUsOf(int) ([]int, func(), error) {
	return nil, func() {}, unsupported("CPU pinning")
}

// DieWithParent returns attr as it is off Linux (there is no
// PR_SET_PDEATHSIG): a killed driver may leave its children running.
func DieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	return attr
}

// unsupported wraps ErrUnsupported with what was asked.
func unsupported(what string) error {
	return fmt.Errorf("%w (%s)", ErrUnsupported, what)
}

// ReadCPUStat needs Linux (/proc/stat).
func ReadCPUStat() (CPUStat, error) { return CPUStat{}, unsupported("CPU times of the host") }
