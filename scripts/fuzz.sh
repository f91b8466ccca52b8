#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (FUZZTIME, default 15s each), so
# the parsers of outside input keep their seeds green and meet new inputs in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-15s}
# Each package's Fuzz functions, found in its _test.go files.
for pkg in $(go list ./... | grep -v /clients/); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for fn in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $fn ($t)"
    go test -run '^$' -fuzz "^$fn\$" -fuzztime "$t" "$pkg"
  done
done
