// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"errors"
	"fmt"
)

// ErrInvalidOption is wrapped by New's error when an option's value is out
// of range (an empty server command, a queue of zero bytes, no executable).
var ErrInvalidOption = errors.New("lab: invalid option")

// ErrServerExited is wrapped by the error of a session whose child server
// exited before the session ended; the error names the exit status or the
// signal, and what the server wrote to stderr.
var ErrServerExited = errors.New("lab: the server exited during the run")

// ErrProxyExited is wrapped by the error of a session whose netem proxy
// exited before the session ended (so its target stopped answering): the
// error names the proxy's upstream, its exit status or signal, and what it
// wrote to stderr.
var ErrProxyExited = errors.New("lab: the netem proxy exited during the run")

// ErrSameFile is wrapped by an OutputError when an output is one of the
// inputs or another output: writing it would destroy what was read or
// written before.
var ErrSameFile = errors.New("the same file")

// ErrExists is wrapped by an OutputError when an output file exists and is
// not empty, and overwriting was not allowed (WithForce).
var ErrExists = errors.New("the file exists and is not empty")

// ErrRecordsFile is wrapped by an OutputError when a CSV, HTML or other
// non-records output would replace a records file: --force never allows
// that (a table is no substitute for the records it was made from).
var ErrRecordsFile = errors.New("is a records file, which this output would replace")

// ErrNoClient is returned by Run when no client is left to run.
var ErrNoClient = errors.New("lab: no client left to run")

// OutputError is an output that cannot be written: Name is the caller's
// name for it (the CLI passes its flag), Path the file or folder.
type OutputError struct {
	Name, Path string
	Err        error
}

func (e *OutputError) Error() string { return fmt.Sprintf("%s %s: %v", e.Name, e.Path, e.Err) }
func (e *OutputError) Unwrap() error { return e.Err }

// WriteError is a records file that failed to take a record: Written
// records reached it before (Session.Written), so a caller says how many
// were kept, not how many were measured.
type WriteError struct {
	Name, Path string
	Written    int
	Err        error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%s %s: after %d records: %v", e.Name, e.Path, e.Written, e.Err)
}
func (e *WriteError) Unwrap() error { return e.Err }
