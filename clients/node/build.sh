#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# Builds rpclab's Node client (docs/clients.md): installs the packages pinned
# by the committed package-lock.json into clients/node/node_modules with
# `npm ci`, only when package.json or package-lock.json changed since the last
# install (a stamp in node_modules records their hash); silent and instant
# otherwise. Nothing is generated: the client loads ../../proto at run time
# with @grpc/proto-loader. Needs node (18+) and npm; packages come from the
# npm registry through npm's cache (~/.npm).
set -euo pipefail
cd "$(dirname "$0")"
command -v node >/dev/null || { echo "clients/node/build.sh: node not found (install Node.js 18+ with npm)" >&2; exit 1; }
command -v npm >/dev/null || { echo "clients/node/build.sh: npm not found (install npm)" >&2; exit 1; }
major=$(node -p 'process.versions.node.split(".")[0]')
if (( major < 18 )); then
  echo "clients/node/build.sh: node $(node --version) is too old (want 18+)" >&2
  exit 1
fi
stamp=node_modules/.rpclab-build
want=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
if [[ -f $stamp && $(<"$stamp") == "$want" ]]; then
  exit 0
fi
# --ignore-scripts: no package here needs an install script (grpc-js is plain
# JavaScript; protobufjs's postinstall only checks its optional CLI).
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
  cat "$log" >&2
  echo "clients/node/build.sh: npm ci failed" >&2
  exit 1
fi
echo "$want" >"$stamp"
