# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
