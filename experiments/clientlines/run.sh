#!/usr/bin/env bash
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
#
# Lines of each client's own code (issue 24's measure): the committed
# source files under clients/<lang>/, without tests, the pool libraries,
# generated code, lock files and docs. Usage: experiments/clientlines/run.sh [REV]
# (default: the work tree's committed HEAD).
set -euo pipefail
rev=${1:-HEAD}
cd "$(dirname "$0")/../.."
total=0
for lang in python node java cpp rust; do
	n=0
	while read -r f; do
		n=$((n + $(git show "$rev:$f" | wc -l)))
	done < <(git ls-tree -r --name-only "$rev" "clients/$lang" |
		grep -v -E "^clients/$lang/pool/|/gen/|_pb2|lock|\.md$|\.gitignore$|node_modules" |
		grep -v -i test |
		grep -E '\.(py|js|java|cc|h|rs|toml|xml|txt|sh)$|/rpclab-[a-z-]+$')
	printf '%-7s %5d\n' "$lang" "$n"
	total=$((total + n))
done
printf '%-7s %5d\n' total "$total"
