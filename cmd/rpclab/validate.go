// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/result"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE.jsonl...",
		Short: "Check result files against the record schemas",
		Long: `Check that every line of each JSON Lines file is a result record that matches
the schema of its kind: schema/result.schema.json for ping records (what every
rpclab client must write), schema/bulk.schema.json for "rpclab bulk" records,
schema/flow.schema.json for "rpclab flow" records. A file may mix kinds. Each
record's own arithmetic is checked too: no more errors than requests, a
histogram that decodes, a throughput its counts and duration can give. Files
are read line by line (each line at most 64 MiB), keeping no record, so a file
of any size is checked. Prints the number of records per file and kind; exits
1 naming the file and the first bad line, or a file without records.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			for _, f := range files {
				set, err := result.CheckAllFile(cmd.Context(), f)
				if err != nil {
					return fmt.Errorf("validate: %w", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d records ok%s\n", f, set.Len(), kindCounts(set))
			}
			return nil
		},
	}
}

// kindCounts is " (3 ping, 2 bulk)" for a file of several kinds, "" for one.
func kindCounts(set *result.Set) string {
	kinds := set.Kinds()
	if len(kinds) < 2 {
		return ""
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", set.Count(k), k)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
