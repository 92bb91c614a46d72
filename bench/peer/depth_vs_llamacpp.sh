#!/usr/bin/env bash
# met against llama.cpp on the same GGUF files at several context depths, in
# one session, one table (issue 21's table): per file, met bench's prefill of
# 512 tokens and its decode at batch 1 and 16 at each depth with the share of
# its own ceiling (the bytes a step reads / the read rate probed beside the
# figure); llama-bench's pp512 and tg at each depth; llama-batched-bench's
# decode of 16 sequences at each depth (S_TG). Every tool runs with the same
# --threads. A manual tool (needs a llama.cpp build); CI never runs it.
#   bench/peer/depth_vs_llamacpp.sh --met build/apps/met --llama-build ../llama.cpp-build \
#     [--threads 2] [--depths 0,1024,4032] [--gen 64] [--kv-dtype f16] [--llama-omp-passive] [--log-dir DIR] \
#     MODEL.gguf...
# Methods (what each figure is):
#   met     `met bench FILE --threads T --batch 1,16 --context DEPTHS --prompt-tokens 512 --gen-tokens G
#           --kv-mem 4GiB --json`: the decode steps start from DEPTH cached positions (KV of zeros: the
#           same bytes and arithmetic as real ones), each of 16 sequences its own.
#   llama   `llama-bench -m FILE -t T -p 512 -n G -d DEPTHS -r 1 -o json`: each test after its own
#           prefill of DEPTH tokens; pp512 is taken at depth 0.
#   llama16 `llama-batched-bench -m FILE -t T -c C -npp 1 -ntg G -npl 16` for depth 0 and, for each
#           other depth, `-npp DEPTH -ntg G -npl 16 -pps`: the prompt is prefilled once (-pps; 16
#           prefills of 4,032 would take minutes per file) and its KV copied to each sequence (its
#           n_kv is 16 x (DEPTH + G): 65,536 at 4,032), so each of the 16 reads a context of its own,
#           as met's do.
# --llama-omp-passive runs the llama.cpp tools with OMP_WAIT_POLICY=passive (see moe_vs_llamacpp.sh).
# --kv-dtype D (f16, the default, or q8_0): met's --kv-dtype D; llama.cpp's -ctk D -ctv D with flash
# attention on (-fa on, which its quantized V cache needs), for every depth of both tools.
# The depth must leave room for G decode steps in the model's context (4,032 + 64 = 4,096 for the
# medium presets). The raw outputs are kept in --log-dir (default: a new temporary folder); the host
# is shared, so read the figures as ratios measured minutes apart, not as absolutes.
set -euo pipefail
met=""
llama_build=""
threads=2
depths=0,1024,4032
gen=64
log_dir=""
kv_dtype=f16
llama_env=()
usage() { sed -n '2,28p' "$0" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --met) met=$2; shift 2 ;;
    --llama-build) llama_build=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --depths) depths=$2; shift 2 ;;
    --gen) gen=$2; shift 2 ;;
    --log-dir) log_dir=$2; shift 2 ;;
    --kv-dtype) kv_dtype=$2; shift 2 ;;
    --llama-omp-passive) llama_env=(OMP_WAIT_POLICY=passive); shift ;;
    -h|--help) usage ;;
    -*) echo "$0: unknown flag $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ -n "$met" && -n "$llama_build" && $# -gt 0 ]] || usage
[[ -x "$met" ]] || { echo "$0: $met is not an executable" >&2; exit 1; }
for tool in llama-bench llama-batched-bench; do
  [[ -x "$llama_build/bin/$tool" ]] || { echo "$0: $llama_build/bin/$tool missing" >&2; exit 1; }
done
[[ -n "$log_dir" ]] || log_dir=$(mktemp -d /tmp/depth_vs_llamacpp.XXXXXX)
mkdir -p "$log_dir"
IFS=, read -r -a depth_list <<<"$depths"
max_depth=0
for d in "${depth_list[@]}"; do (( d > max_depth )) && max_depth=$d; done
cells=$(( 16 * (max_depth + gen) + 256 ))
llama_kv=()
[[ "$kv_dtype" == f16 ]] || llama_kv=(-ctk "$kv_dtype" -ctv "$kv_dtype" -fa on)

rows=()
for file in "$@"; do
  name=$(basename "$file" .gguf)
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  echo "measuring $name (load average $load_before)" >&2
  "$met" bench "$file" --threads "$threads" --batch 1,16 --context "$depths" --prompt-tokens 512 \
    --gen-tokens "$gen" --cached-prompt-tokens 0 --kv-mem 4GiB --kv-dtype "$kv_dtype" --json \
    >"$log_dir/$name.met.json" 2>"$log_dir/$name.met.err"
  env "${llama_env[@]}" "$llama_build/bin/llama-bench" -m "$file" -t "$threads" -p 512 -n "$gen" -d "$depths" \
    "${llama_kv[@]}" -r 1 -o json >"$log_dir/$name.llama-bench.json" 2>"$log_dir/$name.llama-bench.err"
  : >"$log_dir/$name.llama-batched.jsonl"
  for d in "${depth_list[@]}"; do
    if (( d == 0 )); then shared=(-npp 1); else shared=(-npp "$d" -pps); fi
    env "${llama_env[@]}" "$llama_build/bin/llama-batched-bench" -m "$file" -t "$threads" -c "$cells" \
      "${shared[@]}" "${llama_kv[@]}" -ntg "$gen" -npl 16 --output-format jsonl \
      >>"$log_dir/$name.llama-batched.jsonl" 2>>"$log_dir/$name.llama-batched.err"
  done
  load_after=$(cut -d' ' -f1 /proc/loadavg)
  rows+=("$name|$log_dir/$name|$load_before|$load_after")
done

python3 - "$threads" "$gen" "$depths" "${llama_env[*]:-}" "${rows[@]}" <<'PY'
import json, sys
threads, gen, depths, llama_env, rows = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
depths = [int(d) for d in depths.split(",")]
print(f"threads {threads}; llama.cpp environment: {llama_env or 'as inherited'}; tok/s; share = of met's "
      "ceiling (probe beside the figure); x = met / llama.cpp")
head = "| file | pp512 met / llama (x) | depth | b1 met (share) / llama (x) | b16 met (share) / llama (x) |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
for row in rows:
    name, base, load_before, load_after = row.split("|")
    met = json.load(open(base + ".met.json"))
    fig = {(d["batch"], d["context"]): d for d in met["decode"]}
    bench = json.load(open(base + ".llama-bench.json"))
    pp = next(t["avg_ts"] for t in bench if t["n_prompt"] == 512 and t["n_gen"] == 0 and t.get("n_depth", 0) == 0)
    tg = {t.get("n_depth", 0): t["avg_ts"] for t in bench if t["n_prompt"] == 0 and t["n_gen"] == gen}
    batched = [json.loads(l) for l in open(base + ".llama-batched.jsonl") if l.startswith("{")]
    b16 = {(0 if b["pp"] == 1 else b["pp"]): b["speed_tg"] for b in batched if b["pl"] == 16}
    for i, d in enumerate(depths):
        one, many = fig[(1, d)], fig[(16, d)]
        pp_cell = f"{met['prefill_tok_s']:.1f} / {pp:.1f} ({met['prefill_tok_s'] / pp:.2f})" if i == 0 else ""
        label = name if i == 0 else ""
        print(f"| {label} | {pp_cell} | {d} | {one['tok_s']:.1f} ({one['ceiling_share']:.0%}) / {tg[d]:.1f} "
              f"({one['tok_s'] / tg[d]:.2f}) | {many['tok_s']:.1f} ({many['ceiling_share']:.0%}) / "
              f"{b16[d]:.1f} ({many['tok_s'] / b16[d]:.2f}) |")
    print(f"| | load {load_before}/{load_after} | | | |")
PY
echo "raw outputs: $log_dir" >&2
