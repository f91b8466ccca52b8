// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
)

// readme is the README with its whitespace folded, as its sentences wrap.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// TestPublishedYDBVerdict: YDB's published single-connection table
// (docs/published, imported from the post's CSV) is judged shared only:
// 3.56x the throughput at in-flight 10, and throughput falling past its
// peak at 17 (44044 to 40585 req/s at 21); the README quotes both
// sentences of that verdict.
func TestPublishedYDBVerdict(t *testing.T) {
	recs, err := result.ReadFile(filepath.Join("..", "..", "docs", "published", "ydb-2025-single-connection.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	vs := Verdicts(recs)
	if len(vs) != 1 || vs[0].Kind != SharedOnly || vs[0].Inflight != SharedOnlyInflight {
		t.Fatalf("got %+v, want one shared-only verdict at in-flight %d", vs, SharedOnlyInflight)
	}
	v := vs[0]
	if got, want := v.Gain, 37169.7/10435.1; math.Abs(got-want) > 1e-9 {
		t.Errorf("gain: got %v, want %v (3.56x)", got, want)
	}
	if got, want := v.Fell, 1-40584.5/44044.3; v.FellAt != 17 || math.Abs(got-want) > 1e-9 {
		t.Errorf("fall: got %.4f past in-flight %d, want %.4f past 17", got, v.FellAt, want)
	}
	text := readme(t)
	for _, want := range []string{
		fmt.Sprintf("at in-flight 10 (10x in-flight 1) one connection gave %.2fx the throughput of in-flight 1 (37170 vs 10435 req/s), 36%% of its ideal line", v.Gain),
		fmt.Sprintf("Past in-flight 17 throughput fell: 44044 req/s at that peak, 40585 at in-flight 21 (%.0f%% less)", 100*v.Fell),
	} {
		if !strings.Contains(v.Text, want) {
			t.Errorf("verdict %q lacks %q", v.Text, want)
		}
		if !strings.Contains(text, want) {
			t.Errorf("README.md does not quote the verdict's %q", want)
		}
	}
}

// TestSharedOnlyFall: a shared-only verdict says throughput fell when the
// highest in-flight count is more than Fall (5%) below the peak, on either
// side of that edge (4.9% and 5.1%, written out so that a changed Fall
// fails here); a peak at the top, or a dip that recovers, is no fall.
func TestSharedOnlyFall(t *testing.T) {
	run := func(rps map[int]float64) []result.Record {
		var recs []result.Record
		for _, n := range []int{1, 10, 17, 21} {
			recs = append(recs, rec("shared", n, rps[n]))
		}
		return recs
	}
	for _, tc := range []struct {
		name   string
		rps    map[int]float64
		fellAt int
	}{
		{"falls just past Fall", map[int]float64{1: 1000, 10: 3000, 17: 4000, 21: 4000 * (1 - 0.051)}, 17},
		{"falls just short of Fall", map[int]float64{1: 1000, 10: 3000, 17: 4000, 21: 4000 * (1 - 0.049)}, 0},
		{"peak at the top", map[int]float64{1: 1000, 10: 3000, 17: 4000, 21: 4100}, 0},
		{"dips and recovers", map[int]float64{1: 1000, 10: 3000, 17: 2000, 21: 3000}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := Verdicts(run(tc.rps))
			if len(vs) != 1 || vs[0].Kind != SharedOnly {
				t.Fatalf("got %+v, want one shared-only verdict", vs)
			}
			said := strings.Contains(vs[0].Text, "throughput fell")
			if vs[0].FellAt != tc.fellAt || said != (tc.fellAt > 0) {
				t.Errorf("got fell at %d (said: %v), want %d", vs[0].FellAt, said, tc.fellAt)
			}
		})
	}
}
