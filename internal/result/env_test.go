// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"runtime"
	"slices"
	"testing"
)

// TestGoEnv: the Go engines' one Env names Go, grpc-go at the version
// given, this runtime, host and OS, and the pinned CPUs as given.
func TestGoEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpus []int
	}{
		{"unpinned", nil},
		{"pinned", []int{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := GoEnv("1.2.3", tc.cpus)
			if e.Language != "go" || e.GRPCImpl != "grpc-go" || e.GRPCVersion != "1.2.3" || e.RuntimeVersion != runtime.Version() ||
				e.HostCPUs != runtime.NumCPU() || e.OS != runtime.GOOS || !slices.Equal(e.ClientCPUs, tc.cpus) {
				t.Errorf("got %+v, want go, grpc-go 1.2.3, %s, %d CPUs, %s, client CPUs %v", e, runtime.Version(), runtime.NumCPU(), runtime.GOOS, tc.cpus)
			}
		})
	}
}
