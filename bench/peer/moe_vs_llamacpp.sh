#!/usr/bin/env bash
# met against llama.cpp on the same GGUF files, in one session, one table:
# per file, met bench's prefill of 512 tokens, batch-1 decode and its batch-1
# ceiling (memory read rate / bytes one token reads: the active experts only),
# batch-16 decode; llama-bench's pp512 and tg128, and llama-batched-bench's
# decode of 16 parallel sequences (S_TG). Every tool runs with the same
# --threads. A manual tool (needs a llama.cpp build); CI never runs it.
#   bench/peer/moe_vs_llamacpp.sh --met build/apps/met --llama-build ../llama.cpp-build \
#     [--threads 2] [--reps 3] [--llama-omp-passive] [--models-dir DIR] [--log-dir DIR]
#     [MODEL.gguf | ARCH:PRESET:DTYPE]...
# ARCH:PRESET:DTYPE (e.g. qwen3moe:medium:q8_0) is made with `met make-model`
# into --models-dir (default /tmp/met-peer-models) unless the file is there.
# Default models: qwen3moe:medium:q8_0 qwen3moe:medium:mxfp4 mixtral:medium:q8_0.
# Methods (what each figure is):
#   met     `met bench FILE --threads T --batch 1,16 --prompt-tokens 512 --gen-tokens 128 --json`:
#           one prefill of 512 random tokens, then 128 decode steps per batch size at context 0.
#   llama   `llama-bench -m FILE -t T -p 512 -n 128 -r REPS -o json`: mean of REPS runs after a
#           warm-up; F16 KV cache, flash attention as llama.cpp picks it (both tools' defaults).
#   llama16 `llama-batched-bench -m FILE -t T -c 4096 -npp 1 -ntg 128 -npl 16 --output-format jsonl`:
#           16 sequences of one prompt token, then 128 steps of 16 rows (its S_TG), contexts 1-129.
# --llama-omp-passive runs the llama.cpp tools with OMP_WAIT_POLICY=passive: on a busy host their
# OpenMP threads otherwise spin at every barrier while the other is preempted (here llama-bench tg
# fell from 25 tok/s at -t 1 to 6.5 at -t 2 with the load average at 10; passive gave 25 at -t 2).
# The raw outputs of every run are kept in --log-dir (default: a new temporary folder) and the
# load average before and after each file is printed: the host is shared, so read the figures
# as ratios measured minutes apart, not as absolutes.
set -euo pipefail
met=""
llama_build=""
threads=2
reps=3
models_dir=/tmp/met-peer-models
log_dir=""
llama_env=()
usage() { sed -n '2,28p' "$0" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --met) met=$2; shift 2 ;;
    --llama-build) llama_build=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --models-dir) models_dir=$2; shift 2 ;;
    --log-dir) log_dir=$2; shift 2 ;;
    --llama-omp-passive) llama_env=(OMP_WAIT_POLICY=passive); shift ;;
    -h|--help) usage ;;
    -*) echo "$0: unknown flag $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ -n "$met" && -n "$llama_build" ]] || usage
[[ -x "$met" ]] || { echo "$0: $met is not an executable" >&2; exit 1; }
for tool in llama-bench llama-batched-bench; do
  [[ -x "$llama_build/bin/$tool" ]] || { echo "$0: $llama_build/bin/$tool missing" >&2; exit 1; }
done
[[ $# -gt 0 ]] || set -- qwen3moe:medium:q8_0 qwen3moe:medium:mxfp4 mixtral:medium:q8_0
[[ -n "$log_dir" ]] || log_dir=$(mktemp -d /tmp/moe_vs_llamacpp.XXXXXX)
mkdir -p "$log_dir" "$models_dir"

# A file path for each argument, making ARCH:PRESET:DTYPE files first.
files=()
for arg in "$@"; do
  if [[ "$arg" == *.gguf ]]; then
    files+=("$arg")
    continue
  fi
  IFS=: read -r arch preset dtype <<<"$arg"
  file="$models_dir/$arch-$preset-$dtype.gguf"
  if [[ ! -f "$file" ]]; then
    echo "making $file" >&2
    nice "$met" make-model --arch "$arch" --preset "$preset" --dtype "$dtype" --threads "$threads" -o "$file" \
      >"$log_dir/make-$arch-$preset-$dtype.log" 2>&1
  fi
  files+=("$file")
done

rows=()
for file in "${files[@]}"; do
  name=$(basename "$file" .gguf)
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  echo "measuring $name (load average $load_before)" >&2
  "$met" bench "$file" --threads "$threads" --batch 1,16 --prompt-tokens 512 --gen-tokens 128 --json \
    >"$log_dir/$name.met.json" 2>"$log_dir/$name.met.err"
  env "${llama_env[@]}" "$llama_build/bin/llama-bench" -m "$file" -t "$threads" -p 512 -n 128 -r "$reps" -o json \
    >"$log_dir/$name.llama-bench.json" 2>"$log_dir/$name.llama-bench.err"
  env "${llama_env[@]}" "$llama_build/bin/llama-batched-bench" -m "$file" -t "$threads" -c 4096 \
    -npp 1 -ntg 128 -npl 16 --output-format jsonl \
    >"$log_dir/$name.llama-batched.jsonl" 2>"$log_dir/$name.llama-batched.err"
  load_after=$(cut -d' ' -f1 /proc/loadavg)
  rows+=("$name|$log_dir/$name|$load_before|$load_after")
done

python3 - "$threads" "$reps" "${llama_env[*]:-}" "${rows[@]}" <<'PY'
import json, sys
threads, reps, llama_env, rows = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
print(f"threads {threads}; llama-bench mean of {reps} runs; llama.cpp environment: {llama_env or 'as inherited'}; "
      "tok/s; 'x' = met / llama.cpp")
head = ("| file | met pp512 | llama pp512 | x | met b1 | llama tg128 | x | met b1 ceiling | met b16 | "
        "llama b16 | x | load before/after |")
print(head)
print("|" + "---|" * (head.count("|") - 1))
for row in rows:
    name, base, load_before, load_after = row.split("|")
    met = json.load(open(base + ".met.json"))
    decode = {d["batch"]: d["tok_s"] for d in met["decode"] if d["context"] == 0}
    bench = json.load(open(base + ".llama-bench.json"))
    pp = next(t["avg_ts"] for t in bench if t["n_prompt"] == 512 and t["n_gen"] == 0)
    tg = next(t["avg_ts"] for t in bench if t["n_prompt"] == 0 and t["n_gen"] == 128)
    batched = [json.loads(l) for l in open(base + ".llama-batched.jsonl") if l.startswith("{")]
    b16 = next(b["speed_tg"] for b in batched if b["pl"] == 16)
    ratio = lambda a, b: f"{a / b:.2f}"
    print(f"| {name} | {met['prefill_tok_s']:.1f} | {pp:.1f} | {ratio(met['prefill_tok_s'], pp)} "
          f"| {decode[1]:.1f} | {tg:.1f} | {ratio(decode[1], tg)} | {met['decode_ceiling_tok_s']:.1f} "
          f"| {decode[16]:.1f} | {b16:.1f} | {ratio(decode[16], b16)} | {load_before}/{load_after} |")
PY
echo "raw outputs: $log_dir" >&2
