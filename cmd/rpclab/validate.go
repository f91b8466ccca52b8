// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/bulk"
	"github.com/rpclab/rpclab/result"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE.jsonl...",
		Short: "Check result files against the record schemas",
		Long: `Check that every line of each JSON Lines file is a result record that matches
its schema: docs/result.schema.json for ping records (what every rpclab client
must write), docs/bulk.schema.json for "rpclab bulk" records. The first
record's kind picks the schema. Prints the number of records per file; exits 1
naming the first bad line.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			for _, f := range files {
				n, err := validateFile(f)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d records ok\n", f, n)
			}
			return nil
		},
	}
}

func validateFile(path string) (int, error) {
	if firstKind(path) == "bulk" {
		f, err := os.Open(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		recs, err := bulk.ReadJSONL(f)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		return len(recs), nil
	}
	recs, err := result.ReadFile(path)
	return len(recs), err
}

// firstKind is the "kind" of the file's first JSON line ("" if none).
func firstKind(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
			var probe struct {
				Kind string `json:"kind"`
			}
			_ = json.Unmarshal(b, &probe)
			return probe.Kind
		}
	}
	return ""
}
