# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""python -m rpclab_client: see rpclab_client.main."""

from rpclab_client.main import main

if __name__ == "__main__":
    main()
