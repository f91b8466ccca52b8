// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package doctor_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/rpclab/rpclab/internal/doctor"
	"github.com/rpclab/rpclab/internal/dyncall"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/loadgen/extclient"
	"github.com/rpclab/rpclab/internal/result"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestDoctorExternalRefuses: a study through another stack's client
// refuses, up front, what its step spec cannot carry (a call, a rate cap,
// dial options) and the adaptive pool, which is Go's only; the same study
// with the ping, closed, plaintext and fixed pools passes.
func TestDoctorExternalRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "python"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "python", "build.sh"), []byte("exit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := extclient.NewExternal(dir, "python", []string{"shared"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	unary, err := dyncall.Find(protoregistry.GlobalFiles, "grpc.testing.BenchmarkService/UnaryCall")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*doctor.Options)
		want error
	}{
		{"the ping, closed, plaintext, fixed pools", func(*doctor.Options) {}, nil},
		{"adaptive pool", func(o *doctor.Options) { o.Adaptive = true }, doctor.ErrAdaptive},
		{"call", func(o *doctor.Options) { o.Call, o.Request = unary, unary.NewResponse() }, doctor.ErrCall},
		{"rate cap", func(o *doctor.Options) { o.MaxRPS = 100 }, doctor.ErrMaxRPS},
		{"dial options", func(o *doctor.Options) {
			o.Load.DialOptions = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
		}, doctor.ErrDialOptions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := doctor.DefaultOptions("127.0.0.1:1")
			o.Adaptive, o.Runner = false, doctor.External(e)
			tc.edit(&o)
			if err := o.Validate(); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// oneRunRunner runs each layout's steps with GoRunner but, like a client
// of another language run once per layout (External), runs every count
// it is given: it is not Stepwise and never stops early.
type oneRunRunner struct{ doctor.GoRunner }

func (oneRunRunner) Stepwise() bool { return false }

func (r oneRunRunner) Run(ctx context.Context, o *doctor.Options, conn loadgen.ConnMode, ns []int, step func(*result.Record) bool) error {
	return r.GoRunner.Run(ctx, o, conn, ns, func(rec *result.Record) bool {
		step(rec)
		return true
	})
}

// TestDoctorPlansOneRunPerLayout: with a runner that runs each layout as
// one run, the study plans each layout's in-flight counts up front (as
// many doublings from 1 as fit the budget at warm-up + interval a step
// over the layouts), runs each layout once over them, and keeps every
// record, including those after the layout's climb would have stopped.
func TestDoctorPlansOneRunPerLayout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	o := doctor.DefaultOptions(startServer(t))
	o.Pools, o.Adaptive = []int{2}, false
	o.Warmup, o.Interval = 50*time.Millisecond, 200*time.Millisecond
	o.Budget = 2 * 3 * (o.Warmup + o.Interval) // 2 layouts × 3 counts
	o.Runner = oneRunRunner{}
	d, err := doctor.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, r := range d.Records {
		got[r.Spec.ConnLabel()] = append(got[r.Spec.ConnLabel()], r.Spec.Inflight)
	}
	for _, conn := range []string{"shared", "pool:2"} {
		if want := []int{1, 2, 4}; !slices.Equal(got[conn], want) {
			t.Errorf("%s: got in-flight counts %v, want %v", conn, got[conn], want)
		}
	}
	if len(got) != 2 {
		t.Errorf("got layouts %v, want shared and pool:2", got)
	}
	if len(d.Verdicts) != 1 {
		t.Errorf("got %d verdicts, want the study judged", len(d.Verdicts))
	}
}
