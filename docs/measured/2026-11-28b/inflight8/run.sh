cd /work/main
for rep in 1 2 3; do
  bin/rpclab sweep --conn pool:8 --inflight 8 --warmup 10s --interval 6s --force -o /tmp/m8/fixed-$rep.jsonl >/dev/null 2>&1
  bin/rpclab sweep --conn pool:auto --inflight 8 --warmup 75s --interval 6s --force -o /tmp/m8/auto-$rep.jsonl --pool-events /tmp/m8/auto-$rep-events.tsv >/dev/null 2>&1
  bin/rpclab sweep --conn pool:auto:8:8 --inflight 8 --warmup 10s --interval 6s --force -o /tmp/m8/auto88-$rep.jsonl >/dev/null 2>&1
done
echo done
