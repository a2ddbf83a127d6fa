#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (the `device` tool): builds tenax with the CUDA
# backend for the GPU's architecture only, runs the tests labelled cuda against the CPU results,
# (every public op's agreement with the CPU in agreement.txt), then the gpu_linalg_ad benchmark with
# PyTorch's and JAX's latency and deferred rows, then the CUDA tests again under compute-sanitizer
# memcheck (bounded by TENAX_MEMCHECK_TIMEOUT; a run stopped by it leaves the check INCOMPLETE, exit
# 3, unless something failed: exit 1). Prints a summary
# line per step and leaves logs (and the benchmark's JSON) in $OUT (or build-gpu/logs).
#
#   scripts/gpu_check.sh                   build here, then the tests, the benchmark and memcheck
#   scripts/gpu_check.sh --bundle FILE     no build: the binaries and their CPU libraries from
#                                          scripts/gpu_bundle.sh (for GPU machines without OpenBLAS,
#                                          LAPACKE, GoogleTest or Google Benchmark installed)
#   TENAX_GPU_ARCH=90 scripts/gpu_check.sh
#
# Environment: TENAX_BUILD_DIR (default <repo>/build-gpu), TENAX_JOBS (default nproc),
# TENAX_SKIP_SETUP=1 (do not install packages), TENAX_SKIP_MEMCHECK=1, TENAX_SKIP_BENCH=1,
# TENAX_SKIP_REFS=1 (no PyTorch/JAX rows), TENAX_MEMCHECK_TIMEOUT (seconds, default 240).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${TENAX_BUILD_DIR:-$root/build-gpu}
# Logs go to a folder of their own; with $OUT set (the device tool), they come back as four files
# (at most 8 may): summary.md, test_cuda.log, agreement.txt and gpu_check_logs.tar.gz with everything.
logs=$dir/logs
jobs=${TENAX_JOBS:-$(nproc 2>/dev/null || echo 4)}
mkdir -p "$dir" "$logs"
say() { printf '== %s\n' "$*"; }

bundle=""
if [[ ${1:-} == --bundle ]]; then
  bundle=$(cd "$(dirname "${2:?--bundle needs a file}")" && pwd)/$(basename "$2")
fi

nvidia-smi -L || { say "no GPU visible (nvidia-smi -L failed)"; exit 2; }
arch=${TENAX_GPU_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')}
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[[ -x $nvcc ]] || { say "no nvcc"; exit 2; }

start=$SECONDS
if [[ -n $bundle ]]; then
  unpacked=$(mktemp -d)
  tar -C "$unpacked" -xJf "$bundle" || { say "cannot unpack $bundle"; exit 1; }
  export LD_LIBRARY_PATH="$unpacked/lib:$(dirname "$nvcc")/../lib64:$(dirname "$nvcc")/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  test_bin=$unpacked/bin/test_cuda absent_bin=$unpacked/bin/test_cuda_absent bench_bin=$unpacked/bin/bench_gpu_linalg_ad
  say "bundle $bundle unpacked; the GPU is sm_$arch"
  ldd "$test_bin" | grep -E 'not found' && { say "a library of the bundle is missing here"; exit 1; }
else
  [[ ${TENAX_SKIP_SETUP:-0} == 1 ]] || "$root/scripts/setup.sh" >"$logs/setup.log" 2>&1 ||
    { tail -20 "$logs/setup.log"; exit 1; }
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DTENAX_WITH_CUDA=ON \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DTENAX_BUILD_TESTS=ON \
    -DTENAX_BUILD_BENCH=ON -DTENAX_BENCH_LIBTORCH=OFF -DTENAX_BUILD_EXAMPLES=OFF >"$logs/configure.log" 2>&1 ||
    { tail -30 "$logs/configure.log"; exit 1; }
  targets=(test_cuda test_cuda_absent)
  [[ ${TENAX_SKIP_BENCH:-0} == 1 ]] || targets+=(bench_gpu_linalg_ad)
  cmake --build "$dir" --parallel "$jobs" --target "${targets[@]}" >"$logs/build.log" 2>&1 ||
    { grep -E 'error|FAILED' "$logs/build.log" | head -40; exit 1; }
  test_bin=$dir/tests/test_cuda absent_bin=$dir/tests/test_cuda_absent bench_bin=$dir/bench/bench_gpu_linalg_ad
  say "built for sm_$arch in $((SECONDS - start)) s"
fi

status=0
"$test_bin" --gtest_color=no >"$logs/test_cuda.log" 2>&1 || status=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|error' "$logs/test_cuda.log" | head -60
# The agreement of every public op with the CPU (Cuda.EveryOpMatchesTheCpu prints one line per op).
grep -E 'gpu vs cpu \(f64\)' "$logs/test_cuda.log" >"$logs/agreement.txt"
say "every op against the CPU: $(wc -l <"$logs/agreement.txt") ops, largest relative difference $(
  awk '{v = $NF + 0; if (v > m) m = v} END {printf "%.2e", m}' "$logs/agreement.txt")"
# The allocator's fallback for devices without stream-ordered pools (cudaMalloc), forced.
TENAX_CUDA_NO_POOLS=1 "$test_bin" --gtest_color=no \
  --gtest_filter='Cuda.AllocatorPoolsAndReleases:Cuda.CopiesRoundTripEveryDtype:Cuda.LinalgMatchesTheCpu' \
  >"$logs/test_cuda_no_pools.log" 2>&1 || status=1
tail -3 "$logs/test_cuda_no_pools.log"
"$absent_bin" --gtest_color=no >"$logs/test_cuda_absent.log" 2>&1 || status=1
tail -3 "$logs/test_cuda_absent.log"
if [[ ${TENAX_SKIP_BENCH:-0} != 1 ]]; then
  "$bench_bin" --benchmark_min_time=0.05 --benchmark_repetitions=3 \
    --benchmark_out="$logs/gpu_linalg_ad.json" --benchmark_out_format=json >"$logs/bench.log" 2>&1 || status=1
  grep -E '_median|ERROR|error' "$logs/bench.log" | sort -u | head -80
  # Each row's agreement with the CPU float64 result (counter vs_cpu).
  say "benchmark rows against the CPU: $(python3 -c '
import json, sys
rows = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration" and "vs_cpu" in b]
print("%d samples, largest relative difference %.2e" % (len(rows), max([b["vs_cpu"] for b in rows] or [0])))
' "$logs/gpu_linalg_ad.json" 2>&1 | tail -1)"
  # PyTorch and JAX on the same GPU (bench/ref_python/refs.py), where python3 imports them.
  jsons=("$logs/gpu_linalg_ad.json")
  if [[ ${TENAX_SKIP_REFS:-0} != 1 ]] && python3 -c 'import numpy' 2>/dev/null; then
    python3 "$root/bench/ref_python/refs.py" --suite gpu_linalg_ad --repetitions 3 --min-time 0.05 \
      --out "$logs/gpu_linalg_ad.py.json" >"$logs/refs.log" 2>&1 && jsons+=("$logs/gpu_linalg_ad.py.json")
    grep -E 'median|ERROR' "$logs/refs.log" | head -60
  fi
  python3 "$root/bench/report.py" --out "$logs/report" --command "scripts/gpu_check.sh" "${jsons[@]}" \
    >"$logs/report.log" 2>&1 && cat "$logs/report/summary.md" 2>/dev/null | head -120
fi
# memcheck last, bounded (TENAX_MEMCHECK_TIMEOUT seconds, default 240), so that a slow
# instrumented run cannot take the time the tests and the benchmark need.
memcheck="memcheck skipped (TENAX_SKIP_MEMCHECK=1)" incomplete=0
if [[ ${TENAX_SKIP_MEMCHECK:-0} != 1 ]]; then
  sanitizer=$(command -v compute-sanitizer || echo "$(dirname "$nvcc")/compute-sanitizer")
  if [[ -x $sanitizer ]]; then
    rc=0
    timeout -k 30 "${TENAX_MEMCHECK_TIMEOUT:-240}" "$sanitizer" --tool memcheck --error-exitcode 3 "$test_bin" \
      --gtest_color=no >"$logs/memcheck.log" 2>&1 || rc=$?
    checked=$(grep -c '^\[       OK \]' "$logs/memcheck.log")
    if grep -q 'Device not supported' "$logs/memcheck.log"; then
      # compute-sanitizer refuses the device on some runtimes (gVisor; see the device notes).
      say "memcheck unavailable here: compute-sanitizer says 'Device not supported'"
      memcheck="memcheck not run (device not supported)"
    elif ((rc == 124 || rc == 137)); then
      # A timeout is not a pass: the tests after the last one it finished were not checked. The
      # check then ends INCOMPLETE (exit 3) unless something failed.
      say "memcheck INCOMPLETE: stopped after ${TENAX_MEMCHECK_TIMEOUT:-240} s with $checked tests checked" \
        "(partial log kept; raise TENAX_MEMCHECK_TIMEOUT)"
      memcheck="memcheck incomplete ($checked tests checked)"
      incomplete=1
    elif ((rc != 0)); then
      memcheck="memcheck FAILED (exit $rc)"
      status=1
    else
      memcheck="memcheck clean ($checked tests)"
    fi
    grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)|^\[ RUN' "$logs/memcheck.log" | tail -12
  else
    say "compute-sanitizer not found; memcheck skipped"
    memcheck="memcheck not run (no compute-sanitizer)"
  fi
fi
if [[ -n ${OUT:-} ]]; then
  cp "$logs/report/summary.md" "$OUT/" 2>/dev/null
  cp "$logs/test_cuda.log" "$logs/agreement.txt" "$OUT/" 2>/dev/null
  tar -C "$logs" -czf "$OUT/gpu_check_logs.tar.gz" .
fi
if ((status != 0)); then
  result=FAILED
elif ((incomplete)); then
  result=INCOMPLETE status=3
else
  result=passed
fi
say "gpu check: $result in $((SECONDS - start)) s; $memcheck (logs: $logs)"
exit $status
