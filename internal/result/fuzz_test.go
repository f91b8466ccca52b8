// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzReadAll feeds the one reader of every kind arbitrary input, seeded
// with each line of every committed record file and a few lines of every
// kind together (whole files make the fuzzer's minimisation crawl). It must never
// panic, and every record it accepts must marshal back to JSON that
// validates against its kind's schema and passes Check. Run it for a bounded time:
//
//	go test -run '^$' -fuzz FuzzReadAll -fuzztime 20s ./result
func FuzzReadAll(f *testing.F) {
	var mixed []byte
	for _, p := range committedFiles(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		for _, line := range lines {
			f.Add(line)
		}
		mixed = append(mixed, lines[0]...)
	}
	f.Add(mixed)
	f.Add([]byte(""))
	f.Add([]byte(`{"schema_version":1,"kind":"flow"`))
	f.Fuzz(func(t *testing.T, in []byte) {
		set, _ := ReadAll(t.Context(), bytes.NewReader(in))
		if set == nil {
			t.Fatal("ReadAll returned a nil set")
		}
		check := func(r Kinded) {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("accepted %s record does not marshal: %v", r.recordKind(), err)
			}
			if err := Validate(b); err != nil {
				t.Fatalf("accepted %s record does not validate once marshalled: %v\n%s", r.recordKind(), err, b)
			}
			if err := Check(r); err != nil {
				t.Fatalf("accepted %s record fails Check: %v\n%s", r.recordKind(), err, b)
			}
		}
		for i := range set.Ping {
			check(&set.Ping[i])
		}
		for i := range set.Bulk {
			check(&set.Bulk[i])
		}
		for i := range set.Flow {
			check(&set.Flow[i])
		}
	})
}
