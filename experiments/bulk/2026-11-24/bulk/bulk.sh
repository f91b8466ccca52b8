#!/bin/bash
# run: 5 rounds of the issue-29 bulk command
set -e
run=$1
for r in 1 2 3 4 5; do
  /tmp/rpclab bulk --size 1GiB --chunk 64KiB --requests 3 --transport tcp,grpc,grpc-tuned,sidechannel --out bulk-run$run-round$r.jsonl --force > bulk-run$run-round$r.txt 2>&1
done
/tmp/rpclab bulk --size 64MiB,256MiB,1GiB --chunk 64KiB --transport tcp,grpc,grpc-tuned,sidechannel --out bulk-alloc-run$run.jsonl --force > bulk-alloc-run$run.txt 2>&1
