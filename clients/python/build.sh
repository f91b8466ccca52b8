#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# Builds rpclab's Python client (docs/clients.md): a venv in .venv with the
# pinned packages of pyproject.toml from PyPI (the client installed editable,
# with grpcio-tools, and beside it the pool library of pool/, editable), then
# the stubs of ../../proto generated into gen/ by grpc_tools.protoc. Each
# part is redone only when its inputs changed; silent when up to date. Needs
# python3 (3.9+, with venv); PYTHON picks another.
set -euo pipefail
cd "$(dirname "$0")"
py=${PYTHON:-python3}
command -v "$py" >/dev/null || { echo "clients/python/build.sh: $py not found" >&2; exit 1; }

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

deps=$(printf '%s %s\n' "$("$py" -c 'import sys; print(sys.version)')" "$(hash_of pyproject.toml pool/pyproject.toml)")
if [[ ! -x .venv/bin/python || "$(cat .venv/.rpclab-deps 2>/dev/null)" != "$deps" ]]; then
  "$py" -m venv --clear .venv
  PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 .venv/bin/python -m pip install -q -e '.[build]' -e ./pool
  printf '%s\n' "$deps" >.venv/.rpclab-deps
fi

protos=(../../proto/grpc/testing/*.proto)
gen=$(printf '%s %s\n' "$(hash_of "${protos[@]}")" "$deps")
if [[ ! -d gen/grpc/testing || "$(cat gen/.rpclab-gen 2>/dev/null)" != "$gen" ]]; then
  rm -rf gen.tmp
  mkdir -p gen.tmp
  .venv/bin/python -m grpc_tools.protoc -I ../../proto --python_out=gen.tmp --grpc_python_out=gen.tmp "${protos[@]}"
  printf '%s\n' "$gen" >gen.tmp/.rpclab-gen
  rm -rf gen
  mv gen.tmp gen
fi
