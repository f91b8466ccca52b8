// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package live

import (
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
)

// read takes one snapshot: the process's CPU and threads, the host's CPU,
// and the process's sockets with TCP_INFO.
func (s *Sampler) read() (*snapshot, error) {
	at := time.Now()
	name, cpu, threads, err := readProcess(s.pid)
	if err != nil {
		return nil, err
	}
	socks, listening, err := s.d.sockets()
	if err != nil {
		return nil, err
	}
	snap := &snapshot{at: at, name: name, cpu: cpu, threads: threads, socks: socks, listening: listening}
	if st, err := procstat.ReadCPUStat(); err == nil {
		t := st.Sum(nil)
		snap.hostBusy, snap.hostCPUs = t.Busy+t.Steal, len(st.PerCPU)
	}
	return snap, nil
}
