// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/progress"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/proto/bulkpb"
)

// Spec is a bulk run: the cross product of Transports × Sizes × Chunks ×
// Streams, each step repeated RequestsPerStream times per stream or for
// MinDuration.
type Spec struct {
	// Target is the rpclab server ("host:port" of its main gRPC port, which
	// the sidechannel shares); the other transports' ports come from
	// BulkService.Info.
	Target     string   `json:"target"`
	Transports []string `json:"transports"`
	// Sizes are the bytes per download.
	Sizes []int64 `json:"sizes"`
	// Chunks are the message (gRPC) or write and read (others) sizes.
	Chunks []int `json:"chunks"`
	// Streams are the counts of concurrent downloads (default 1).
	Streams []int `json:"streams"`
	// RequestsPerStream is how many downloads each stream makes per step
	// (default 1); ignored when MinDuration is set.
	RequestsPerStream int `json:"requests_per_stream"`
	// MinDuration keeps each stream downloading until it has passed.
	MinDuration time.Duration `json:"min_duration_ns"`
	// Warmup is the bytes each stream downloads before a step, unmeasured
	// (-1: the default, min(size, 8 MiB); 0: none).
	Warmup int64 `json:"warmup_bytes"`
	// MaxMessage is the gRPC client's max receive message size (0:
	// grpc-go's default, 4 MiB). A chunk whose message is larger is an
	// error unless this is raised.
	MaxMessage int `json:"max_message_bytes"`
	// Server names the server implementation when rpclab started it.
	Server string `json:"server,omitempty"`
}

// bad is a Spec that cannot run: a *usage.Error whose text names the
// setting.
func bad(format string, a ...any) error {
	return usage.Wrap(fmt.Errorf("bulk: %w", fmt.Errorf(format, a...)))
}

// Validate fills defaults and checks the spec.
func (s *Spec) Validate() error {
	if s.Target == "" {
		return bad("no target")
	}
	if len(s.Transports) == 0 {
		return bad("no transport (want some of %s)", strings.Join(Transports, ", "))
	}
	for _, t := range s.Transports {
		if !slices.Contains(Transports, t) {
			return bad("unknown transport %q (want some of %s)", t, strings.Join(Transports, ", "))
		}
	}
	if len(s.Sizes) == 0 || len(s.Chunks) == 0 {
		return bad("no size or no chunk")
	}
	for _, n := range s.Sizes {
		if n <= 0 {
			return bad("--size %d: a download must be at least 1 byte", n)
		}
		if n > MaxSize {
			return bad("--size %s (%d bytes) is above the largest download, %s", result.FormatBytes(n), n, result.FormatBytes(MaxSize))
		}
	}
	if len(s.Streams) == 0 {
		s.Streams = []int{1}
	}
	for _, n := range s.Streams {
		if n < 1 {
			return bad("--streams %d: must be at least 1", n)
		}
	}
	if s.RequestsPerStream == 0 {
		s.RequestsPerStream = 1
	}
	if s.RequestsPerStream < 0 || s.MinDuration < 0 {
		return bad("--requests and --duration must be positive")
	}
	if s.MinDuration > 0 {
		s.RequestsPerStream = 0
	}
	if s.MaxMessage == 0 {
		s.MaxMessage = DefaultMaxMessage
	}
	if s.MaxMessage < 0 {
		return bad("--max-message-size %d must be positive", s.MaxMessage)
	}
	grpcMsgs := slices.ContainsFunc(s.Transports, usesGRPCMessages)
	for _, c := range s.Chunks {
		if c < 1 || c > MaxChunk {
			return bad("--chunk %s is outside 1 B..%s, the largest chunk the bulk server sends", result.FormatBytes(int64(c)), result.FormatBytes(MaxChunk))
		}
		if m := ChunkMessageSize(c); grpcMsgs && m > s.MaxMessage {
			return bad("--chunk %s makes a %d-byte gRPC message, above the client's max receive message size of %d bytes (%s); "+
				"raise it explicitly with --max-message-size or use a smaller chunk", result.FormatBytes(int64(c)), m, s.MaxMessage, result.FormatBytes(int64(s.MaxMessage)))
		}
	}
	if s.Warmup < -1 {
		return bad("--warmup %d must be 0 or more", s.Warmup)
	}
	if s.Warmup > MaxSize {
		return bad("--warmup %s is above the largest download, %s", result.FormatBytes(s.Warmup), result.FormatBytes(MaxSize))
	}
	return nil
}

// Step is one cell of the cross product.
type Step struct {
	Transport string
	Size      int64
	Chunk     int
	Streams   int
}

// Steps lists the steps in run order: transport varies fastest, so the
// transports of one size and chunk are measured side by side.
func (s *Spec) Steps() []Step {
	var st []Step
	for _, str := range s.Streams {
		for _, size := range s.Sizes {
			for _, c := range s.Chunks {
				for _, t := range s.Transports {
					st = append(st, Step{Transport: t, Size: size, Chunk: c, Streams: str})
				}
			}
		}
	}
	return st
}

// Options are Go-only settings of a run.
type Options struct {
	// ClientCPUs lists the CPUs this process is pinned to (for the record).
	ClientCPUs []int
	// Progress is told about each step (may be nil).
	Progress Progress
	// Via, when set, is called once per run for each listener the
	// transports use ("grpc": the main port, for grpc and for the
	// sidechannel's call and connection; "grpc-tuned", "tcp", "http") and returns the
	// address to dial instead, such as a netem proxy in front of it. The
	// control calls (Info) always go straight to Target.
	Via func(ctx context.Context, listener, addr string) (string, error)
	// Netem describes the emulated network Via puts in front of the
	// listeners; it is copied into every record.
	Netem *result.NetemSpec
	// TLS is the client's TLS configuration for every transport and for
	// the control calls (nil: plaintext everywhere). The server must serve
	// TLS on every listener ("rpclab serve --tls-cert", server.WithBulkTLS).
	// An empty ServerName is the target's host, so every transport checks
	// the certificate against the one name, whichever address (a netem
	// proxy's) it dials. Records say spec.tls.
	TLS *tls.Config
}

// Progress is told when each step starts and ends (before its record goes
// to the sink); a nil Progress is told nothing. It is bulk's name for the
// one progress shape (package internal/progress), as loadgen.Progress is
// the load generator's.
type Progress = progress.Func[Step, result.BulkRecord]

// Event is one moment of a run: step I (from 0) of N started or ended.
type Event = progress.Event[Step, result.BulkRecord]

const (
	// StepStarted: the step is about to run (Record is nil).
	StepStarted = progress.Started
	// StepEnded: the step ran; Record is its record.
	StepEnded = progress.Ended
)

// Run runs every step of spec against spec.Target and hands each record to
// sink. It stops at the first failed step (after sinking its record, marked
// failed, with the bytes moved until the failure) and returns its error.
func Run(ctx context.Context, spec *Spec, o Options, sink func(*result.BulkRecord) error) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(spec.Target)
	if err != nil {
		return bad("target %q: %v", spec.Target, err)
	}
	var tlsCfg *tls.Config
	if o.TLS != nil {
		tlsCfg = o.TLS.Clone()
		if tlsCfg.ServerName == "" {
			tlsCfg.ServerName = host
		}
	}
	cc, err := grpc.NewClient(spec.Target, grpc.WithTransportCredentials(transportCreds(tlsCfg)))
	if err != nil {
		return fmt.Errorf("bulk: target %s: %w", spec.Target, err)
	}
	defer cc.Close()
	ctl := bulkpb.NewBulkServiceClient(cc)
	info, err := askInfo(ctx, ctl, false)
	if err != nil {
		return fmt.Errorf("bulk: %s does not answer rpclab.v1.BulkService.Info%s: %w", spec.Target, overTLS(tlsCfg), err)
	}
	ep, err := endpointsOf(spec.Target, info)
	if err != nil {
		return err
	}
	ep.tls = tlsCfg
	if o.Via != nil {
		for _, l := range []struct {
			name string
			addr *string
		}{{"grpc", &ep.target}, {GRPCTuned, &ep.grpcTuned}, {TCP, &ep.tcp}, {"http", &ep.http}} {
			if *l.addr == "" {
				continue
			}
			if *l.addr, err = o.Via(ctx, l.name, *l.addr); err != nil {
				return fmt.Errorf("bulk: %s listener: %w", l.name, err)
			}
		}
	}
	steps := spec.Steps()
	for i, st := range steps {
		o.Progress.Started(i, len(steps), st)
		rec := runStep(ctx, spec, o, ctl, ep, st)
		o.Progress.Ended(i, len(steps), st, rec)
		if err := sink(rec); err != nil {
			return err
		}
		switch rec.Status {
		case result.StatusInterrupted:
			return fmt.Errorf("bulk: interrupted: %w", ctx.Err())
		case result.StatusFailed:
			return fmt.Errorf("bulk: %s size=%s chunk=%s streams=%d failed: %s",
				st.Transport, result.FormatBytes(st.Size), result.FormatBytes(int64(st.Chunk)), st.Streams, rec.Error)
		}
	}
	return nil
}

func askInfo(ctx context.Context, c bulkpb.BulkServiceClient, reset bool) (*bulkpb.InfoResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.Info(ctx, &bulkpb.InfoRequest{ResetPeakRss: reset})
}

// endpointsOf pairs the target's host with the ports Info gave, so a server
// listening on every address is reached the way the target is.
func endpointsOf(target string, info *bulkpb.InfoResponse) (endpoints, error) {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return endpoints{}, bad("target %q: %v", target, err)
	}
	port := func(addr string) string {
		if addr == "" {
			return ""
		}
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			return ""
		}
		return net.JoinHostPort(host, p)
	}
	return endpoints{target: target, grpcTuned: port(info.GetGrpcTunedAddr()), tcp: port(info.GetTcpAddr()),
		http: port(info.GetHttpAddr())}, nil
}

// worker is one stream of a step.
type worker struct {
	d        downloader
	requests int64
	bytes    int64 // including a failed download's bytes
	err      error
}

// runStep runs one step: it dials the step's streams, warms them up,
// measures the interval, and returns the step's record (marked failed or
// interrupted on an error, with the bytes moved until then).
func runStep(ctx context.Context, spec *Spec, o Options, ctl bulkpb.BulkServiceClient, ep endpoints, st Step) *result.BulkRecord {
	rec := newStepRecord(spec, o, ep, st)
	fail := func(err error) *result.BulkRecord {
		rec.Status = result.StatusFailed
		if ctx.Err() != nil {
			rec.Status = result.StatusInterrupted
		}
		rec.Error = err.Error()
		return rec
	}
	warm := warmupBytes(spec, st)
	rec.Spec.WarmupBytes = warm
	// Computed before the interval, not in it.
	for _, n := range []int64{st.Size, warm} {
		if _, err := ExpectedCRC(ctx, n); err != nil {
			return fail(err)
		}
	}

	ws, err := dialWorkers(st, ep, spec.MaxMessage)
	defer closeWorkers(ws)
	if err != nil {
		return fail(err)
	}
	if err := warmUp(ctx, ws, st, warm); err != nil {
		return fail(err)
	}

	runtime.GC() // start the interval with a clean heap on this side
	s0, err := askInfo(ctx, ctl, true)
	if err != nil {
		return fail(fmt.Errorf("server usage before the step: %w", err))
	}
	procstat.ResetPeakRSS()
	c0, err := procstat.ReadUsage()
	if err != nil {
		return fail(err)
	}
	t0 := time.Now()
	runErr := parallel(ctx, ws, func(ctx context.Context, w *worker) error {
		return downloadLoop(ctx, spec, st, w, t0.Add(spec.MinDuration))
	})
	elapsed := time.Since(t0)
	c1, cerr := procstat.ReadUsage()
	s1, serr := askInfo(context.WithoutCancel(ctx), ctl, false)

	for _, w := range ws {
		rec.Requests += w.requests
		rec.Bytes += w.bytes
	}
	rec.DurationNS = int64(elapsed)
	if elapsed > 0 {
		rec.ThroughputBytesPerS = float64(rec.Bytes) / elapsed.Seconds()
	}
	if cerr == nil {
		recordClientUsage(rec, c0, c1)
	}
	if serr == nil && s1.GetPid() == s0.GetPid() {
		recordServerUsage(rec, s0, s1)
	}
	if runErr != nil {
		return fail(fmt.Errorf("%s: %w", st.Transport, runErr))
	}
	if serr != nil {
		return fail(fmt.Errorf("server usage after the step: %w", serr))
	}
	return rec
}

// newStepRecord is the record of step st before it runs: its spec, its
// environment, and -1 (not measured) in every usage figure.
func newStepRecord(spec *Spec, o Options, ep endpoints, st Step) *result.BulkRecord {
	return &result.BulkRecord{
		SchemaVersion: result.SchemaVersion,
		Kind:          result.KindBulk,
		Status:        result.StatusOK,
		StartedAt:     time.Now().UTC(),
		Spec: result.BulkSpec{
			Target: spec.Target, Transport: st.Transport, SizeBytes: st.Size, ChunkBytes: st.Chunk,
			Streams: st.Streams, RequestsPerStream: spec.RequestsPerStream, MinDurationNS: int64(spec.MinDuration),
			MaxMessageBytes: spec.MaxMessage, Server: spec.Server, Netem: o.Netem, TLS: ep.tls != nil,
		},
		Env:                    result.GoEnv(grpc.Version, o.ClientCPUs),
		Checksum:               "crc32c",
		ServerCPUNS:            -1,
		ServerCPUSPerGiB:       -1,
		ServerAllocBytes:       -1,
		ServerAllocs:           -1,
		ServerAllocBytesPerMiB: -1,
		ServerAllocsPerRequest: -1,
		ClientPeakRSSBytes:     -1,
		ServerPeakRSSBytes:     -1,
	}
}

// warmupBytes is what each stream of st downloads before the interval:
// spec.Warmup, or min(size, 8 MiB) when it is -1 (the default).
func warmupBytes(spec *Spec, st Step) int64 {
	if spec.Warmup < 0 {
		return min(st.Size, 8<<20)
	}
	return spec.Warmup
}

// dialWorkers connects the step's streams, one downloader each. On an error
// it returns the workers dialed so far, for closeWorkers.
func dialWorkers(st Step, ep endpoints, maxMessage int) ([]*worker, error) {
	ws := make([]*worker, st.Streams)
	for i := range ws {
		d, err := dial(st.Transport, ep, maxMessage)
		if err != nil {
			return ws, fmt.Errorf("%s: connect: %w", st.Transport, err)
		}
		ws[i] = &worker{d: d}
	}
	return ws, nil
}

// closeWorkers closes every dialed worker's downloader.
func closeWorkers(ws []*worker) {
	for _, w := range ws {
		if w != nil {
			_ = w.d.close()
		}
	}
}

// warmUp has every stream download warm bytes, unmeasured (none when warm
// is 0).
func warmUp(ctx context.Context, ws []*worker, st Step, warm int64) error {
	if warm <= 0 {
		return nil
	}
	if err := parallel(ctx, ws, func(ctx context.Context, w *worker) error {
		var v verifier
		return fetch(ctx, w.d, warm, st.Chunk, &v)
	}); err != nil {
		return fmt.Errorf("%s: warm-up: %w", st.Transport, err)
	}
	return nil
}

// downloadLoop is one stream's measured work: downloads until deadline
// (when spec.MinDuration is set, at least one) or spec.RequestsPerStream of
// them, counting requests and bytes (a failed download's too) in w.
func downloadLoop(ctx context.Context, spec *Spec, st Step, w *worker, deadline time.Time) error {
	for n := 0; ; n++ {
		if spec.MinDuration > 0 {
			if n > 0 && !time.Now().Before(deadline) {
				return nil
			}
		} else if n == spec.RequestsPerStream {
			return nil
		}
		var v verifier
		err := fetch(ctx, w.d, st.Size, st.Chunk, &v)
		w.bytes += v.n
		if err != nil {
			return fmt.Errorf("request %d: %w", n+1, err)
		}
		w.requests++
	}
}

// recordClientUsage fills rec's client figures from this process's usage
// before (c0) and after (c1) the interval.
func recordClientUsage(rec *result.BulkRecord, c0, c1 procstat.Usage) {
	gib := float64(rec.Bytes) / (1 << 30)
	mib := float64(rec.Bytes) / (1 << 20)
	rec.ClientCPUNS = int64(c1.CPU - c0.CPU)
	rec.ClientPeakRSSBytes = c1.PeakRSS
	if gib > 0 {
		rec.ClientCPUSPerGiB = (c1.CPU - c0.CPU).Seconds() / gib
		rec.ClientAllocBytesPerMiB = float64(c1.AllocBytes-c0.AllocBytes) / mib
	}
	if rec.Requests > 0 {
		rec.ClientAllocsPerRequest = float64(c1.Allocs-c0.Allocs) / float64(rec.Requests)
	}
}

// recordServerUsage fills rec's server figures from the server's usage
// before (s0) and after (s1) the interval, both from one server process.
func recordServerUsage(rec *result.BulkRecord, s0, s1 *bulkpb.InfoResponse) {
	gib := float64(rec.Bytes) / (1 << 30)
	mib := float64(rec.Bytes) / (1 << 20)
	rec.ServerCPUNS = s1.GetCpuNs() - s0.GetCpuNs()
	rec.ServerAllocBytes = int64(s1.GetAllocBytes() - s0.GetAllocBytes())
	rec.ServerAllocs = int64(s1.GetAllocs() - s0.GetAllocs())
	rec.ServerPeakRSSBytes = s1.GetPeakRssBytes()
	if gib > 0 {
		rec.ServerCPUSPerGiB = float64(rec.ServerCPUNS) / 1e9 / gib
		rec.ServerAllocBytesPerMiB = float64(rec.ServerAllocBytes) / mib
	}
	if rec.Requests > 0 {
		rec.ServerAllocsPerRequest = float64(rec.ServerAllocs) / float64(rec.Requests)
	}
}

// fetch downloads size bytes and checks their length and CRC-32C.
func fetch(ctx context.Context, d downloader, size int64, chunk int, v *verifier) error {
	err := d.download(ctx, size, chunk, v)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return fmt.Errorf("after %d of %d bytes: %w", v.n, size, err)
	}
	if v.n != size {
		return fmt.Errorf("integrity: got %d bytes, want %d", v.n, size)
	}
	want, err := ExpectedCRC(ctx, size)
	if err != nil {
		return err
	}
	if v.crc != want {
		return fmt.Errorf("integrity: CRC-32C of the %d bytes is %08x, want %08x", size, v.crc, want)
	}
	return nil
}

// parallel runs f for every worker, each in its own goroutine; the first
// error cancels the others and is returned (with its stream's number).
func parallel(ctx context.Context, ws []*worker, f func(context.Context, *worker) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() {
			if err := f(ctx, w); err != nil {
				if len(ws) > 1 {
					err = fmt.Errorf("stream %d: %w", i+1, err)
				}
				w.err = err
				cancel(err)
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}
