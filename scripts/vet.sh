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
# The pool module (pool/go.mod): the same checks; ./... at the root does not reach it.
(cd pool && go vet ./... && GOOS=darwin go vet ./...) || { echo "vet: go vet (pool module)"; fail=1; }
(cd pool && go mod tidy -diff) || { echo "vet: pool/go.mod/go.sum are not tidy (cd pool && go mod tidy)"; fail=1; }
(cd pool && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...) || { echo "vet: staticcheck (pool module)"; fail=1; }
# The peers module (bench/peers/go.mod) replaces the root module: a package
# the root starts importing must reach its go.sum too.
(cd bench/peers && go vet ./... && go mod tidy -diff) || { echo "vet: bench/peers (go vet, or go.mod/go.sum not tidy: cd bench/peers && go mod tidy)"; fail=1; }
# --- Python and Node (clients/python, clients/node)
# Python: ruff check and format --check, from the client's venv
# (clients/python/build.sh installs the pinned ruff); only where it was built.
if [ -x clients/python/.venv/bin/ruff ]; then
  (cd clients/python && .venv/bin/ruff check --quiet . && .venv/bin/ruff format --check --quiet .) ||
    { echo "vet: ruff (clients/python)"; fail=1; }
  # The studies' analysis programs, with experiments/ruff.toml.
  (cd experiments && ../clients/python/.venv/bin/ruff check --quiet --no-cache . &&
    ../clients/python/.venv/bin/ruff format --check --quiet --no-cache .) ||
    { echo "vet: ruff (experiments)"; fail=1; }
fi
# Node: eslint, a devDependency (clients/node/build.sh's npm ci installs it),
# with eslint.config.js; only where it was built.
if [ -x clients/node/node_modules/.bin/eslint ]; then
  (cd clients/node && node_modules/.bin/eslint .) || { echo "vet: eslint (clients/node)"; fail=1; }
fi
# --- end Python and Node
# --- Java (clients/java and its pool library clients/java/pool): the formatter check, Spotless with
# palantir-java-format (google-java-format at 120 columns), both from Maven Central; `mvn spotless:apply` fixes. RPCLAB_MVN_FLAGS=-o: offline.
if command -v mvn >/dev/null; then
  for d in clients/java clients/java/pool; do
    # shellcheck disable=SC2086
    (cd "$d" && mvn -q -B -Dstyle.color=never ${RPCLAB_MVN_FLAGS:-} spotless:check) ||
      { echo "vet: $d: mvn spotless:check failed (cd $d && mvn spotless:apply)"; fail=1; }
  done
fi
# --- end Java
# --- Rust (clients/rust): rustfmt --check, and clippy with warnings as errors (it builds, so needs protoc). ---
if command -v cargo >/dev/null && cargo fmt --version >/dev/null 2>&1; then
  (cd clients/rust && cargo fmt --check) || { echo "vet: clients/rust is not rustfmt'ed (run cargo fmt)"; fail=1; }
fi
if command -v cargo >/dev/null && cargo clippy --version >/dev/null 2>&1 && command -v protoc >/dev/null; then
  (cd clients/rust && cargo clippy -q --release --locked --workspace --all-targets -- -D warnings) || { echo "vet: clippy (clients/rust, pool included)"; fail=1; }
fi
# --- end Rust ---
# C++ (clients/cpp): clang-format with the committed .clang-format, when installed.
if command -v clang-format >/dev/null; then
  clang-format --dry-run --Werror clients/cpp/src/*.cc clients/cpp/src/*.h clients/cpp/pool/*.cc clients/cpp/pool/*.h clients/cpp/pool/tools/*.cc || { echo "vet: clients/cpp not clang-format'ed (clang-format -i clients/cpp/src/* clients/cpp/pool/* clients/cpp/pool/tools/*)"; fail=1; }
fi
exit $fail
