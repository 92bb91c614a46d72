#!/usr/bin/env bash
# Runs met and llama.cpp on the same GGUF files over one fixed token list (a
# single batch, logits for every position) and reports, per file, the largest
# absolute logit difference and whether the argmax agrees at each position.
# llama.cpp's top-2 margin is shown so a disagreement on a near tie can be told
# from a real one. A manual tool (needs a llama.cpp build); CI never runs it.
#   bench/peer/crosscheck.sh [--met-build DIR] [--llama-build DIR] [--threads N]
#                            [--kv-dtype f16|f32] [--llama-fa auto|on|off]
#                            [--met-isa avx2|avx512|scalar] [--tokens 1,2,3] [--brief]
#                            MODEL.gguf...
# Defaults: --met-build build (met_logits is its bench/peer/met_logits),
# --llama-build ../llama.cpp-build beside the repository, --threads 2, --kv-dtype
# f16 and --llama-fa auto (each side's default: how they run out of the box).
# `--kv-dtype f32 --llama-fa off` takes the attention's F16 rounding out of
# both sides (llama.cpp's CPU flash attention rounds to F16 even over an F32
# cache), leaving only the weights' own arithmetic in the difference.
# --met-isa caps met's kernels (met's own AVX2 and AVX-512 paths differ only in
# the order floats are summed: comparing each with llama.cpp shows how far that
# alone moves a file's logits, e.g. through Q8_0 activation codes and routing).
# --brief prints each file's summary line only, not its per-position table.
# Exit status 1 when a tool fails; disagreements are reported, not failed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
met_build="$repo/build"
llama_build="$repo/../llama.cpp-build"
threads=2
kv_dtype=f16
llama_fa=auto
brief=0
met_isa=()
# 32 ids below 512 (met make-model's smallest vocabulary), no BOS: the same
# ids go to both sides without a tokenizer.
tokens="1,17,300,42,5,511,128,64,9,250,3,77,401,12,199,88,460,33,7,150,275,20,333,99,2,480,61,222,14,370,45,301"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --met-build) met_build=$2; shift 2 ;;
    --llama-build) llama_build=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --kv-dtype) kv_dtype=$2; shift 2 ;;
    --llama-fa) llama_fa=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    --met-isa) met_isa=(--isa "$2"); shift 2 ;;
    --brief) brief=1; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "$0: unknown flag $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { sed -n '2,23p' "$0" >&2; exit 2; }
met_logits="$met_build/bench/peer/met_logits"
llama_logits="$llama_build/bin/llama_logits"
if [[ ! -x "$met_logits" ]]; then
  echo "$0: $met_logits missing: cmake --build $met_build --target met_logits" >&2
  exit 1
fi
if [[ ! -x "$llama_logits" ]]; then
  echo "$0: $llama_logits missing: bench/peer/build_llama_logits.sh $llama_build" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for model in "$@"; do
  "$met_logits" "$model" --tokens "$tokens" --threads "$threads" --kv-dtype "$kv_dtype" "${met_isa[@]}" \
    -o "$work/met.f32"
  "$llama_logits" "$model" "$tokens" "$work/llama.f32" "$threads" "$kv_dtype" "$llama_fa"
  python3 - "$model" "$tokens" "$work/met.f32" "$work/llama.f32" "$brief" <<'PY'
import array, os, sys
model, tokens, met_path, llama_path = sys.argv[1:5]
brief = sys.argv[5] == "1"
n = len(tokens.split(","))
met, llama = array.array("f"), array.array("f")
with open(met_path, "rb") as f: met.frombytes(f.read())
with open(llama_path, "rb") as f: llama.frombytes(f.read())
if len(met) != len(llama) or len(met) % n:
    sys.exit(f"{model}: met wrote {len(met)} floats, llama.cpp {len(llama)}, for {n} positions")
vocab = len(met) // n
def argmax(row): return max(range(len(row)), key=row.__getitem__)
if not brief:
    print(f"{os.path.basename(model)}: {n} positions, vocab {vocab}")
    print(f"  {'pos':>3} {'token':>5} {'met':>6} {'llama':>6} {'max|d|':>9} {'llama top2 gap':>14}")
worst, span, agree, diffs = 0.0, 0.0, 0, []
for p in range(n):
    a, b = met[p * vocab:(p + 1) * vocab], llama[p * vocab:(p + 1) * vocab]
    d = max(abs(x - y) for x, y in zip(a, b))
    worst = max(worst, d)
    diffs.append(d)
    span = max(span, max(abs(y) for y in b))
    ma, lb = argmax(a), argmax(b)
    top2 = sorted(b, reverse=True)[:2]
    agree += ma == lb
    mark = "" if ma == lb else "  DIFFERS"
    if not brief:
        print(f"  {p:>3} {tokens.split(',')[p]:>5} {ma:>6} {lb:>6} {d:>9.2e} {top2[0] - top2[1]:>14.4f}{mark}")
median = sorted(diffs)[n // 2]
print(f"{os.path.basename(model) + ':' if brief else ' '} max |logit difference| {worst:.3e} "
      f"(median over positions {median:.3e}; llama.cpp's largest |logit| {span:.3f}); "
      f"argmax agrees at {agree}/{n} positions")
PY
done
