// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package usage is the one shape of "a bad setting": what was asked for
// cannot run, as opposed to a failure while running it. Every package
// returns a *Error for it (loadgen's spec, bulk's, flow's, doctor's
// options, netem's link, the command line's own checks), and rpclab's
// main maps it, in one place, to exit code 2 and the flag of its Setting.
package usage

import (
	"errors"
	"fmt"
)

// Error is a bad setting. Setting is the sentinel that names the setting
// at fault (loadgen.ErrRate, flow.ErrBadPayload, netem.ErrBadDelay), which
// errors.Is matches through the Error, so a caller tells which setting
// was at fault without reading the text; it is nil where Err names the
// setting itself (a command line's own check, which names its flag).
type Error struct {
	Setting error
	Err     error
}

// Error is the setting's name, then what is wrong with it.
func (e *Error) Error() string {
	if e.Setting == nil {
		return e.Err.Error()
	}
	return e.Setting.Error() + ": " + e.Err.Error()
}

// Unwrap gives the setting's sentinel (if any) and the cause.
func (e *Error) Unwrap() []error {
	if e.Setting == nil {
		return []error{e.Err}
	}
	return []error{e.Setting, e.Err}
}

// Errorf is a bad setting: the cause formats as fmt.Errorf does (%w
// included).
func Errorf(setting error, format string, args ...any) error {
	return &Error{Setting: setting, Err: fmt.Errorf(format, args...)}
}

// Wrap marks err as a bad setting whose text names the setting. It gives
// nil for nil, and err itself when err already holds a *Error, so that
// the setting named inside is not hidden.
func Wrap(err error) error {
	var ue *Error
	if err == nil || errors.As(err, &ue) {
		return err
	}
	return &Error{Err: err}
}
