#!/usr/bin/env bash
# Builds bench/peer/llama_logits.cc against a llama.cpp build (shared libllama,
# as bench/peer/README.md configures it) into LLAMA_BUILD/bin/llama_logits.
# A manual tool: met's CMake and CI never build it.
#   bench/peer/build_llama_logits.sh /work/llama.cpp-build
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 LLAMA_CPP_BUILD_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [[ -z "$src" || ! -f "$src/include/llama.h" ]]; then
  echo "$0: no llama.cpp source named in $build/CMakeCache.txt" >&2
  exit 1
fi
if [[ ! -e "$build/bin/libllama.so" ]]; then
  echo "$0: $build/bin/libllama.so is missing (build the llama target with BUILD_SHARED_LIBS=ON)" >&2
  exit 1
fi
here=$(cd "$(dirname "$0")" && pwd)
${CXX:-g++} -std=c++17 -O2 -Wall -Wextra "$here/llama_logits.cc" -I"$src/include" -I"$src/ggml/include" \
  -L"$build/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$build/bin" -o "$build/bin/llama_logits"
echo "$build/bin/llama_logits"
