// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package stats records RPC outcomes without contention: each goroutine owns a
// Recorder (an HDR histogram of latencies and counts by status code), and the
// recorders are merged into a Summary after the run. Nothing on the recording
// path takes a lock or allocates, and no per-request record is kept.
package stats

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Histogram geometry shared by every recorder, so any two merge exactly.
// Values are nanoseconds. Three significant digits keep P99.9 of a 30 µs
// loopback RPC to within 30 ns; values above HighestTrackable are clamped.
const (
	LowestDiscernible = 1
	HighestTrackable  = int64(100 * time.Second)
	SignificantDigits = 3
)

// numCodes is one past the largest gRPC status code (Unauthenticated = 16).
const numCodes = 17

// Recorder keeps the outcomes seen by one goroutine. It is not safe for
// concurrent use: give each worker its own and Merge them afterwards.
type Recorder struct {
	// hist is the recorder's own histogram; nil when it shares one (shard).
	hist    *hdrhistogram.Histogram
	byCode  [numCodes]int64
	clamped int64
	// samples holds the first error seen with each code (RecordErr).
	samples [numCodes]error
	// shard is the histogram this recorder shares with others of its set
	// (Set), with the latencies not yet written to it in buf.
	shard *shard
	nbuf  int
	buf   *[batch]int64
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{hist: newHistogram()}
}

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestDiscernible, HighestTrackable, SignificantDigits)
}

// Record notes one RPC that ended with code c after d. Only successful RPCs
// enter the latency histogram; every RPC is counted by its code.
func (r *Recorder) Record(d time.Duration, c codes.Code) {
	if uint32(c) >= numCodes {
		c = codes.Unknown
	}
	r.byCode[c]++
	if c != codes.OK {
		return
	}
	v := int64(d)
	switch {
	case v < LowestDiscernible:
		v = LowestDiscernible
	case v > HighestTrackable:
		v = HighestTrackable
		r.clamped++
	}
	if r.shard == nil {
		_ = r.hist.RecordValue(v) // in range by construction
		return
	}
	r.buf[r.nbuf] = v
	if r.nbuf++; r.nbuf == batch {
		r.flush()
	}
}

// RecordErr is Record for an RPC that ended with err, with c its code (the
// caller's, so it may reclassify err). The first error the recorder sees
// with each failing code is kept as that code's sample (Summary.ErrorSample);
// later ones are only counted, so this takes no lock and allocates nothing.
func (r *Recorder) RecordErr(d time.Duration, c codes.Code, err error) {
	if uint32(c) >= numCodes {
		c = codes.Unknown
	}
	if c != codes.OK && err != nil && r.samples[c] == nil {
		r.samples[c] = err
	}
	r.Record(d, c)
}

// Reset empties the recorder so it can be reused for the next step. A
// recorder of a Set empties the histogram it shares too:
// reset the whole set, while none of it records.
func (r *Recorder) Reset() {
	if r.shard == nil {
		r.hist.Reset()
	} else {
		r.nbuf = 0
		r.shard.mu.Lock()
		r.shard.hist.Reset()
		r.shard.mu.Unlock()
	}
	r.byCode = [numCodes]int64{}
	r.clamped = 0
	r.samples = [numCodes]error{}
}

// Summary is the merged outcome of a set of recorders.
type Summary struct {
	// Hist holds the latency of every successful RPC, in nanoseconds.
	Hist *hdrhistogram.Histogram
	// ByCode counts RPCs by status code, OK included.
	ByCode [numCodes]int64
	// Clamped counts latencies above HighestTrackable, recorded as it.
	Clamped int64
	// samples holds, for each code, the first recorder's sample error.
	samples [numCodes]error
}

// Merge combines recorders into one Summary. The recorders' outcomes are
// not changed (a recorder of a set writes its buffered latencies to the
// histogram it shares first). Merge a Set whole, at a
// moment none of it records: a shared histogram holds the whole set's.
func Merge(rs ...*Recorder) *Summary {
	s := &Summary{Hist: newHistogram()}
	for _, r := range rs {
		if r.shard != nil {
			r.flush()
		}
	}
	var merged map[*shard]bool
	hists := make([]*hdrhistogram.Histogram, 0, len(rs))
	for _, r := range rs {
		switch {
		case r.shard == nil:
			hists = append(hists, r.hist)
		case !merged[r.shard]:
			if merged == nil {
				merged = map[*shard]bool{}
			}
			merged[r.shard] = true
			r.shard.mu.Lock()
			hists = append(hists, r.shard.hist.Clone()) // its recorders may record once Merge returns
			r.shard.mu.Unlock()
		}
		for i, n := range r.byCode {
			s.ByCode[i] += n
		}
		s.Clamped += r.clamped
		for i, e := range r.samples {
			if s.samples[i] == nil {
				s.samples[i] = e
			}
		}
	}
	s.Hist = MergeHistograms(hists...)
	return s
}

// MergeHistograms returns one new histogram holding every count of hs,
// each of this package's geometry (NewRecorder's, DecodeHistogram's of a
// record): their counts arrays added. hdrhistogram's own Merge walks each
// source through its iterator, several calls per bucket up to the highest
// value recorded, which took seconds for a worker's mark under -race on a
// busy machine (a Live run's 64 own histograms, merged twice per mark),
// past the driver's limit for a mark; the sum is one pass over each array.
// A histogram of another geometry is merged bucket by bucket as before.
func MergeHistograms(hs ...*hdrhistogram.Histogram) *hdrhistogram.Histogram {
	var sum *hdrhistogram.Snapshot
	var other []*hdrhistogram.Histogram
	for _, h := range hs {
		switch {
		case h.TotalCount() == 0:
		case !sameGeometry(h):
			other = append(other, h)
		case sum == nil:
			sum = h.Export()
		default:
			for i, n := range h.Export().Counts {
				sum.Counts[i] += n
			}
		}
	}
	out := newHistogram()
	if sum != nil {
		out = hdrhistogram.Import(sum)
	}
	for _, h := range other {
		out.Merge(h)
	}
	return out
}

// sameGeometry reports whether h has newHistogram's geometry.
func sameGeometry(h *hdrhistogram.Histogram) bool {
	return h.LowestTrackableValue() == LowestDiscernible && h.HighestTrackableValue() == HighestTrackable && h.SignificantFigures() == SignificantDigits
}

// MaxSampleBytes bounds ErrorSample's message: a server chooses the text of
// its errors, and a record is no place for a megabyte of it.
const MaxSampleBytes = 256

// ErrorSample is one failed RPC's code and message, "Unimplemented: unknown
// method Foo", taken from the most common failing code that has a sample
// (RecordErr; ties go to the code whose name sorts first, as the record's
// error lists them). The message is cut at MaxSampleBytes. It is empty when
// no RPC failed with a sample.
func (s *Summary) ErrorSample() string {
	best := -1
	for i, e := range s.samples {
		if e == nil || i == int(codes.OK) {
			continue
		}
		if best < 0 || s.ByCode[i] > s.ByCode[best] ||
			(s.ByCode[i] == s.ByCode[best] && codes.Code(i).String() < codes.Code(best).String()) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	msg := s.samples[best].Error()
	if st, ok := status.FromError(s.samples[best]); ok {
		msg = st.Message()
	}
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if len(msg) > MaxSampleBytes {
		cut := MaxSampleBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	if msg == "" {
		return codes.Code(best).String()
	}
	return codes.Code(best).String() + ": " + msg
}

// Total is the number of RPCs that ended, whatever their code.
func (s *Summary) Total() int64 {
	var n int64
	for _, c := range s.ByCode {
		n += c
	}
	return n
}

// OK is the number of RPCs that succeeded.
func (s *Summary) OK() int64 { return s.ByCode[codes.OK] }

// Errors maps each failing code's name (as codes.Code.String gives it, e.g.
// "Unavailable") to its count. Codes never seen are left out.
func (s *Summary) Errors() map[string]int64 {
	m := map[string]int64{}
	for i, n := range s.ByCode {
		if i != int(codes.OK) && n > 0 {
			m[codes.Code(i).String()] = n
		}
	}
	return m
}

// Latency is the set of latency statistics every result record carries.
type Latency struct {
	MinNS  int64   `json:"min_ns"`
	MeanNS float64 `json:"mean_ns"`
	P50NS  int64   `json:"p50_ns"`
	P90NS  int64   `json:"p90_ns"`
	P99NS  int64   `json:"p99_ns"`
	P999NS int64   `json:"p999_ns"`
	P100NS int64   `json:"p100_ns"`
}

// Quantiles returns the latency statistics of h (all zero when h is empty).
func Quantiles(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		MinNS:  h.Min(),
		MeanNS: h.Mean(),
		P50NS:  h.ValueAtQuantile(50),
		P90NS:  h.ValueAtQuantile(90),
		P99NS:  h.ValueAtQuantile(99),
		P999NS: h.ValueAtQuantile(99.9),
		P100NS: h.Max(),
	}
}

// EncodeHistogram returns h in HdrHistogram's compressed V2 form, base64
// encoded ("HISTFAAA..."), which every HdrHistogram port can read.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("stats: encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram parses the form EncodeHistogram writes.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("stats: decode histogram: %w", err)
	}
	return h, nil
}
