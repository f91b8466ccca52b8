// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// TestTableOtherCPU: the step table's "other cpu %" column is the share
// of the step's CPUs other work took, "-" for a record without the
// host's CPU.
func TestTableOtherCPU(t *testing.T) {
	for _, tc := range []struct {
		file string
		want map[int]string // in-flight -> column
	}{
		{"busy-host.jsonl", map[int]string{1: "2", 8: "2", 16: "41", 32: "41"}},
		{"healthy.jsonl", map[int]string{1: "-", 32: "-"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := Table(&b, fixture(t, tc.file)[0].Records); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			if !strings.Contains(lines[0], "cpu µs/rpc  other cpu %  status") {
				t.Fatalf("got header %q, want an other cpu %% column before status", lines[0])
			}
			for _, l := range lines[1:] {
				f := strings.Fields(l)
				// client conn rpc inflight ...; the column is the one before status.
				n, err := strconv.Atoi(f[3])
				if err != nil {
					t.Fatalf("line %q: in-flight %q: %v", l, f[3], err)
				}
				want, ok := tc.want[n]
				if got := f[len(f)-2]; ok && got != want {
					t.Errorf("%s at in-flight %s: got other cpu %q, want %q", f[1], f[3], got, want)
				}
			}
		})
	}
}

// TestBusyHostSaidFirst: the HTML report's verdict on a busy host is
// busy-host and says so first, and doctor's text says it before its
// verdict.
func TestBusyHostSaidFirst(t *testing.T) {
	runs := fixture(t, "busy-host.jsonl")
	p, _ := render(t, runs, nil)
	verdicts := find(p.doc, func(n *html.Node) bool { return hasClass(n, "verdict") })
	if len(verdicts) != 1 || attr(verdicts[0], "data-kind") != string(verdict.BusyHost) || !strings.HasPrefix(text(verdicts[0]), "Other processes took 41% of CPU 0") {
		t.Fatalf("got %d verdicts (%v), want one busy-host saying so first", len(verdicts), verdicts)
	}
	var doc bytes.Buffer
	DoctorText(&doc, runs[0].Records, nil)
	out := doc.String()
	first := strings.Index(out, "Verdict:")
	if first < 0 || !strings.HasPrefix(out[first:], "Verdict:\nOther processes took 41% of CPU 0 (the client's) and 38% of CPU 1 (the server's) during the steps at in-flight 16-32") {
		t.Errorf("got doctor text %q, want its first verdict the busy host", out)
	}
}

// TestOpenTableOtherCPU: the open loop's table has the column too.
func TestOpenTableOtherCPU(t *testing.T) {
	recs := fixture(t, "open-loop.jsonl")[0].Records
	d := recs[0].DurationNS
	recs[0].HostCPU = &result.HostCPU{
		Client: result.CPUTimes{CPUs: []int{0}, BusyNS: recs[0].ClientCPUNS + d/2, IdleNS: d/2 - recs[0].ClientCPUNS},
		Server: &result.CPUTimes{CPUs: []int{1}, BusyNS: d / 2, IdleNS: d / 2},
		Host:   result.CPUTimes{CPUs: []int{0, 1}, BusyNS: recs[0].ClientCPUNS + d, IdleNS: d - recs[0].ClientCPUNS},
	}
	var b bytes.Buffer
	if err := OpenTable(&b, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.Contains(lines[0], "conns  other_cpu_pct  status") {
		t.Fatalf("got header %q, want other_cpu_pct before status", lines[0])
	}
	for i, want := range []string{"50", "-"} {
		f := strings.Fields(lines[i+1])
		if got := f[len(f)-2]; got != want {
			t.Errorf("line %d: got other_cpu_pct %q, want %q", i+1, got, want)
		}
	}
}

// TestCSVOtherCPU: the CSV's other_cpu_share column, empty without the
// host's CPU.
func TestCSVOtherCPU(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string // at in-flight 32, the last record
	}{
		{"busy-host.jsonl", "0.41"},
		{"healthy.jsonl", ""},
	} {
		var b bytes.Buffer
		if err := CSV(&b, fixture(t, tc.file)[0].Records); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := slices.Index(rows[0], "other_cpu_share")
		if col < 0 {
			t.Fatalf("got header %v, want other_cpu_share", rows[0])
		}
		if got := rows[len(rows)-1][col]; !strings.HasPrefix(got, tc.want) || (tc.want == "" && got != "") {
			t.Errorf("%s: got other_cpu_share %q, want %q", tc.file, got, tc.want)
		}
	}
}
