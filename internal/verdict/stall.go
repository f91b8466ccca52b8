// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"fmt"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

// Stalled reports whether rec's step left an RPC in flight for
// StallAgeOf(rec) or longer when its interval ended (false when the record
// does not say: imported records, other languages' clients).
func Stalled(rec *result.Record) bool {
	return rec.InFlightAtEnd != nil && *rec.InFlightAtEnd > 0 && time.Duration(rec.OldestInFlightNS) >= StallAgeOf(rec)
}

// StallAgeOf is the age at which an RPC still in flight at the end of
// rec's step is held rather than slow: StallAge, plus StallRTTs of the
// step's emulated round trip where the record states one (spec.netem;
// delay plus jitter each way). A netem step of 1 s RTT stalls at 5 s, one
// of 50 ms at 1.2 s, a step with no netem at StallAge.
func StallAgeOf(rec *result.Record) time.Duration {
	n := rec.Spec.Netem
	if n == nil {
		return StallAge
	}
	rtt := time.Duration(max(n.Up.DelayNS, 0) + max(n.Up.JitterNS, 0) + max(n.Down.DelayNS, 0) + max(n.Down.JitterNS, 0))
	return StallAge + StallRTTs*rtt
}

// MarkStall marks rec's step stalled when Stalled says so, whatever its
// load model, and says why; it reports whether it did. The status it
// replaces said less than what happened: "ok" (a closed loop records only
// the RPCs that ended, so a frozen server leaves no trace in its figures),
// "overloaded" (an open loop's sends left unmade because the RPCs in
// flight held every sender: the server's doing, not the client's) or
// "failed" (the RPCs the drain cut off); what it said is kept after the
// stall. An interrupted step stays interrupted (Ctrl-C also leaves RPCs in
// flight). A stalled server holds RPCs in flight with no reply; an
// overloaded client cannot send on schedule, and its RPCs in flight are
// young: the two are told apart by the oldest one's age.
func MarkStall(rec *result.Record) bool {
	if rec.Status == result.StatusInterrupted || rec.Status == result.StatusStalled || !Stalled(rec) {
		return false
	}
	text := StallText(rec)
	switch rec.Status {
	case result.StatusOverloaded:
		unsent := int64(0)
		if rec.Unsent != nil {
			unsent = *rec.Unsent
		}
		text += fmt.Sprintf("; the %d sends left unmade waited for those RPCs, not for the client", unsent)
	case result.StatusFailed:
		text += "; besides: " + rec.Error
	}
	rec.Status, rec.Error = result.StatusStalled, text
	return true
}

// StallText says what a stalled step's record shows: "the server stalled:
// 4 RPCs were stuck in flight for 4s at the end of the step, with no
// reply".
func StallText(rec *result.Record) string {
	var n int64
	if rec.InFlightAtEnd != nil {
		n = *rec.InFlightAtEnd
	}
	age := time.Duration(rec.OldestInFlightNS).Round(time.Millisecond)
	rpcs := "RPCs were"
	if n == 1 {
		rpcs = "RPC was"
	}
	return fmt.Sprintf("the server stalled: %d %s stuck in flight at the end of the step, the oldest for %v with no reply (%v or more is a stall)",
		n, rpcs, age, StallAgeOf(rec))
}

// clean reports whether rec's step enters the judgements: status ok and
// not stalled (a record MarkStall never saw: doctor's, one written by
// an older rpclab).
func clean(rec *result.Record) bool {
	return rec.Status == result.StatusOK && !Stalled(rec)
}
