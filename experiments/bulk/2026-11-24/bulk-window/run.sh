#!/usr/bin/env bash
set -u
for r in 1 2 3 4 5; do
  for b in base win; do
    /work/meas/rpclab-$b bulk --size 1GiB --chunk 64KiB --requests 3 --transport tcp,grpc-tuned --force --out $b-$r.jsonl > $b-$r.txt 2>&1
  done
done
echo done
