// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/rpclab/rpclab/schema"
)

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0B"},
		{1000, "1000B"},
		{1023, "1023B"},
		{1 << 10, "1KiB"},
		{64 << 10, "64KiB"},
		{1536, "1536B"},
		{3 << 19, "1536KiB"},
		{1 << 20, "1MiB"},
		{1 << 30, "1GiB"},
		{4 << 40, "4TiB"},
		{1 << 50, "1024TiB"},
	} {
		if got := FormatBytes(tc.in); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatRate(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{1e9, "1gbit"}, {2.5e9, "2.5gbit"}, {100e6, "100mbit"}, {1500, "1.5kbit"}, {8, "8bit"}, {500, "500bit"}, {2e12, "2tbit"}, {0, "0"},
	} {
		if got := FormatRate(tc.in); got != tc.want {
			t.Errorf("FormatRate(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestTransportsMatchSchemas: the transport names a record may carry are
// the schema's enum, in the same order.
func TestTransportsMatchSchemas(t *testing.T) {
	var bulk struct {
		Properties struct {
			Spec struct {
				Properties struct {
					Transport struct{ Enum []string } `json:"transport"`
				} `json:"properties"`
			} `json:"spec"`
		} `json:"properties"`
	}
	var flow struct {
		Properties struct {
			Transport struct{ Enum []string } `json:"transport"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema.Bulk, &bulk); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(schema.Flow, &flow); err != nil {
		t.Fatal(err)
	}
	if got, want := BulkTransports, bulk.Properties.Spec.Properties.Transport.Enum; !slices.Equal(got, want) {
		t.Errorf("BulkTransports = %v, want schema/bulk.schema.json's %v", got, want)
	}
	if got, want := FlowTransports, flow.Properties.Transport.Enum; !slices.Equal(got, want) {
		t.Errorf("FlowTransports = %v, want schema/flow.schema.json's %v", got, want)
	}
}

func TestConnLabel(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		conns int
		pick  string
		want  string
	}{
		{"shared", 1, "", "shared"},
		{"per-worker", 8, "", "per-worker"},
		{"channel-per-worker", 8, "", "channel-per-worker"},
		{"pool", 4, "", "pool:4"},
		{"pool", 4, "round-robin", "pool:4"},
		{"pool", 2, "least-loaded", "pool:2:least-loaded"},
	} {
		if got := ConnLabel(tc.mode, tc.conns, tc.pick); got != tc.want {
			t.Errorf("ConnLabel(%q, %d, %q) = %q, want %q", tc.mode, tc.conns, tc.pick, got, tc.want)
		}
		s := Spec{ConnMode: tc.mode, ConnsRequested: tc.conns, Pick: tc.pick}
		if got := s.ConnLabel(); got != tc.want {
			t.Errorf("Spec%+v.ConnLabel() = %q, want %q", s, got, tc.want)
		}
	}
}
