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
# Environment: TENAX_BUILD_DIR (default <repo>/build-ci; one subdirectory per provider),
# TENAX_JOBS (default: nproc), TENAX_SKIP_SETUP=1 (do not check system packages).
# Exits non-zero when a configure, build or test step fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_root=${TENAX_BUILD_DIR:-$root/build-ci}
jobs=${TENAX_JOBS:-$(nproc 2>/dev/null || echo 2)}
providers=("$@")
((${#providers[@]})) || providers=(openblas eigen)

say() { printf '== %s\n' "$*"; }

"$root/scripts/setup.sh"

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

status=0
for i in "${!providers[@]}"; do
  provider=${providers[$i]}
  dir=$build_root/$provider
  mkdir -p "$dir"
  extra=()
  # The first provider runs everything. The others rebuild the library and run only the tests that
  # exercise the provider (TENAX_TESTS_PROVIDER_ONLY: linalg, provider, matmul, examples); the
  # provider-independent tests, the header check and the consumer test would only repeat themselves.
  if ((i == 0)); then
    extra+=(-DTENAX_TESTS_PROVIDER_ONLY=OFF -DTENAX_CHECK_HEADERS=ON -DTENAX_TEST_CONSUMER=ON)
  else
    extra+=(-DTENAX_TESTS_PROVIDER_ONLY=ON -DTENAX_CHECK_HEADERS=OFF -DTENAX_TEST_CONSUMER=OFF)
  fi
  start=$SECONDS
  say "[$provider] configure + build ($dir, -j$jobs)"
  quiet "$dir/configure.log" cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DTENAX_PROVIDER="$provider" -DTENAX_BUILD_TESTS=ON -DTENAX_BUILD_EXAMPLES=ON -DTENAX_BUILD_BENCH=OFF \
    "${extra[@]}"
  quiet "$dir/build.log" cmake --build "$dir" --parallel "$jobs"
  say "[$provider] built in $((SECONDS - start)) s; running ctest"
  # Passing tests are not listed; failures come with their output, then CTest's summary.
  rc=0
  ctest --test-dir "$dir" "${ctest_args[@]}" >"$dir/ctest.log" 2>&1 || rc=$?
  grep -vE '^Internal ctest changing|^ *Start +[0-9]+: |^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* +Passed +[0-9.]+ sec$' "$dir/ctest.log" || true
  if ((rc != 0)); then
    say "[$provider] FAILED (ctest exit $rc; log: $dir/ctest.log)"
    status=1
  else
    say "[$provider] passed in $((SECONDS - start)) s"
  fi
done
exit $status
