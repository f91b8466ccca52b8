// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package deploy_test checks the Kubernetes example in deploy/: the
// LoadTest manifest names only fields grpc/test-infra's LoadTest CRD has,
// and its scenario runs on rpclab's worker.
package deploy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"gopkg.in/yaml.v3"

	"github.com/rpclab/rpclab/internal/driver"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/worker"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/workerpb"
)

// field is one level of the LoadTest CRD (e2etest.grpc.io/v1), written
// from the field documentation of grpc/test-infra's api/v1
// (loadtest_types.go): a map's keys, a list's items, or a leaf.
type field struct {
	keys  map[string]*field // an object: its fields
	items *field            // a list: its items
	any   bool              // free-form (Kubernetes metadata maps)
}

func obj(keys map[string]*field) *field { return &field{keys: keys} }
func list(f *field) *field              { return &field{items: f} }

var (
	leaf    = &field{}
	strList = list(leaf)
	// Kubernetes' EnvVar and VolumeMount, as far as a manifest here uses them.
	envVar      = list(obj(map[string]*field{"name": leaf, "value": leaf, "valueFrom": {any: true}}))
	volumeMount = list(obj(map[string]*field{"name": leaf, "mountPath": leaf, "readOnly": leaf, "subPath": leaf}))
	clone       = obj(map[string]*field{"image": leaf, "repo": leaf, "gitRef": leaf})
	build       = obj(map[string]*field{"image": leaf, "command": strList, "args": strList, "env": envVar})
	run         = obj(map[string]*field{"image": leaf, "command": strList, "args": strList, "env": envVar, "volumeMounts": volumeMount})
	container   = obj(map[string]*field{"image": leaf, "command": strList, "args": strList, "env": envVar, "volumeMounts": volumeMount})
)

// component is a Driver, Server or Client: name, language, pool, clone,
// build, run; a Client may also have sidecar and xds.
func component(client bool) *field {
	k := map[string]*field{"name": leaf, "language": leaf, "pool": leaf, "clone": clone, "build": build, "run": run}
	if client {
		k["sidecar"], k["xds"] = container, container
	}
	return obj(k)
}

var loadTest = obj(map[string]*field{
	"apiVersion": leaf,
	"kind":       leaf,
	"metadata": obj(map[string]*field{
		"name": leaf, "namespace": leaf, "labels": {any: true}, "annotations": {any: true},
	}),
	"spec": obj(map[string]*field{
		"driver":         component(false),
		"servers":        list(component(false)),
		"clients":        list(component(true)),
		"results":        obj(map[string]*field{"bigQueryTable": leaf}),
		"scenariosJSON":  leaf,
		"timeoutSeconds": leaf,
		"ttlSeconds":     leaf,
	}),
})

// check returns the paths in v that f does not have.
func check(f *field, v any, path string) []string {
	if f.any {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		if f.keys == nil {
			return []string{path + " (an object where the CRD has none)"}
		}
		var bad []string
		for k, sub := range v {
			g, ok := f.keys[k]
			if !ok {
				bad = append(bad, path+"."+k)
				continue
			}
			bad = append(bad, check(g, sub, path+"."+k)...)
		}
		return bad
	case []any:
		if f.items == nil {
			return []string{path + " (a list where the CRD has none)"}
		}
		var bad []string
		for i, sub := range v {
			bad = append(bad, check(f.items, sub, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return bad
	default:
		if f.keys != nil || f.items != nil {
			return []string{path + " (a value where the CRD has an object or list)"}
		}
		return nil
	}
}

func readManifest(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("loadtest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("loadtest.yaml: %v", err)
	}
	return m
}

// TestLoadTestFields: the manifest parses, is a LoadTest, names only the
// CRD's fields, and has what the CRD requires (each component's language
// and run, timeoutSeconds and ttlSeconds of at least 1).
func TestLoadTestFields(t *testing.T) {
	m := readManifest(t)
	if bad := check(loadTest, m, ""); len(bad) > 0 {
		slices.Sort(bad)
		t.Errorf("fields the LoadTest CRD does not have: %s", strings.Join(bad, ", "))
	}
	if m["apiVersion"] != "e2etest.grpc.io/v1" || m["kind"] != "LoadTest" {
		t.Errorf("got %v %v, want e2etest.grpc.io/v1 LoadTest", m["apiVersion"], m["kind"])
	}
	spec, _ := m["spec"].(map[string]any)
	for _, k := range []string{"timeoutSeconds", "ttlSeconds"} {
		if n, ok := spec[k].(int); !ok || n < 1 {
			t.Errorf("spec.%s: got %v, want an integer of at least 1", k, spec[k])
		}
	}
	for _, kind := range []string{"servers", "clients"} {
		comps, _ := spec[kind].([]any)
		if len(comps) == 0 {
			t.Errorf("spec.%s: none", kind)
		}
		for i, c := range comps {
			c, _ := c.(map[string]any)
			if l, _ := c["language"].(string); l == "" || c["run"] == nil {
				t.Errorf("spec.%s[%d]: got language %q and run %v, want both", kind, i, l, c["run"])
			}
		}
	}
}

// TestCheckFindsUnknownFields: the check itself sees a field the CRD does
// not have, at any depth.
func TestCheckFindsUnknownFields(t *testing.T) {
	for _, tc := range []struct {
		yaml, want string
	}{
		{"spec: {workers: []}", ".spec.workers"},
		{"spec: {clients: [{language: go, run: {image: x, replicas: 2}}]}", ".spec.clients[0].run.replicas"},
		{"spec: {servers: [{language: go, sidecar: {image: x}}]}", ".spec.servers[0].sidecar"},
		{"spec: {timeoutSeconds: {seconds: 1}}", ".spec.timeoutSeconds"},
	} {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(tc.yaml), &m); err != nil {
			t.Fatal(err)
		}
		if bad := check(loadTest, m, ""); len(bad) != 1 || !strings.HasPrefix(bad[0], tc.want) {
			t.Errorf("%s: got %v, want %s", tc.yaml, bad, tc.want)
		}
	}
}

// TestScenarioRunsOnRPCLabWorker: the manifest's client_config is a
// grpc.testing.ClientConfig (every name known) that a real rpclab worker
// runs against a real ping server, with rpclab.conn honoured.
func TestScenarioRunsOnRPCLabWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spec, _ := readManifest(t)["spec"].(map[string]any)
	var scen struct {
		Scenarios []struct {
			ClientConfig json.RawMessage `json:"client_config"`
			ServerConfig json.RawMessage `json:"server_config"`
		} `json:"scenarios"`
	}
	js, _ := spec["scenariosJSON"].(string)
	if err := json.Unmarshal([]byte(js), &scen); err != nil || len(scen.Scenarios) == 0 {
		t.Fatalf("scenariosJSON: %v (%d scenarios)", err, len(scen.Scenarios))
	}
	cfg := &pb.ClientConfig{}
	if err := protojson.Unmarshal(scen.Scenarios[0].ClientConfig, cfg); err != nil {
		t.Fatalf("client_config: %v", err)
	}
	if err := protojson.Unmarshal(scen.Scenarios[0].ServerConfig, &pb.ServerConfig{}); err != nil {
		t.Fatalf("server_config: %v", err)
	}
	target := listen(t, func(lis net.Listener) func() {
		s := server.New(server.Options{})
		go s.Serve(lis)
		return s.Stop
	})
	w, err := worker.New(worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	addr := listen(t, func(lis net.Listener) func() {
		done := make(chan struct{})
		go func() { _ = w.Serve(wctx, lis); close(done) }()
		return func() { wcancel(); <-done }
	})
	r, err := driver.Dial(ctx, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cfg.ServerTargets = []string{target} // the driver fills it in
	run, err := r.StartClient(ctx, cfg)
	if err != nil {
		t.Fatalf("an rpclab worker refused the scenario: %v", err)
	}
	defer run.Close(ctx)
	// Mark until the run has RPCs answered (no event says so: polled,
	// until ctx's deadline), then read that mark's detail.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var d *workerpb.MarkDetailResponse
	for d.GetRequestsByCode()["OK"] == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("no RPC answered before the test's deadline (last detail %v)", d)
		case <-tick.C:
		}
		if _, err := run.Mark(ctx, false); err != nil {
			t.Fatal(err)
		}
		if d, err = run.Detail(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d.GetConnsObserved() != 4 {
		t.Errorf("got %v (%v), want RPCs on 4 connections (rpclab.conn=pool:4)", d, err)
	}
}

// listen serves on a free loopback port with start until the test ends.
func listen(t *testing.T, start func(net.Listener) func()) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(start(lis))
	return lis.Addr().String()
}

// TestWorkersListenBeyondLoopback: rpclab worker listens on loopback unless
// --host says otherwise, so every worker of the manifest (and the image's
// default command) passes --host for every interface, or the driver, in
// another pod, could not reach it.
func TestWorkersListenBeyondLoopback(t *testing.T) {
	spec, _ := readManifest(t)["spec"].(map[string]any)
	for _, kind := range []string{"servers", "clients"} {
		comps, _ := spec[kind].([]any)
		for i, c := range comps {
			c, _ := c.(map[string]any)
			r, _ := c["run"].(map[string]any)
			args, _ := r["args"].([]any)
			if !slices.Contains(args, any("--host=0.0.0.0")) {
				t.Errorf("spec.%s[%d].run.args: got %v, want --host=0.0.0.0", kind, i, args)
			}
		}
	}
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `CMD ["worker", "--driver-port", "10000", "--host", "0.0.0.0"]`) {
		t.Errorf("Dockerfile: got no CMD with --host 0.0.0.0, want the default worker reachable from outside the container")
	}
}
