#!/usr/bin/env bash
# Runs met's libFuzzer targets (fuzz/), each on a corpus seeded from
# fuzz/seeds/<target>/, plus ../shared/models/stories260K.gguf for
# gguf_reader_fuzz and two requests written here for openai_request_fuzz
# (a first byte choosing the API, then the body). .ci/run's 20-second smoke
# run and a developer's longer campaign are the same command:
#
#   scripts/fuzz.sh BUILD_DIR SECONDS [CORPUS_ROOT [TARGET...]]
#
#   BUILD_DIR    a clang build configured with -DMET_FUZZ=ON (build-check)
#   SECONDS      each target's -max_total_time
#   CORPUS_ROOT  keeps CORPUS_ROOT/<target>/corpus (grown run after run) and
#                CORPUS_ROOT/<target>/artifacts (an input that crashed or ran
#                too long); empty or absent: a temporary folder, removed after
#   TARGET       default: every met_fuzz_target in fuzz/CMakeLists.txt
#
# FUZZ_JOBS targets run at once (default 1). Each prints its name and last
# line, or its last 40 and its artifacts when it fails; the exit status is 1
# if any failed. -timeout is 10 s of wall time: a run paused (SIGSTOP) or
# starved of CPU reports timeouts its inputs do not cause, so replay an
# artifact alone (BUILD_DIR/fuzz/<target> ARTIFACT) before taking one as a bug.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

if [ $# -lt 2 ]; then
  sed -n '2,/^set /p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
build=$1 seconds=$2 root=${3:-}
shift $(($# < 3 ? $# : 3))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's/^met_fuzz_target(\([a-z_]*\) .*/\1/p' fuzz/CMakeLists.txt)
fi
temp=""
if [ -z "$root" ]; then
  temp=$(mktemp -d)
  root=$temp
fi

# One target: seed its corpus (existing inputs kept), run, report.
fuzz_one() {
  local t=$1 dir=$root/$1 rc=0
  mkdir -p "$dir/corpus" "$dir/artifacts"
  if [ -d "fuzz/seeds/$t" ]; then cp -n "fuzz/seeds/$t"/* "$dir/corpus/"; fi
  if [ "$t" = gguf_reader_fuzz ] && [ -f ../shared/models/stories260K.gguf ]; then
    cp -n ../shared/models/stories260K.gguf "$dir/corpus/"
  fi
  if [ "$t" = openai_request_fuzz ]; then  # first byte: 0 completions, 1 chat; then the body
    printf '\000{"prompt":"hi","max_tokens":5,"stop":["a"],"temperature":0.5,"logit_bias":{"3":-100}}' \
      > "$dir/corpus/completion"
    printf '\001{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":true,%s}' \
      '"stream_options":{"include_usage":true}' > "$dir/corpus/chat"
  fi
  "$build/fuzz/$t" -max_total_time="$seconds" -timeout=10 -print_final_stats=0 \
    -artifact_prefix="$dir/artifacts/" "$dir/corpus" > "$dir/log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "$t: $(tail -n 1 "$dir/log")"
  else
    echo "$t failed ($rc):"
    tail -n 40 "$dir/log"
    echo "$t artifacts in $dir/artifacts: $(ls "$dir/artifacts")"
  fi
  return "$rc"
}
export -f fuzz_one
export build seconds root

rc=0
printf '%s\n' "${targets[@]}" | xargs -P "${FUZZ_JOBS:-1}" -I{} bash -c 'fuzz_one {}' || rc=1
if [ -n "$temp" ]; then rm -rf "$temp"; fi
exit "$rc"
