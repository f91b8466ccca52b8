// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package driver

import "errors"

// ErrConfig marks a sweep the driver cannot run on its workers (no worker,
// a layout or RPC the worker protocol cannot ask for); the message names it.
var ErrConfig = errors.New("driver: config")

// ErrUnreachable marks a worker the driver could not reach; the message
// names it.
var ErrUnreachable = errors.New("driver: unreachable")

// ErrNoDetail marks a mark without rpclab's detail: the worker is not
// rpclab's (it has no WorkerDetail service), or it was not marked yet.
var ErrNoDetail = errors.New("driver: no detail")

// ErrImpossible marks figures a worker reported that no run can give (a
// negative count, a NaN or absurd elapsed time, an unknown status code);
// the driver counts that worker lost for the step, naming the figure.
var ErrImpossible = errors.New("driver: impossible figures")
