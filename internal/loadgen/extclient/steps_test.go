// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package extclient

import (
	"bufio"
	"bytes"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/schema"
)

func stepSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.Step))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("step.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("step.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStepsFile: the driver's steps come in the client's order (rpc, conn,
// in-flight, outermost first), one complete object per line, each valid
// against schema/step.schema.json.
func TestStepsFile(t *testing.T) {
	spec := &loadgen.Spec{Target: "127.0.0.1:50051", RPCs: []string{"unary", "streaming"}, Inflight: []int{1, 8},
		PayloadBytes: 64, Warmup: time.Second, Interval: 3 * time.Second}
	steps := Steps(spec, []string{"shared", "pool:4:least-loaded"}, []int{0}, "/tmp/out.jsonl")
	var order []string
	for _, s := range steps {
		order = append(order, s.RPC+"/"+s.Conn+"/"+string(rune('0'+s.Inflight)))
	}
	want := []string{"unary/shared/1", "unary/shared/8", "unary/pool:4:least-loaded/1", "unary/pool:4:least-loaded/8",
		"streaming/shared/1", "streaming/shared/8", "streaming/pool:4:least-loaded/1", "streaming/pool:4:least-loaded/8"}
	if len(order) != len(want) {
		t.Fatalf("got %d steps %v, want %v", len(order), order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Errorf("step %d: got %s, want %s", i+1, order[i], want[i])
		}
	}
	var b bytes.Buffer
	if err := WriteSteps(&b, steps); err != nil {
		t.Fatal(err)
	}
	schema := stepSchema(t)
	sc := bufio.NewScanner(&b)
	for n := 1; sc.Scan(); n++ {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("line %d %s: %v", n, sc.Bytes(), err)
		}
	}
	if steps[0].Service != "benchmark" || steps[0].WarmupNS != 1e9 || steps[0].IntervalNS != 3e9 {
		t.Errorf("got %+v, want service benchmark, warm-up 1e9 ns, interval 3e9 ns", steps[0])
	}
}

// TestStepSchemaRefuses: what the contract says a client refuses, the
// schema refuses too: an unknown field, a duration that is not an integer,
// a missing field, an unknown layout.
func TestStepSchemaRefuses(t *testing.T) {
	schema := stepSchema(t)
	good := `"target":"h:1","service":"benchmark","rpc":"unary","inflight":1,"payload_bytes":0,"warmup_ns":0,"interval_ns":1,"out":"o"`
	for _, line := range []string{
		`{` + good + `,"conn":"shared","bogus":1}`,
		`{` + good + `,"conn":"shared","warmup_ns":"1s"}`,
		`{"target":"h:1","conn":"shared"}`,
		`{` + good + `,"conn":"pool:0"}`,
		`{` + good + `,"conn":"mesh"}`,
	} {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(line)))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(v) == nil {
			t.Errorf("the schema took %s, want it refused", line)
		}
	}
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(`{` + good + `,"conn":"pool:4:least-loaded"}`)))
	if err := schema.Validate(v); err != nil {
		t.Errorf("the schema refused a good step: %v", err)
	}
}
