#!/usr/bin/env bash
# Conventions, checked by grep as grpc-go's vet.sh does, then gofmt, go vet
# (Linux and darwin), go mod tidy and staticcheck.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
gofiles=$(git ls-files '*.go' | grep -v '\.pb\.go$' || true)
bad=$(gofmt -l $gofiles)
if [ -n "$bad" ]; then echo "vet: not gofmt'ed: $bad"; fail=1; fi
for f in $gofiles; do
  head -1 "$f" | grep -q 'Copyright 2026 The rpclab Authors' || { echo "vet: $f: missing copyright header"; fail=1; }
done
if git grep -n 'interface{}' -- '*.go' ':!*.pb.go' >/dev/null; then
  git grep -n 'interface{}' -- '*.go' ':!*.pb.go'; echo "vet: use any, not interface{}"; fail=1
fi
if git grep -n 'log\.Fatal' -- '*.go' ':!cmd/**' >/dev/null; then
  git grep -n 'log\.Fatal' -- '*.go' ':!cmd/**'; echo "vet: log.Fatal outside cmd/"; fail=1
fi
if git grep -n 'time\.After(' -- '*.go' ':!*_test.go' >/dev/null; then
  git grep -n 'time\.After(' -- '*.go' ':!*_test.go'; echo "vet: time.After outside tests (allocates a timer per call)"; fail=1
fi
go vet ./...
# The Linux-only parts sit behind build tags: the rest must build and vet elsewhere.
GOOS=darwin go vet ./... || { echo "vet: GOOS=darwin go vet failed"; fail=1; }
go mod tidy -diff || { echo "vet: go.mod/go.sum are not tidy (run go mod tidy)"; fail=1; }
# staticcheck, pinned; go run fetches it from the Go module proxy once.
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... || { echo "vet: staticcheck"; fail=1; }
# C++ (clients/cpp): clang-format with the committed .clang-format, when installed.
if command -v clang-format >/dev/null; then
  clang-format --dry-run --Werror clients/cpp/src/*.cc clients/cpp/src/*.h || { echo "vet: clients/cpp not clang-format'ed (clang-format -i clients/cpp/src/*)"; fail=1; }
fi
exit $fail
