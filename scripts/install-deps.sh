#!/usr/bin/env bash
# Installs everything met needs to build and test on Debian 12, from Debian's
# packages only. Safe to run again. Needs root (or sudo).
#   --tests  also what only the test suite uses: Chromium, for the chat page's
#            browser test (a large download that serving does not need).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git python3 python3-jsonschema
  clang libclang-rt-14-dev
  libboost1.81-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpcre2-dev libutf8proc-dev libxxhash-dev prometheus-cpp-dev
  libcurl4-openssl-dev libssl-dev libncurses-dev
  libzmq3-dev cppzmq-dev
)
if [ "${1:-}" = "--tests" ]; then packages+=(chromium); fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: all ${#packages[@]} packages present"
