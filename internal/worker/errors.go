// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import "errors"

// ErrConfig marks a ClientConfig or ServerConfig this worker cannot run;
// the message names the field. The driver receives it as InvalidArgument.
var ErrConfig = errors.New("worker: config")

// ErrBusy marks a RunClient or RunServer that arrived while another one of
// the same kind was running: a worker runs one client and one server at a time.
var ErrBusy = errors.New("worker: busy")

// ErrUnreachable marks a worker the driver could not reach; the message
// names it.
var ErrUnreachable = errors.New("worker: unreachable")

// ErrNoDetail marks a mark without rpclab's detail: the worker is not
// rpclab's (it has no WorkerDetail service), or it was not marked yet.
var ErrNoDetail = errors.New("worker: no detail")

// ErrBudget marks a ClientConfig whose planned memory is above the
// worker's budget (Options.MemoryBudget); the driver receives it as
// ResourceExhausted and the message names the fields and the budget.
var ErrBudget = errors.New("worker: over the memory budget")

// ErrNoSetup marks a RunClient or RunServer stream that sent no setup
// within Options.SetupTimeout; the driver receives it as DeadlineExceeded.
var ErrNoSetup = errors.New("worker: no setup")

// ErrImpossible marks figures a worker reported that no run can give (a
// negative count, a NaN or absurd elapsed time, an unknown status code);
// the driver counts that worker lost for the step, naming the figure.
var ErrImpossible = errors.New("worker: impossible figures")
