#!/usr/bin/env bash
# The whole suite: conventions, vet, every Go package with the race detector,
# and every language's client through clients/conformance.
set -euo pipefail
cd "$(dirname "$0")/.."
export RPCLAB_REQUIRE_PROTOC=1 RPCLAB_REQUIRE_BROWSER=1 RPCLAB_CLIENTS=${RPCLAB_CLIENTS:-all}
# CI runs as root with iproute2 and the Go module proxy: the several-hosts
# test (network namespaces) and the official grpc-go worker must run.
export RPCLAB_REQUIRE_NETNS=1 RPCLAB_REQUIRE_OFFICIAL_WORKER=1
# Build every client first, one at a time (2 cores), so test timings are sane.
for b in clients/*/build.sh; do
  echo "test: building ${b%/build.sh}"
  bash "$b"
done
# Vet after the builds: the clients' linters (ruff, eslint, clippy, Spotless,
# clang-format) come with their builds.
scripts/vet.sh
go test -race -timeout 45m ./... 2>&1 | tee /tmp/rpclab-test.log
# The pool module (its own go.mod, what users install): every test, with the race detector.
(cd pool && go test -race -timeout 10m ./...) 2>&1 | tee -a /tmp/rpclab-test.log
# The peers' comparison module (its own go.mod): its pools and parsers work.
(cd bench/peers && go test -race -timeout 10m ./...)
# Every parser of outside input meets new inputs for a bounded time.
FUZZTIME=${FUZZTIME:-10s} scripts/fuzz.sh
# The tests that guard a number users read fail when that number breaks.
go run ./scripts/mutate
