// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/result"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE.jsonl...",
		Short: "Check result files against the record schema",
		Long: `Check that every line of each JSON Lines file is a result record that matches
docs/result.schema.json, as every rpclab client must write. Prints the number
of records per file; exits 1 naming the first bad line.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			for _, f := range files {
				recs, err := result.ReadFile(f)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d records ok\n", f, len(recs))
			}
			return nil
		},
	}
}
