#!/usr/bin/env bash
# Installs what gdrcoll needs on Debian 12 / Ubuntu, skipping what is there.
set -euo pipefail
pkgs=(cmake ninja-build g++ pkg-config ccache libopenmpi-dev openmpi-bin libhwloc-dev hwloc libssl-dev
      libibverbs-dev rdma-core libgtest-dev libgmock-dev clang libpmix-dev
      slurm-wlm slurm-wlm-basic-plugins munge iproute2 python3)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# libFuzzer's runtime (scripts/fuzz.sh): only recommended by clang, which the line above skips.
if ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  v="$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n1)"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "libclang-rt-$v-dev" >/dev/null
fi
