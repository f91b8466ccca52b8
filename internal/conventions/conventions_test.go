// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package conventions holds tests of the repository as a whole, not of one
// package: the docs' links and the layout they describe, file and function
// sizes, and where tests take their time bounds from. Each reads files from
// the repository root, where TestMain puts the working directory.
package conventions

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if err := os.Chdir("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
