#!/usr/bin/env bash
# Compares met's /v1/embeddings with llama.cpp's llama-embedding on the same
# GGUF and text: both L2-normalised, pooled the file's way; prints the
# number of dimensions, the largest absolute difference and the cosine.
# Usage: bench/peer/embed_crosscheck.sh MODEL.gguf "text" [met binary]
# Needs llama-embedding (LLAMA_BIN, default /work/llama.cpp-build/bin) and
# python3. llama-embedding prints 6 decimals, so agreement shows to ~1e-6.
set -euo pipefail
model=$1
text=$2
met=${3:-build/apps/met}
llama_bin=${LLAMA_BIN:-/work/llama.cpp-build/bin}
port=$((20000 + RANDOM % 20000))
log=$(mktemp)
"$met" serve "$model" --port "$port" --threads 2 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log" "$log.llama"' EXIT
for _ in $(seq 50); do curl -sf "localhost:$port/health" >/dev/null && break; sleep 0.2; done
met_json=$(curl -sf "localhost:$port/v1/embeddings" -H 'Content-Type: application/json' \
  -d "$(python3 -c 'import json,sys; print(json.dumps({"input": sys.argv[1]}))' "$text")")
# This llama-embedding build exits 0 without printing the whole vector in
# about half its runs (nothing, or a cut line; with and without other
# load): retry until a line has as many values as met's.
dims=$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["data"][0]["embedding"]))' "$met_json")
llama_line=
for _ in $(seq 10); do
  llama_out=$(LD_LIBRARY_PATH="$llama_bin" "$llama_bin/llama-embedding" -m "$model" -p "$text" \
    --embd-normalize 2 -t 2 2>"$log.llama") || { tail -5 "$log.llama"; exit 1; }
  llama_line=$(grep '^embedding 0:' <<<"$llama_out" || true)
  [ "$(wc -w <<<"$llama_line")" -eq $((dims + 2)) ] && break
  llama_line=
done
[ -n "$llama_line" ] || { echo "llama-embedding printed no vector in 10 runs"; exit 1; }
python3 - "$met_json" "$llama_line" <<'PY'
import json, math, sys
met = json.loads(sys.argv[1])["data"][0]["embedding"]
llama = [float(x) for x in sys.argv[2].split(":", 1)[1].split()]
assert len(met) == len(llama), (len(met), len(llama))
diff = max(abs(a - b) for a, b in zip(met, llama))
cos = sum(a * b for a, b in zip(met, llama)) / math.sqrt(sum(a * a for a in met) * sum(b * b for b in llama))
print(f"dims {len(met)}  max |met - llama.cpp| {diff:.2e}  cosine {cos:.8f}")
PY
