#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# Builds rpclab's Rust client (docs/clients.md) in release mode; cargo itself
# skips the work when nothing changed, quietly. Needs cargo (rustup) and
# protoc (apt-get install protobuf-compiler); crates come from crates.io into
# ~/.cargo/registry, pinned by the committed Cargo.lock.
set -euo pipefail
cd "$(dirname "$0")"
command -v cargo >/dev/null || { echo "clients/rust/build.sh: cargo not found (install Rust with rustup)" >&2; exit 1; }
if [[ -z ${PROTOC:-} ]] && ! command -v protoc >/dev/null; then
  echo "clients/rust/build.sh: protoc not found (apt-get install protobuf-compiler, or set PROTOC)" >&2
  exit 1
fi
cargo build -q --release --locked
