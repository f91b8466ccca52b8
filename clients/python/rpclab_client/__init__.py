# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""rpclab's Python client (docs/clients.md) on grpcio's sync API."""
