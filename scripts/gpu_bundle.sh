#!/usr/bin/env bash
# Builds here (no GPU needed) what scripts/gpu_check.sh runs on a GPU machine, and packs it with its
# non-CUDA shared libraries (OpenBLAS, LAPACKE, gfortran, Google Benchmark) into one compressed file.
# The GPU machines' image has CUDA, CMake and PyTorch/JAX but not tenax's CPU dependencies, and
# nothing can be installed there, so the check runs from this bundle:
#
#   scripts/gpu_bundle.sh          -> build-gpu-bundle/bundle.tar.xz (git-ignored)
#   then, with the device tool:    run(command="scripts/gpu_check.sh --bundle build-gpu-bundle/bundle.tar.xz",
#                                      carry=["build-gpu-bundle/bundle.tar.xz"], timeout_s=540)
#
# Built for sm_90 (H100/H200; TENAX_GPU_ARCH overrides), Release. The CUDA libraries, libstdc++
# and the C library are the GPU machine's own: its image (Python 3.12, so Ubuntu 24.04: glibc 2.39,
# a newer libstdc++) runs what this machine (glibc 2.36, GCC 12) builds. Environment:
# TENAX_BUILD_DIR (default <repo>/build-gpu), TENAX_JOBS.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TENAX_BUILD_DIR:-$root/build-gpu}
out=$root/build-gpu-bundle
jobs=${TENAX_JOBS:-$(nproc 2>/dev/null || echo 2)}
arch=${TENAX_GPU_ARCH:-90}
say() { printf '== %s\n' "$*"; }

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[[ -x $nvcc ]] || { say "no nvcc: the CUDA backend cannot be built"; exit 1; }
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
say "configure ($build, sm_$arch)"
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DTENAX_WITH_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DTENAX_BUILD_TESTS=ON -DTENAX_BUILD_BENCH=ON \
  -DTENAX_BENCH_LIBTORCH=OFF -DTENAX_BUILD_EXAMPLES=OFF -DTENAX_CHECK_HEADERS=OFF -DTENAX_TEST_CONSUMER=OFF \
  -DCMAKE_EXE_LINKER_FLAGS="" >/dev/null
say "build (test_cuda, test_cuda_absent, bench_gpu_linalg_ad)"
cmake --build "$build" --parallel "$jobs" --target test_cuda test_cuda_absent bench_gpu_linalg_ad >/dev/null

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$out"
bins=("$build/tests/test_cuda" "$build/tests/test_cuda_absent" "$build/bench/bench_gpu_linalg_ad")
for b in "${bins[@]}"; do
  cp "$b" "$stage/bin/"
  strip "$stage/bin/$(basename "$b")"
done
# Every shared library the binaries load except the CUDA ones, the C library's and libstdc++.
ldd "${bins[@]}" | awk '/=> \// { print $1, $3 }' | sort -u | while read -r name path; do
  case "$name" in
    libcuda* | libcublas* | libcusolver* | libcusparse* | libnvJitLink* | libc.so* | libm.so* | libdl.so* | \
      libpthread.so* | librt.so* | ld-linux* | libgcc_s.so* | libstdc++.so*) ;;
    *) cp -L "$path" "$stage/lib/$name" ;;
  esac
done
tar -C "$stage" -cJf "$out/bundle.tar.xz" bin lib
glibc=$(objdump -T "$stage"/bin/* "$stage"/lib/* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -V -u | tail -1)
say "needs $glibc or newer on the GPU machine"
say "bundle: $out/bundle.tar.xz ($(du -h "$out/bundle.tar.xz" | cut -f1)); libraries: $(ls "$stage/lib" | tr '\n' ' ')"
