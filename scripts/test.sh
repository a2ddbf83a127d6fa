#!/usr/bin/env bash
# The test job. Installs the dependencies (scripts/setup.sh), then builds tenax (Release) and runs
# its CTest suite with the default CPU provider (OpenBLAS), then rebuilds with the Eigen provider and
# runs the provider-dependent tests again, each in its own build directory. Tests labelled `cuda`
# are skipped when no GPU is visible.
#
#   scripts/test.sh                     both providers
#   scripts/test.sh openblas            one provider (openblas | lapack | mkl | eigen); several may be
#                                       given, the first gets the full suite
#
# Then a ThreadSanitizer pass over the worker-pool tests, a sanitizer pass (ASan + UBSan) over a
# reduced set of test programs, and a bounded libFuzzer run of the linalg target (see below).
#
# Environment: TENAX_BUILD_DIR (default <repo>/build-ci; one subdirectory per provider),
# TENAX_JOBS (default: nproc), TENAX_SKIP_SETUP=1 (do not check system packages),
# TENAX_SKIP_SANITIZE=1 (no ASan/UBSan pass), TENAX_SKIP_TSAN=1 (no ThreadSanitizer pass),
# TENAX_SKIP_FUZZ=1 (no fuzz run; with both skipped clang is not installed), TENAX_FUZZ_SECONDS
# (default 60).
# Exits non-zero when a configure, build or test step fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_root=${TENAX_BUILD_DIR:-$root/build-ci}
jobs=${TENAX_JOBS:-$(nproc 2>/dev/null || echo 2)}
providers=("$@")
((${#providers[@]})) || providers=(openblas eigen)

say() { printf '== %s\n' "$*"; }

setup_args=()
# clang builds the sanitizer pass and the fuzz target.
[[ ${TENAX_SKIP_FUZZ:-0} == 1 && ${TENAX_SKIP_SANITIZE:-0} == 1 ]] || setup_args+=(--with-clang)
"$root/scripts/setup.sh" "${setup_args[@]}"

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)

ctest_args=(--output-on-failure --no-tests=error -j "$jobs")
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  say "GPU present: running tests labelled cuda"
else
  say "no GPU: skipping tests labelled cuda"
  ctest_args+=(-LE cuda)
fi

# Runs a command with its output in a log; on failure shows the log's tail and exits.
quiet() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    printf '== FAILED: %s (full log: %s)\n' "$*" "$log" >&2
    exit 1
  fi
}

# The CUDA backend is built by the provider stages whenever the toolkit is installed (sm_80 and
# sm_90; its GPU tests then run only where a GPU is visible; the second provider's stage takes the
# objects from ccache); the sanitizer, tsan and fuzz stages build without it.
cuda_args=(-DTENAX_WITH_CUDA=OFF)
nvcc_path=$(command -v nvcc 2>/dev/null || true)
[[ -z $nvcc_path && -x /usr/local/cuda/bin/nvcc ]] && nvcc_path=/usr/local/cuda/bin/nvcc
if [[ -n $nvcc_path ]]; then
  say "CUDA toolkit: $nvcc_path (the provider stages build the CUDA backend)"
  cuda_args=(-DTENAX_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc_path" -DCMAKE_CUDA_ARCHITECTURES="80;90")
else
  say "no CUDA toolkit (nvcc): the CUDA backend is not built"
fi

# ccache (when installed; scripts/setup.sh installs it) with a cache of its own in the build root:
# the provider stages compile the same test programs, examples and CUDA sources with the same flags
# (only the provider's own sources differ, cmake/TenaxProvider.cmake), so the second provider's
# stage takes them from the first's. TENAX_CCACHE=0 turns it off.
# Without it the launchers are set empty, so a build directory configured with ccache before drops it.
launcher_args=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
use_ccache=0
if [[ ${TENAX_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null 2>&1; then
  use_ccache=1
  export CCACHE_DIR=${CCACHE_DIR:-$build_root/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
  launcher_args=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  [[ -n $nvcc_path ]] && launcher_args+=(-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  ccache --zero-stats >/dev/null 2>&1 || true
  say "ccache: $CCACHE_DIR"
fi

# g++ spent about a fifth of the test programs' unoptimised compile time collecting garbage when
# they instantiated every op, and spends more of the Eigen provider's. With 4 GiB or more per
# parallel job, it is told to let its heap grow to 2 GiB before the first collection (the largest
# test file, test_shape.cpp, now peaks at 2.0 GiB with it and 1.2 GiB without, in about the same
# time; the Eigen provider's -O3 sources are where it still pays).
# CMAKE_CXX_FLAGS carries it, so the consumer test's outside builds compile with it too and take
# the library's objects from ccache. (CXXFLAGS from the environment are kept; the flags are
# restated at each configure.)
provider_cxx_flags=${CXXFLAGS:-}
mem_kb=$(awk '/^MemTotal:/{print $2}' /proc/meminfo 2>/dev/null || echo 0)
if [[ $("${CXX:-c++}" -v 2>&1) == *"gcc version"* ]] && ((mem_kb / jobs >= 4 * 1024 * 1024)); then
  provider_cxx_flags+=" --param=ggc-min-expand=400 --param=ggc-min-heapsize=2097152"
fi

status=0
# Runs the CTest suite of build directory $2 (stage name $1, extra ctest arguments after): passing
# tests are not listed; failures come with their output, then CTest's summary. Sets status=1 on
# failure. Reads $start for the stage's duration.
run_ctest() {
  local name=$1 dir=$2 rc=0
  shift 2
  ctest --test-dir "$dir" "${ctest_args[@]}" "$@" >"$dir/ctest.log" 2>&1 || rc=$?
  grep -vE '^Internal ctest changing|^ *Start +[0-9]+: |^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* +Passed +[0-9.]+ sec$' "$dir/ctest.log" || true
  if ((rc != 0)); then
    say "[$name] FAILED (ctest exit $rc; log: $dir/ctest.log)"
    status=1
  else
    say "[$name] passed in $((SECONDS - start)) s"
  fi
}
for i in "${!providers[@]}"; do
  provider=${providers[$i]}
  dir=$build_root/$provider
  mkdir -p "$dir"
  extra=()
  # The first provider runs everything. The others rebuild the library and run only the tests that
  # exercise the provider (TENAX_TESTS_PROVIDER_ONLY: linalg, provider, matmul, examples); the
  # provider-independent tests, the header check and the consumer test would only repeat themselves.
  if ((i == 0)); then
    extra+=(-DTENAX_TESTS_PROVIDER_ONLY=OFF -DTENAX_CHECK_HEADERS=ON -DTENAX_TEST_CONSUMER=ON "${cuda_args[@]}")
  else
    extra+=(-DTENAX_TESTS_PROVIDER_ONLY=ON -DTENAX_CHECK_HEADERS=OFF -DTENAX_TEST_CONSUMER=OFF "${cuda_args[@]}")
  fi
  start=$SECONDS
  say "[$provider] configure + build ($dir, -j$jobs)"
  quiet "$dir/configure.log" cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DTENAX_PROVIDER="$provider" -DTENAX_BUILD_TESTS=ON -DTENAX_BUILD_EXAMPLES=ON -DTENAX_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS="$provider_cxx_flags" "${extra[@]}" "${launcher_args[@]}"
  quiet "$dir/build.log" cmake --build "$dir" --parallel "$jobs"
  cache=""
  ((use_ccache)) && cache=" ($(ccache --print-stats 2>/dev/null | awk -F'\t' '$1=="direct_cache_hit"||$1=="preprocessed_cache_hit"{h+=$2} $1=="cache_miss"{m=$2} END{printf "ccache: %d hits, %d misses so far", h, m}'))"
  say "[$provider] built in $((SECONDS - start)) s${cache}; running ctest"
  run_ctest "$provider" "$dir"
done
# The ThreadSanitizer pass: the library and the worker-pool tests (bit identity across thread
# counts, exceptions, nesting, re-creation, concurrent callers, affinity) built with
# -fsanitize=thread (-O1, line tables: what the reports need); a data race fails the job. The
# library is built without its explicit op instances (TENAX_EXPLICIT_INSTANTIATION=OFF): the one
# test program instantiates the ops and rules it runs (f64 and c128) rather than the library
# compiling every op for every dtype under ThreadSanitizer, and that configuration stays built.
# Skipped with TENAX_SKIP_TSAN=1.
if [[ ${TENAX_SKIP_TSAN:-0} != 1 ]]; then
  dir=$build_root/tsan
  mkdir -p "$dir"
  start=$SECONDS
  say "[tsan] configure + build ($dir, ThreadSanitizer, test_threads)"
  quiet "$dir/configure.log" cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DTENAX_SANITIZE_THREAD=ON -DTENAX_EXPLICIT_INSTANTIATION=OFF -DTENAX_PROVIDER="${providers[0]}" -DTENAX_BUILD_TESTS=ON \
    -DTENAX_BUILD_EXAMPLES=OFF -DTENAX_BUILD_BENCH=OFF -DTENAX_CHECK_HEADERS=OFF -DTENAX_TEST_CONSUMER=OFF \
    -DTENAX_WITH_CUDA=OFF "${launcher_args[@]}"
  quiet "$dir/build.log" cmake --build "$dir" --parallel "$jobs" --target test_threads
  say "[tsan] built in $((SECONDS - start)) s; running ctest"
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp" run_ctest tsan "$dir" -R '^(Threads|ThreadsEnv)\.|test_threads'
fi
# The sanitizer pass (ASan + UBSan, errors fatal): the library and a reduced set of test programs
# (core, AD, anomaly, elementwise/reduction/shape ops, the generic forms of the dispatch slots, the
# linalg failure and residual tests, trace, the prepared plan, the AD oracle, the worker pool)
# built with -fsanitize=address,undefined and run.
# It is built with clang, which compiles these unoptimised test programs in well under g++'s time
# and so also keeps the test sources building with a second compiler. The libFuzzer target (below)
# is built next in the same directory, so the sanitized library is compiled once for both. The
# library and the fuzz target compile at -O1 with assertions: unoptimised, the fuzz run did not
# get past its seed corpus in 60 s (42 inputs/s). Line tables only: what the reports need.
# Skipped with TENAX_SKIP_SANITIZE=1.
sanitize_targets=(test_core test_tensor_errors test_allocator test_ad_engine test_anomaly test_ops_unary
  test_ops_binary test_ops_reduce test_ops_shape test_linalg_failures test_linalg_residuals test_trace test_trace_plan
  test_ad_oracle test_threads test_ad_custom test_npy test_dlpack test_ops_index test_ops_scan test_random
  test_generic_forms)
want_sanitize=0 want_fuzz=0
[[ ${TENAX_SKIP_SANITIZE:-0} == 1 ]] || want_sanitize=1
[[ ${TENAX_SKIP_FUZZ:-0} == 1 ]] || want_fuzz=1
have_clang=0
command -v clang++ >/dev/null 2>&1 && have_clang=1
if ((want_fuzz && !have_clang)); then
  say "[fuzz] FAILED: the libFuzzer target needs clang++ (not found; TENAX_SKIP_SETUP=1?)"
  status=1
  want_fuzz=0
fi
dir=$build_root/sanitize
if ((want_sanitize || want_fuzz)); then
  mkdir -p "$dir"
  start=$SECONDS
  # The compilers are named on the command line, so that a build directory configured earlier
  # with another compiler is reconfigured (CMake drops its cache) rather than silently reused.
  san_cc=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
  san_flags="-O1 -gline-tables-only"
  if ((!have_clang)); then
    say "[sanitize] clang++ not found (TENAX_SKIP_SETUP=1?): building with the default compiler"
    san_cc=()
    san_flags="-O1 -g1"
  fi
  on() { (($1)) && echo ON || echo OFF; }
  say "[sanitize] configure ($dir, ${san_cc:+clang, }ASan + UBSan)"
  quiet "$dir/configure.log" cmake -S "$root" -B "$dir" "${generator[@]}" "${san_cc[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$san_flags" \
    -DTENAX_SANITIZE="$(on $want_sanitize)" -DTENAX_BUILD_FUZZ="$(on $want_fuzz)" -DTENAX_PROVIDER="${providers[0]}" \
    -DTENAX_BUILD_TESTS="$(on $want_sanitize)" -DTENAX_BUILD_EXAMPLES=OFF -DTENAX_BUILD_BENCH=OFF \
    -DTENAX_CHECK_HEADERS=OFF -DTENAX_TEST_CONSUMER=OFF -DTENAX_WITH_CUDA=OFF "${launcher_args[@]}"
fi
if ((want_sanitize)); then
  say "[sanitize] build (${#sanitize_targets[@]} test programs)"
  quiet "$dir/build.log" cmake --build "$dir" --parallel "$jobs" --target "${sanitize_targets[@]}"
  say "[sanitize] built in $((SECONDS - start)) s; running ctest"
  # Programs outside the reduced set are not built (CTest lists them as *_NOT_BUILT).
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 run_ctest sanitize "$dir" -E '_NOT_BUILT'
fi
# Bounded libFuzzer runs (fuzz/): fuzz_linalg for TENAX_FUZZ_SECONDS (default 60) and the .npy/.npz
# readers (fuzz_io) for TENAX_FUZZ_IO_SECONDS (default 20), each built with clang, ASan + UBSan and
# -O1 with assertions on in the sanitizer pass's directory on its library, and started from a copy
# of its seed corpus in fuzz/corpus/<name>. A crash, sanitizer report, exception other than
# tenax::Error or a hang fails the job; the input is kept in the log directory. Skipped with
# TENAX_SKIP_FUZZ=1.
if ((want_fuzz)); then
  start=$SECONDS
  say "[fuzz] build (fuzz_linalg, fuzz_io, in $dir)"
  quiet "$dir/build-fuzz.log" cmake --build "$dir" --parallel "$jobs" --target fuzz_linalg fuzz_io
  say "[fuzz] built in $((SECONDS - start)) s"
  for target in linalg:"${TENAX_FUZZ_SECONDS:-60}" io:"${TENAX_FUZZ_IO_SECONDS:-20}"; do
    name=${target%%:*} seconds=${target#*:}
    say "[fuzz] fuzz_$name for $seconds s"
    work=$dir/corpus-$name
    rm -rf "$work" && mkdir -p "$work" && cp -r "$root/fuzz/corpus/$name/." "$work/"
    rc=0
    (cd "$dir" && "$dir/fuzz/fuzz_$name" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
      -print_final_stats=1 >"$dir/fuzz-$name.log" 2>&1) || rc=$?
    if ((rc != 0)); then
      tail -n 60 "$dir/fuzz-$name.log" >&2
      say "[fuzz] fuzz_$name FAILED (exit $rc; log: $dir/fuzz-$name.log; the input is in $dir)"
      status=1
    else
      say "[fuzz] fuzz_$name passed: $(grep -E 'Done [0-9]+ runs' "$dir/fuzz-$name.log" || echo 'done')"
    fi
  done
fi
exit $status
