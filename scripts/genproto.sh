#!/usr/bin/env bash
# Regenerates the Go code in proto/benchpb, proto/bulkpb, proto/usagepb, proto/ydbpb and proto/workerpb from proto/.
# Needs protoc (Debian's protobuf-compiler); installs the Go plugins at the
# versions pinned here into .tools/bin. With an argument, writes into that
# folder instead of the tree: TestGeneratedCodeIsFresh does that and compares.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root}
PROTOC_GEN_GO=v1.36.12
PROTOC_GEN_GO_GRPC=v1.6.2
tools="$root/.tools/bin"
if ! "$tools/protoc-gen-go" --version 2>/dev/null | grep -q "$PROTOC_GEN_GO"; then
  GOBIN="$tools" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO"
fi
if ! "$tools/protoc-gen-go-grpc" --version 2>/dev/null | grep -q "${PROTOC_GEN_GO_GRPC#v}"; then
  GOBIN="$tools" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC"
fi
command -v protoc >/dev/null || { echo "genproto: protoc not found: apt-get install protobuf-compiler" >&2; exit 1; }
export PATH="$tools:$PATH"
mkdir -p "$out/proto/benchpb" "$out/proto/bulkpb" "$out/proto/usagepb" "$out/proto/ydbpb" "$out/proto/workerpb"
protoc -I "$root/proto" \
  --go_out="$out" --go_opt=module=github.com/rpclab/rpclab \
  --go-grpc_out="$out" --go-grpc_opt=module=github.com/rpclab/rpclab \
  "$root"/proto/grpc/testing/*.proto "$root"/proto/rpclab/v1/*.proto "$root"/proto/ydb/debug/v1/*.proto
