// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk_test

import (
	"os"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/bulk"
)

// The measured records committed with docs/bulk.md still match the schema.
func TestCommittedResultsMatchTheSchema(t *testing.T) {
	f, err := os.Open("../docs/img/bulk-results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := bulk.ReadJSONL(f)
	if err != nil || len(recs) == 0 {
		t.Fatalf("got %d records, %v; want records that match docs/bulk.schema.json", len(recs), err)
	}
}

func TestValidateRejectsBadRecords(t *testing.T) {
	tests := []struct {
		name, rec, want string
	}{
		{"ping record", `{"schema_version":1,"kind":"ping"}`, "kind"},
		{"unknown transport", `{"schema_version":1,"kind":"bulk","spec":{"transport":"pigeon"}}`, "transport"},
		{"not JSON", `{"schema_version":`, "not JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := bulk.Validate([]byte(tc.rec))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
