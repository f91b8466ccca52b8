// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package usage_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rpclab/rpclab/internal/usage"
)

var errRate = errors.New("pkg: rate")

func TestError(t *testing.T) {
	cause := errors.New("negative")
	named := usage.Errorf(errRate, "%d: %w", -1, cause)
	tests := []struct {
		name    string
		err     error
		msg     string
		setting error // nil: none
		is      []error
	}{
		{"a named setting", named, "pkg: rate: -1: negative", errRate, []error{errRate, cause}},
		{"a message naming its flag", usage.Wrap(fmt.Errorf("--rate: %w", cause)), "--rate: negative", nil, []error{cause}},
		{"wrapping keeps the setting inside", usage.Wrap(fmt.Errorf("sweep: %w", named)), "sweep: pkg: rate: -1: negative", errRate, []error{errRate, cause}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.msg {
				t.Errorf("got %q, want %q", got, tc.msg)
			}
			var ue *usage.Error
			if !errors.As(tc.err, &ue) {
				t.Fatalf("got %T, want a *usage.Error inside", tc.err)
			}
			if ue.Setting != tc.setting {
				t.Errorf("got setting %v, want %v", ue.Setting, tc.setting)
			}
			for _, want := range tc.is {
				if !errors.Is(tc.err, want) {
					t.Errorf("got errors.Is(%v, %v) false, want true", tc.err, want)
				}
			}
		})
	}
	if got := usage.Wrap(nil); got != nil {
		t.Errorf("got Wrap(nil) = %v, want nil", got)
	}
}
