#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# Builds rpclab's C++ client and server (docs/clients.md) into
# clients/cpp/build/ with CMake, against the distribution's gRPC C++:
#   apt-get install -y libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc \
#     protobuf-compiler zlib1g-dev cmake g++ make pkg-config libgtest-dev
# Idempotent: configures once, then make rebuilds only what changed (quiet
# when up to date). RPCLAB_CPP_JOBS sets make's parallelism (default: CPUs).
set -euo pipefail
cd "$(dirname "$0")"
missing=()
for tool in cmake g++ make pkg-config protoc grpc_cpp_plugin; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if ! command -v pkg-config >/dev/null || ! pkg-config --exists grpc++ protobuf zlib 2>/dev/null; then
  missing+=("grpc++/protobuf/zlib development files")
fi
if ((${#missing[@]})); then
  echo "clients/cpp/build.sh: missing ${missing[*]}; install them with:" >&2
  echo "  apt-get install -y libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc protobuf-compiler zlib1g-dev cmake g++ make pkg-config libgtest-dev" >&2
  exit 1
fi
jobs=${RPCLAB_CPP_JOBS:-$(nproc 2>/dev/null || echo 2)}
if [[ ! -f build/Makefile ]]; then
  mkdir -p build
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build/cmake.log 2>&1 || {
    cat build/cmake.log >&2
    echo "clients/cpp/build.sh: cmake configure failed (log above)" >&2
    exit 1
  }
fi
# make prints only warnings and errors; a failed build shows them all.
log=build/make.log
if ! make -s -C build -j"$jobs" --no-print-directory >"$log" 2>&1; then
  cat "$log" >&2
  echo "clients/cpp/build.sh: build failed (log above)" >&2
  exit 1
fi
grep -v -e '^\[' -e '^-- ' -e '^Built target' -e '^Scanning' -e '^Consolidate' "$log" >&2 || true
