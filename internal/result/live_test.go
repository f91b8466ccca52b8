// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func liveSample() *LiveRecord {
	return &LiveRecord{
		SchemaVersion: SchemaVersion, Kind: KindLive, Status: StatusOK,
		StartedAt:  time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC),
		DurationNS: 2e9, IntervalNS: 1e9,
		Process: LiveProcess{PID: 42, Comm: "client", Stack: StackGo, StackDetail: "google.golang.org/grpc v1.85.0", Language: "go"},
		CPU: LiveCPU{AllowedCPUs: 2, AffinityCPUs: 2, HostCPUs: 2, ProcessNS: 1e8, HostBusyNS: 3e8, ThreadCount: 5,
			Threads: []LiveThread{{TID: 43, Name: "client", CPUNS: 5e7}}},
		Conns: []LiveConn{{Inode: 7, Local: "127.0.0.1:40000", Remote: "127.0.0.1:50051", LastNS: 2e9, Samples: 3, AppLimited: 3, BytesAcked: 1000}},
		Samples: []LiveSample{{AtNS: 1e9, CPUNS: 5e7, Conns: []LiveConnSample{{Conn: 0, BytesAcked: 500}}},
			{AtNS: 2e9, CPUNS: 5e7, Streams: []LiveStreams{{Socket: 9, InFlight: 1}}}},
		Channelz: &LiveChannelz{Addr: "127.0.0.1:9000", Channels: []LiveChannel{{ID: 1, Target: "t", Subchannels: []int64{2}}},
			Subchannels: []LiveSubchannel{{ID: 2, Target: "t", Sockets: []int64{9}}},
			Sockets:     []LiveChannelzSocket{{ID: 9, Samples: 2, InFlightMax: 1, InFlightSum: 2, AtLimit: 2, PeerMaxStreams: 1}}},
	}
}

// TestLiveRecordRoundTrip: a live record passes Check, and the one reader
// returns it in Set.Live.
func TestLiveRecordRoundTrip(t *testing.T) {
	r := liveSample()
	if err := Check(r); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(r); err != nil {
		t.Fatal(err)
	}
	set, err := ReadAll(t.Context(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Live) != 1 || set.Live[0].Channelz.Sockets[0].AtLimit != 2 || set.Count(KindLive) != 1 {
		t.Fatalf("live record not read back: %+v", set)
	}
}

// TestLiveRecordImpossible: a sample naming a connection the record does
// not hold, and an unknown stack, are refused.
func TestLiveRecordImpossible(t *testing.T) {
	r := liveSample()
	r.Samples[0].Conns[0].Conn = 3
	if err := Check(r); !errors.Is(err, ErrImpossible) || !strings.Contains(err.Error(), "conn 3") {
		t.Errorf("sample naming conn 3 of 1: got %v", err)
	}
	r = liveSample()
	r.Process.Stack = "cobol"
	if err := Check(r); !errors.Is(err, ErrImpossible) {
		t.Errorf("unknown stack: got %v", err)
	}
	r = liveSample()
	r.Conns[0].AppLimited = 4
	if err := Check(r); !errors.Is(err, ErrImpossible) {
		t.Errorf("app_limited above samples: got %v", err)
	}
}
