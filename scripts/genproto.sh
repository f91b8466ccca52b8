#!/usr/bin/env bash
# Regenerates the Go code in proto/benchpb and proto/bulkpb from proto/. Needs protoc (Debian's
# protobuf-compiler) and the Go plugins at the versions pinned below; `make
# proto` installs the plugins. TestGeneratedCodeIsFresh runs this into a
# temporary folder and compares.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root}
gobin=$(go env GOPATH)/bin
export PATH="$gobin:$PATH"
mkdir -p "$out/proto/benchpb" "$out/proto/bulkpb"
protoc -I "$root/proto" \
  --go_out="$out" --go_opt=module=github.com/rpclab/rpclab \
  --go-grpc_out="$out" --go-grpc_opt=module=github.com/rpclab/rpclab \
  "$root"/proto/grpc/testing/*.proto "$root"/proto/rpclab/v1/*.proto
