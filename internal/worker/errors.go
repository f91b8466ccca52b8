// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import "errors"

// ErrConfig marks a ClientConfig or ServerConfig this worker cannot run;
// the message names the field. The driver receives it as InvalidArgument.
var ErrConfig = errors.New("worker: config")

// ErrBusy marks a RunClient or RunServer that arrived while another one of
// the same kind was running: a worker runs one client and one server at a time.
var ErrBusy = errors.New("worker: busy")

// ErrBudget marks a ClientConfig whose planned memory is above the
// worker's budget (Options.MemoryBudget); the driver receives it as
// ResourceExhausted and the message names the fields and the budget.
var ErrBudget = errors.New("worker: over the memory budget")

// ErrNoSetup marks a RunClient or RunServer stream that sent no setup
// within Options.SetupTimeout; the driver receives it as DeadlineExceeded.
var ErrNoSetup = errors.New("worker: no setup")
