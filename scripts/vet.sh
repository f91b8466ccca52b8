#!/usr/bin/env bash
# Conventions, checked by grep as grpc-go's vet.sh does, then gofmt and go vet.
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
exit $fail
