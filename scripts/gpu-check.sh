#!/usr/bin/env bash
# The CUDA backend's one prepared device check (issue 23), in two halves:
#
#   scripts/gpu-check.sh bundle   here: any x86-64 machine with the CUDA
#                                 toolkit and met's build dependencies
#   scripts/gpu-check.sh run      on the GPU machine, from the repository
#                                 root, with gpu-bundle/ carried there
#
# bundle builds met with MET_CUDA=ON for sm_90a (build-gpu/) and copies met,
# the gpu-labelled test binaries and the shared libraries they load, but the
# C library's own, into gpu-bundle/ (ignored by git). A bare CUDA image has
# CMake and nvcc but none of met's libraries (fmt, spdlog, Boost, ZeroMQ,
# gtest) and no way to fetch them, so the build happens here.
#
# run, on one GPU: on the host's CPU, where it has AMX, the AMX tier's
# tests and prefill rate (issue 21); every gpu-labelled test (the Device conformance suite on
# CudaDevice beside the CPU and the host grid; the reference forward per
# weight type; the kernels against the CPU references); then 8B-shaped
# slices (Llama-3-8B's widths and vocabulary, 2 layers) made by `met
# make-model` in BF16, Q8_0 and Q4_K, each measured by `met bench --device
# cuda`: prefill of 512 tokens and decode at batch 1, 8 and 64 (BF16 also at
# batch 1 after 4,096 tokens of context, with an F16 and a Q8_0 cache), each
# decode figure as GB/s moved against the measured device-to-device copy
# bandwidth, and the decode graphs' capture time; an ncu per-kernel summary
# of short BF16 and Q8_0 runs. The table goes to $OUT/gpu-check.md (or
# gpu-check-out/), the raw JSON beside it (bench.jsonl), the profiles to
# profile-*.csv: 7 files at most, within what the device tool brings back.
# Budget: under 8 minutes on one H200; each step is bounded by `timeout`.
# To try the run half's plumbing without a GPU (the tests then skip):
#   MET_GPU_CHECK_DEVICE=grid-host MET_GPU_CHECK_SHAPE="--layers 1 --embd 512 --heads 4 --kv-heads 2
#   --ff 1024 --vocab 1000 --ctx 8192" scripts/gpu-check.sh run
set -euo pipefail
device=${MET_GPU_CHECK_DEVICE:-cuda}
shape=${MET_GPU_CHECK_SHAPE:-"--layers 2 --embd 4096 --heads 32 --kv-heads 8 --ff 14336 --vocab 128256 --ctx 8192"}
cd "$(dirname "$0")/.."

# The bundle's binaries run with its libraries; nothing else (python3 below)
# sees them.
bundled=(env "LD_LIBRARY_PATH=$PWD/gpu-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")

bundle() {
  export CCACHE_BASEDIR="$PWD"
  cmake -S . -B build-gpu -G Ninja -DMET_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a >/dev/null
  cmake --build build-gpu --target met met_backend_cuda_gpu_test met_model_cuda_gpu_test met_backend_test \
    met_matmul_bench
  rm -rf gpu-bundle && mkdir -p gpu-bundle/bin gpu-bundle/lib
  cp build-gpu/apps/met build-gpu/tests/backend/met_backend_cuda_gpu_test \
     build-gpu/tests/model/met_model_cuda_gpu_test build-gpu/tests/backend/met_backend_test \
     build-gpu/bench/backend/met_matmul_bench gpu-bundle/bin/
  strip gpu-bundle/bin/*
  # Every shared library they load but glibc's own (libc, libm, the loader,
  # libpthread, libdl, librt), whose newer versions there run these.
  for b in gpu-bundle/bin/*; do
    ldd "$b" | awk '/=> \//{print $3}'
  done | sort -u | grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64)\.so' |
    while read -r lib; do cp -L "$lib" gpu-bundle/lib/; done
  du -sh gpu-bundle
}

# The slice in `dtype`, made on the host's cores while the GPU runs the tests.
make_slice() {
  local dtype=$1
  # shellcheck disable=SC2086 # $shape is a list of flags
  timeout 240 "${bundled[@]}" gpu-bundle/bin/met make-model -o "/tmp/met-slice-$dtype.gguf" $shape --dtype "$dtype" >/dev/null
}

# One `met bench --json` of the slice `model` as a line of $out/bench.jsonl,
# {"name": NAME, "bench": {...}} (one file for every bench: the device
# tool brings back at most 8 files).
bench_line() {
  local name=$1 model=$2 out=$3
  shift 3
  local json
  json=$(timeout 150 "${bundled[@]}" gpu-bundle/bin/met bench "$model" --device "$device" --prompt-tokens 512 \
    --gen-tokens 32 --max-batch-tokens 512 --json "$@") || return 1
  printf '{"name": "%s", "bench": %s}\n' "$name" "$json" >>"$out/bench.jsonl"
}

# `met bench` on one slice: prefill 512, decode at batch 1, 8, 64 (BF16
# also at batch 1 after 4,096 tokens with an F16 and a Q8_0 cache); BF16
# and Q8_0 also profiled.
bench_slice() {
  local dtype=$1 out=$2
  local model=/tmp/met-slice-$dtype.gguf
  bench_line "$dtype" "$model" "$out" --batch 1,8,64 --context 0 --kv-dtype f16 || return 1
  if [ "$dtype" = bf16 ]; then  # attention at depth
    bench_line "$dtype-at-4096" "$model" "$out" --batch 1 --context 4096 --cached-prompt-tokens 0 --kv-dtype f16
    bench_line "$dtype-at-4096-kv-q8_0" "$model" "$out" --batch 1 --context 4096 --cached-prompt-tokens 0 \
      --kv-dtype q8_0
  fi
  if [ "$dtype" != q4_k ]; then profile "$dtype" "$model" "$out"; fi
  rm -f "$model"
}

# Where a short run's GPU time goes, kernel by kernel (Nsight Compute's
# per-kernel summary of their durations), where ncu is installed.
profile() {
  local dtype=$1 model=$2 out=$3
  command -v ncu >/dev/null || return 0
  timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --csv \
    --launch-count 800 "${bundled[@]}" gpu-bundle/bin/met bench "$model" --device "$device" --prompt-tokens 64 \
    --gen-tokens 8 --batch 1,8 --context 0,1024 --cached-prompt-tokens 0 --kv-dtype f16 \
    >"$out/profile-$dtype.csv" 2>&1 || echo "profile failed (see profile-$dtype.csv)"
}

# The host's AMX tier (issue 21), where its CPU has tiles (these machines'
# CPUs are not AMX ones): the tile kernels against the AVX-512 ones and the
# reference, then their prefill rate beside the AVX-512 kernel's, appended
# to tests.log.
amx_check() {
  local out=$1
  if ! grep -qw amx_tile /proc/cpuinfo; then
    echo "host CPU: no AMX tiles" | tee -a "$out/tests.log"
    return 0
  fi
  local rc=0
  timeout 120 "${bundled[@]}" gpu-bundle/bin/met_backend_test --gtest_brief=1 \
    --gtest_filter='AmxMatmul.*:EmulatedTiles*:*PackedKernels*amx' 2>&1 | tail -n 40 | tee -a "$out/tests.log" || rc=1
  timeout 120 "${bundled[@]}" gpu-bundle/bin/met_matmul_bench --benchmark_min_time=0.2 \
    --benchmark_filter='prefill/(q8_0x16|q4_0x16|mxfp4x16)/(avx512|amx)/m:(64|512)/threads:(1|2)' 2>&1 |
    grep -E '^prefill' | tee -a "$out/tests.log" || true
  return $rc
}

table() {
  local out=$1
  python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
rows = ["| slice | prefill 512 tok/s | context | batch | decode tok/s | MB/step | GB/s moved | copy GB/s | share | graphs (ms) |",
        "|---|---|---|---|---|---|---|---|---|---|"]
path = os.path.join(out, "bench.jsonl")
for line in (open(path) if os.path.exists(path) else []):
    entry = json.loads(line)
    name, j = entry["name"], entry["bench"]
    for d in j["decode"]:
        moved = d["tok_s"] / d["batch"] * d["step_bytes"]
        rows.append("| {} | {:.0f} | {} | {} | {:.1f} | {:.1f} | {:.0f} | {:.0f} | {:.0f}% | {} ({:.1f}) |".format(
            name, j["prefill_tok_s"], d["context"], d["batch"], d["tok_s"], d["step_bytes"] / 1e6, moved / 1e9,
            d["read_bytes_s"] / 1e9, 100 * moved / d["read_bytes_s"], j["graph_captures"], j["graph_capture_ms"]))
open(os.path.join(out, "gpu-check.md"), "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
PY
}

run() {
  local out=${OUT:-gpu-check-out}
  mkdir -p "$out"
  rm -f "$out/bench.jsonl" "$out/tests.log" "$out/sanitizer.log"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv,noheader |
    tee "$out/gpu.txt" || echo "no nvidia-smi: no GPU here"
  local dtypes=(bf16 q8_0 q4_k) pids=() status=0
  for dtype in "${dtypes[@]}"; do make_slice "$dtype" & pids+=($!); done
  for t in gpu-bundle/bin/met_backend_cuda_gpu_test gpu-bundle/bin/met_model_cuda_gpu_test; do
    if ! timeout 180 "${bundled[@]}" "$t" --gtest_brief=1 2>&1 | tee -a "$out/tests.log"; then
      status=1
      # A failure that may be a bad access: the failing tests again under compute-sanitizer.
      local failed
      failed=$(sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_/.]*\).*/\1/p' "$out/tests.log" | sort -u | paste -sd: -)
      if [ -n "$failed" ] && command -v compute-sanitizer >/dev/null; then
        timeout 90 "${bundled[@]}" compute-sanitizer --print-limit 20 "$t" --gtest_filter="$failed" 2>&1 |
          tail -n 60 | tee -a "$out/sanitizer.log" || true
      fi
    fi
  done
  amx_check "$out" || status=1
  for i in "${!dtypes[@]}"; do
    wait "${pids[$i]}" || { echo "make-model ${dtypes[$i]} failed"; status=1; continue; }
    bench_slice "${dtypes[$i]}" "$out" || { echo "bench ${dtypes[$i]} failed"; status=1; }
  done
  table "$out"
  return $status
}

case "${1:-}" in
  bundle) bundle ;;
  run) run ;;
  *) echo "usage: scripts/gpu-check.sh bundle|run" >&2; exit 2 ;;
esac
