// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// ErrTargetGone ends a study whose target stopped accepting connections
// after some steps had succeeded: the error wrapping it names the step and
// the cause (connection refused).
var ErrTargetGone = errors.New("doctor: the target went away")

// FlatSteps is how many steps in a row without growth (less than
// verdict.Growth times the layout's best so far) end a layout's climb: a
// sustained fall or flattening, not one noisy step (one step on a shared
// 2-core host swings 20-40%).
const FlatSteps = 2

// Run runs the study and judges its records (verdict.Verdicts). With a
// Stepwise runner it climbs in rounds, one in-flight count at a time (1,
// 2, 4, ...), measuring at each count the shared connection and every
// pool still climbing, so that the layouts are compared at the counts they
// share; a layout's climb ends after FlatSteps steps without growth, a
// failed or stalled step, or a cap; the study's climb ends when every
// pool's has, or when the budget cannot hold another round (Unfinished
// then names the layouts still growing). Another stack's client runs each
// layout over the same planned counts.
//
// It returns what was measured so far with an error: ctx's when stopped;
// one wrapping ErrTargetGone when the target stopped accepting connections
// mid-study; the first step's failure when the target could not be
// reached or every RPC failed; Step's error when it failed (a record could
// not be written). The adaptive pool's steps warm up for StepWarmup; what
// that adds over o.Warmup comes on top of the budget.
func Run(ctx context.Context, o Options) (*Diagnosis, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	s := &study{o: &o, run: o.runner(), d: &Diagnosis{}, abort: abort}
	// A server on this host: its CPU is read from the OS at each step
	// (FindLocalServer); one that cannot be read stays unknown.
	s.srv, _ = FindLocalServer(o.Target)
	layouts := o.layouts()
	fixed := layouts[:o.fixedLayouts()]
	if s.run.Stepwise() {
		deadline := time.Now().Add(o.Budget)
		// The climb leaves room for two more rounds of the deciding
		// comparison (its own step is the first).
		s.rounds(ctx, fixed, deadline.Add(-4*(o.Warmup+o.Interval)))
		s.confirm(ctx, deadline)
	} else {
		for _, conn := range fixed {
			if ctx.Err() != nil {
				break
			}
			s.layout(ctx, conn, o.inflights(false))
		}
	}
	if len(layouts) > len(fixed) && ctx.Err() == nil {
		// The adaptive pool needs a long warm-up per step to settle, so it
		// runs only where it matters: the top in-flight counts the fixed
		// layouts reached (two, as the verdict needs).
		if ns := topInflights(s.d.Records, verdict.MinInflights); len(ns) > 0 {
			s.layout(ctx, layouts[len(layouts)-1], ns)
		}
	}
	s.d.Verdicts = verdict.Verdicts(s.d.Records)
	s.d.Notes = s.notes()
	if ctx.Err() != nil {
		return s.d, context.Cause(ctx)
	}
	return s.d, nil
}

// study is one run of the study: its options, runner and records, and
// the climb of each layout.
type study struct {
	o     *Options
	run   Runner
	d     *Diagnosis
	abort context.CancelCauseFunc
	// srv is the target's process on this host (nil: none, or not
	// readable).
	srv *LocalServer
	// climbs are the layouts' climbs, by layout label.
	climbs map[string]*climb
}

// climb is one layout's progress: its best throughput so far and the
// steps since it last grew.
type climb struct {
	best   float64
	flat   int
	steps  int
	done   bool
	failed bool
}

// rounds climbs the fixed layouts one in-flight count at a time: at each
// count shared and every pool still climbing, until every pool's climb
// ended, a cap or the budget.
func (s *study) rounds(ctx context.Context, fixed []loadgen.ConnMode, deadline time.Time) {
	o := s.o
	step := o.Warmup + o.Interval
	ns := o.inflights(true)
	for i, n := range ns {
		var todo []loadgen.ConnMode
		for j, conn := range fixed {
			if c := s.climbOf(conn.String()); j == 0 || !c.done {
				todo = append(todo, conn)
			}
		}
		if len(todo) <= 1 && i >= verdict.MinInflights { // shared alone: every pool's climb ended
			return
		}
		if i >= verdict.MinInflights && time.Now().Add(time.Duration(len(todo))*step).After(deadline) {
			s.d.Unfinished = s.growing(todo)
			return
		}
		for _, conn := range todo {
			if ctx.Err() != nil || s.climbOf("shared").failed { // no baseline left to compare the pools with
				return
			}
			s.layout(ctx, conn, []int{n})
		}
		if i == len(ns)-1 {
			if g := s.growing(todo); len(g) > 0 {
				s.d.Capped = true
			}
		}
	}
}

// confirm measures the deciding comparison again, in interleaved rounds
// (the climb's step at the verdict's in-flight count was shared then the
// best layout; then best, shared; shared, best; ...), until its ratio is
// verdict.Settled, a step does not succeed, or the budget cannot hold
// another round. The verdict then gives the ratio with its range.
func (s *study) confirm(ctx context.Context, deadline time.Time) {
	step := s.o.Warmup + s.o.Interval
	for ctx.Err() == nil {
		vs := verdict.Verdicts(s.d.Records)
		if len(vs) != 1 || vs[0].Best == "" || vs[0].Kind == verdict.Trap || verdict.Settled(vs[0]) ||
			time.Now().Add(2*step).After(deadline) {
			return
		}
		v := vs[0]
		best, err := loadgen.ParseConnMode(v.Best)
		if err != nil {
			return
		}
		pair := []loadgen.ConnMode{best, {Kind: loadgen.Shared}}
		if max(v.Rounds, 1)%2 == 0 {
			pair[0], pair[1] = pair[1], pair[0]
		}
		for _, conn := range pair {
			n := len(s.d.Records)
			s.layout(ctx, conn, []int{v.Inflight})
			if len(s.d.Records) == n || s.d.Records[n].Status != result.StatusOK {
				return
			}
		}
		s.d.Rounds++
	}
}

// growing lists the layouts of todo whose climb had not ended.
func (s *study) growing(todo []loadgen.ConnMode) []string {
	var out []string
	for _, conn := range todo {
		if c := s.climbOf(conn.String()); !c.done {
			out = append(out, conn.String())
		}
	}
	return out
}

func (s *study) climbOf(label string) *climb {
	if s.climbs == nil {
		s.climbs = map[string]*climb{}
	}
	c := s.climbs[label]
	if c == nil {
		c = &climb{}
		s.climbs[label] = c
	}
	return c
}

// layout runs conn at the in-flight counts ns through the runner, gives
// each record the local server's CPU when the server did not report it,
// judges each record (verdict.MarkStall), keeps it, tells o.Step, and ends the
// layout's climb as step says; a runner that is not Stepwise runs its
// remaining steps, whose records are kept as well, unless the study was
// aborted (its client is then stopped).
func (s *study) layout(ctx context.Context, conn loadgen.ConnMode, ns []int) {
	var from cpuMark
	read := false
	if s.srv != nil {
		from, read = s.srv.mark()
	}
	err := s.run.Run(ctx, s.o, conn, ns, func(rec *result.Record) bool {
		if s.srv != nil {
			to, ok := s.srv.mark()
			if ok && read {
				s.srv.fill(rec, from, to)
			}
			from, read = to, ok
		}
		// As sweep judges each record (lab's sink): RPCs held in flight
		// past the stall age at the step's end make it stalled, whatever
		// the step's status said; a stall ends the layout's climb as a
		// failure does.
		verdict.MarkStall(rec)
		s.d.Records = append(s.d.Records, *rec)
		if s.o.Step != nil {
			if err := s.o.Step(rec); err != nil {
				s.abort(err)
				return false
			}
		}
		return s.step(conn, rec)
	})
	if err != nil && ctx.Err() == nil {
		s.abort(err)
	}
}

// step updates conn's climb with rec and says whether it goes on.
func (s *study) step(conn loadgen.ConnMode, rec *result.Record) bool {
	o, c := s.o, s.climbOf(conn.String())
	if rec.Status == result.StatusInterrupted {
		c.done = true
		return false
	}
	if rec.Status == result.StatusFailed || rec.Status == result.StatusStalled {
		c.done = true
		gone := error(nil)
		if len(s.d.Records) > 1 {
			gone = dialTCP(o.Target, o.DialTimeout)
		}
		switch {
		case len(s.d.Records) == 1:
			s.abort(fmt.Errorf("doctor: %s", rec.Error))
		case gone != nil:
			s.abort(fmt.Errorf("%w: %s at in-flight %d failed, and a new connection to %s gets %v; the study ends here",
				ErrTargetGone, conn, rec.Spec.Inflight, loadgen.HostPort(o.Target), gone))
		default:
			why := strings.TrimSpace(rec.Error)
			if why == "" {
				why = string(rec.Status)
			}
			s.d.Stopped = append(s.d.Stopped, fmt.Sprintf("%s stopped at in-flight %d: %s", conn, rec.Spec.Inflight, why))
			c.failed = true
		}
		return false
	}
	if c.done {
		return false
	}
	c.steps++
	if verdict.Grew(c.best, rec.ThroughputRPS) || c.best == 0 {
		c.best, c.flat = max(c.best, rec.ThroughputRPS), 0
	} else {
		c.flat++
	}
	if o.MaxRPS > 0 && rec.ThroughputRPS >= 0.9*o.MaxRPS {
		s.d.Capped = true
		c.flat = FlatSteps // held at the cap: more in flight cannot show more
	}
	if c.steps >= verdict.MinInflights && c.flat >= FlatSteps {
		c.done = true
	}
	return !c.done
}

// notes words why the study's climbs ended where they did, when not by
// flattening: what only the study knows, said under the verdict.
func (s *study) notes() []string {
	var out []string
	if s.d.Capped {
		caps := fmt.Sprintf("at most %d in flight", s.o.MaxInflight)
		if s.o.MaxRPS > 0 {
			caps = fmt.Sprintf("at most %.0f RPCs/s, ", s.o.MaxRPS) + caps
		}
		out = append(out, "a cap of the study ("+caps+") ended a climb that was still growing, or held a layout at the rate cap: raise it for a firmer answer.")
	}
	if len(s.d.Unfinished) > 0 {
		out = append(out, fmt.Sprintf("the budget (%v) ended the climb while %s %s still growing: a longer budget measures further.",
			s.o.Budget, strings.Join(s.d.Unfinished, ", "), map[bool]string{true: "was", false: "were"}[len(s.d.Unfinished) == 1]))
	}
	for _, st := range s.d.Stopped {
		out = append(out, st+"; the verdict has no figure of it past that step.")
	}
	return out
}

// dialTCP says why target no longer accepts TCP connections (nil when it
// does): a study whose steps start failing asks before blaming a layout.
func dialTCP(target string, timeout time.Duration) error {
	conn, err := net.DialTimeout("tcp", loadgen.HostPort(target), min(timeout, 2*time.Second))
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			return oe.Err
		}
		return err
	}
	conn.Close()
	return nil
}

// topInflights is the k largest in-flight counts that succeeded in recs,
// smallest first.
func topInflights(recs []result.Record, k int) []int {
	var ns []int
	for i := range recs {
		if recs[i].Status == result.StatusOK && !slices.Contains(ns, recs[i].Spec.Inflight) {
			ns = append(ns, recs[i].Spec.Inflight)
		}
	}
	slices.Sort(ns)
	return ns[max(0, len(ns)-k):]
}
