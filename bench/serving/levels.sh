#!/usr/bin/env bash
# Serving figures at fixed concurrency levels: starts `met serve MODEL` on a
# free port, drives it with met_serving_load (streamed completions, random
# prompts, ignore_eos) at each level, and prints per level output tok/s,
# TTFT and inter-token latency percentiles, and the server's largest thread
# count and resident set seen during the level.
#   bench/serving/levels.sh MET_BINARY LOAD_BINARY MODEL.gguf [LEVELS] [SERVE_FLAGS...]
#   bench/serving/levels.sh build/apps/met build/bench/serving/met_serving_load \
#       ../shared/models/stories260K.gguf 1,64,512,2000 --threads 2
set -euo pipefail
met=$1 load=$2 model=$3
levels=${4:-1,64,512,2000}
shift 3; [ $# -gt 0 ] && shift
log=$(mktemp)
"$met" serve "$model" --port 0 --max-concurrent 4096 --max-seqs 256 "$@" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 600); do
  grep -q 'listening on' "$log" && break
  kill -0 $pid 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.1
done
port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$log")
# One request per client at the high levels keeps a run short; at least 64.
for n in ${levels//,/ }; do
  requests=$(( n > 64 ? n : 64 ))
  "$load" --port "$port" --concurrency "$n" --requests "$requests" --prompt-tokens 32 --output-tokens 64 \
    --token-lo 10 --token-hi 500 --server-pid "$pid" | tail -n +$([ "$n" = "${levels%%,*}" ] && echo 1 || echo 4)
done
