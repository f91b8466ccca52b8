// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import "testing"

// TestCallFlagsAreShared: doctor and sweep take --call and the flags
// around it from one list (callFlags), so both say the same of each.
func TestCallFlagsAreShared(t *testing.T) {
	doctor, sweep := newDoctorCmd().Flags(), newSweepCmd().Flags()
	for _, name := range []string{"call", "data", "data-file", "protoset", "proto", "import-path", "tls", "cacert", "insecure-skip-verify", "authority", "header"} {
		d, s := doctor.Lookup(name), sweep.Lookup(name)
		if d == nil || s == nil {
			t.Errorf("--%s: doctor has it %v, sweep %v; want both", name, d != nil, s != nil)
			continue
		}
		if name == "call" {
			continue // each says what the call replaces
		}
		if d.Usage != s.Usage || d.DefValue != s.DefValue {
			t.Errorf("--%s: doctor says %q (default %q), sweep %q (default %q); want the same", name, d.Usage, d.DefValue, s.Usage, s.DefValue)
		}
	}
}
