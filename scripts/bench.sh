#!/usr/bin/env bash
# The benchmark job (the README's main job). Installs the dependencies (scripts/setup.sh, with
# libtorch for the reference rows), builds the Google Benchmark drivers (Release) in build-bench/,
# runs every suite pinned to one CPU with interleaved repetitions, and writes the JSON outputs and
# a markdown summary (tenax, libtorch, ratio tenax/libtorch per row) to results/<date>/, printing
# the summary at the end.
#
#   scripts/bench.sh                      quick profile: every suite, 3 runs x 5 repetitions
#   scripts/bench.sh --full               full profile: 3 runs x 10 repetitions, longer minimum
#                                         time per repetition, and the large sizes (large_ad, jvp_vjp:
#                                         n = 1024)
#   scripts/bench.sh --suite overhead     only the named suites (repeatable; default: all, gpu_linalg_ad only where a GPU is visible)
#   scripts/bench.sh --runs N --repetitions N --min-time SECONDS --filter REGEX
#   scripts/bench.sh --with-python-refs   also the PyTorch and JAX reference rows from Python
#                                         (bench/ref_python/refs.py), run after each suite's binary
#                                         in every run, pinned to the same CPU
#
# Runs: each run starts every suite's binary once (suites alternate within a run), and each binary
# interleaves its rows' repetitions randomly (--benchmark_enable_random_interleaving); medians
# and IQRs in the summary pool all repetitions of all runs.
# Environment: TENAX_BENCH_BUILD_DIR (default <repo>/build-bench), TENAX_BENCH_CPU (the CPU list
# for taskset, default 0; the 1-thread suites), TENAX_BENCH_POOL_CPUS (default 0-1: the threads
# suite, whose rows compare 1 and 2 threads), TENAX_RESULTS_DIR (default <repo>/results/<YYYY-MM-DD>), TENAX_JOBS
# (build jobs, default nproc), TENAX_SKIP_SETUP=1 (do not check system packages). The binaries get
# TENAX_BENCH_PROFILE=quick|full, from which a suite picks its sizes (large_ad: 64..512 quick,
# 64..1024 full; TENAX_LARGE_AD_SIZES=64,128 overrides the list; jvp_vjp: 2, 4, 8, 256, 512 quick,
# plus 1024 full; TENAX_JVP_VJP_SIZES overrides).
# Python references: --with-python-refs installs python3-torch (Debian, PyTorch 1.13) and makes a
# virtual environment TENAX_BENCH_PYENV (default <repo>/.venv-bench, --system-site-packages, so
# that it sees Debian's torch and numpy) with jax[cpu] and matplotlib from PyPI
# (bench/ref_python/requirements.txt, numpy pinned to the system's). report.py runs with the venv's
# python whenever the venv exists (then it also draws the charts).
# Exits non-zero when a step fails or a row fails its correctness check.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# The suites: bench/CMakeLists.txt builds bench_<suite> for each. Add new suites here.
# gpu_linalg_ad (built with the CUDA backend) joins the default set where a GPU is visible; asked for
# by name elsewhere, its rows say why they cannot run.
all_suites=(overhead large_ad mlp jvp_vjp ops threads gpu_linalg_ad)
default_suites=(overhead large_ad mlp jvp_vjp ops threads)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  default_suites+=(gpu_linalg_ad)
fi

say() { printf '== %s\n' "$*"; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

orig_args=("$@")
profile=quick
runs=3
reps=""
min_time=""
filter=""
python_refs=0
suites=()
while (($#)); do
  case "$1" in
    --quick) profile=quick ;;
    --full) profile=full ;;
    --suite) shift; suites+=("${1:?--suite needs a name}") ;;
    --runs) shift; runs=${1:?--runs needs a number} ;;
    --repetitions) shift; reps=${1:?--repetitions needs a number} ;;
    --min-time) shift; min_time=${1:?--min-time needs seconds} ;;
    --filter) shift; filter=${1:?--filter needs a regex} ;;
    --with-python-refs) python_refs=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done
((${#suites[@]})) || suites=("${default_suites[@]}")
for s in "${suites[@]}"; do
  [[ " ${all_suites[*]} " == *" $s "* ]] || die "unknown suite '$s' (known: ${all_suites[*]})"
done
if [[ $profile == full ]]; then
  reps=${reps:-10}
  min_time=${min_time:-0.5}
else
  reps=${reps:-5}
  min_time=${min_time:-0.1}
fi

# The rows of a suite in a profile (a --benchmark_filter regex). The sizes themselves follow
# TENAX_BENCH_PROFILE (exported below), so that a profile's rows are the only ones registered.
suite_filter() {
  local suite=$1
  if [[ -n $filter ]]; then
    printf '%s' "$filter"
    return
  fi
  case "$suite:$profile" in
    *) printf '.' ;;
  esac
}

build_dir=${TENAX_BENCH_BUILD_DIR:-$root/build-bench}
jobs=${TENAX_JOBS:-$(nproc 2>/dev/null || echo 2)}
cpu=${TENAX_BENCH_CPU:-0}
date=$(date +%Y-%m-%d)
out=${TENAX_RESULTS_DIR:-$root/results/$date}
command_line="scripts/bench.sh"
((${#orig_args[@]})) && command_line+=$(printf ' %q' "${orig_args[@]}")

setup_args=(--with-libtorch --with-python)
((python_refs)) && setup_args=(--with-libtorch --with-python-refs)
say "setup (scripts/setup.sh ${setup_args[*]})"
"$root/scripts/setup.sh" "${setup_args[@]}"
command -v python3 >/dev/null 2>&1 || die "python3 is needed for the report (bench/report.py)"

# The Python references' virtual environment (--with-python-refs). Made from Debian's python3
# (/usr/bin/python3, the interpreter python3-torch is installed for) with the system site packages;
# pip adds jax and matplotlib, with numpy held at the system's version (Debian's torch is built
# against it). Reinstalled only when the requirements file changes.
pyenv=${TENAX_BENCH_PYENV:-$root/.venv-bench}
python_ref_suites=" large_ad jvp_vjp overhead mlp ops gpu_linalg_ad "
if ((python_refs)); then
  sys_py=/usr/bin/python3
  [[ -x $sys_py ]] || sys_py=$(command -v python3)
  if [[ ! -x $pyenv/bin/python ]]; then
    say "python references: virtual environment $pyenv (from $sys_py, --system-site-packages)"
    "$sys_py" -m venv --system-site-packages "$pyenv" || die "could not create the virtual environment $pyenv"
  fi
  req=$root/bench/ref_python/requirements.txt
  stamp=$pyenv/.tenax-requirements
  if ! cmp -s "$req" "$stamp"; then
    cons=$pyenv/.tenax-constraints
    : >"$cons"
    np=$("$pyenv/bin/python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true)
    [[ -n $np ]] && echo "numpy==$np" >"$cons"
    say "python references: pip install -r $req${np:+ (numpy held at $np)}"
    "$pyenv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" -c "$cons" ||
      die "pip install failed (PyPI reachable?); the venv is $pyenv"
    cp "$req" "$stamp"
  fi
  "$pyenv/bin/python" - <<'PY' || true
import importlib
for m in ("torch", "jax", "matplotlib"):
    try:
        mod = importlib.import_module(m)
        print(f"   {m} {getattr(mod, '__version__', '?')}")
    except Exception as e:  # the driver skips that framework's rows and says why
        print(f"   {m}: not importable ({type(e).__name__}: {e})")
PY
fi
report_py=python3
[[ -x $pyenv/bin/python ]] && report_py=$pyenv/bin/python

say "configure ($build_dir, Release)"
generator=()
if [[ ! -f $build_dir/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
mkdir -p "$build_dir"
cfg_log=$build_dir/configure.log
cuda_args=()
if [[ " ${suites[*]} " == *" gpu_linalg_ad "* ]]; then
  nvcc_path=$(command -v nvcc 2>/dev/null || true)
  [[ -z $nvcc_path && -x /usr/local/cuda/bin/nvcc ]] && nvcc_path=/usr/local/cuda/bin/nvcc
  [[ -n $nvcc_path ]] || die "gpu_linalg_ad needs the CUDA toolkit (nvcc)"
  cuda_args=(-DTENAX_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc_path")
fi
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DTENAX_BUILD_BENCH=ON \
  -DTENAX_BUILD_TESTS=OFF -DTENAX_BUILD_EXAMPLES=OFF "${cuda_args[@]}" >"$cfg_log" 2>&1 ||
  { tail -n 40 "$cfg_log" >&2; die "configure failed (log: $cfg_log)"; }
grep -E "tenax bench:|tenax: " "$cfg_log" | sed 's/^-- /   /' || true

targets=()
for s in "${suites[@]}"; do targets+=("bench_$s"); done
say "build (${targets[*]}, -j$jobs)"
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"

pin=()
if command -v taskset >/dev/null 2>&1; then
  pin=(taskset -c "$cpu")
else
  say "warning: taskset not found, running unpinned"
  cpu=""
fi
# One-thread rows: no BLAS or OpenMP thread pools behind tenax's back.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# The profile, for the suites whose sizes depend on it (large_ad, jvp_vjp).
export TENAX_BENCH_PROFILE=$profile

mkdir -p "$out"
for s in "${suites[@]}"; do rm -f "$out/$s".run*.json "$out/$s".run*.log "$out/$s".py.run*.json "$out/$s".py.run*.log; done
say "run: profile $profile, ${#suites[@]} suite(s) x $runs runs x $reps repetitions, min time ${min_time}s," \
  "pinned to CPU ${cpu:-none}; results in $out"
start=$SECONDS
for ((r = 1; r <= runs; r++)); do
  for s in "${suites[@]}"; do
    say "run $r/$runs: $s ($((SECONDS - start)) s elapsed)"
    set +e
    runner=("${pin[@]}")
    if [[ $s == threads && ${#pin[@]} -gt 0 ]]; then runner=(taskset -c "${TENAX_BENCH_POOL_CPUS:-0-1}"); fi
    "${runner[@]}" "$build_dir/bench/bench_$s" \
      --benchmark_filter="$(suite_filter "$s")" \
      --benchmark_repetitions="$reps" \
      --benchmark_min_time="$min_time" \
      --benchmark_enable_random_interleaving=true \
      --benchmark_out="$out/$s.run$r.json" --benchmark_out_format=json \
      2>&1 | tee "$out/$s.run$r.log" | grep --line-buffered -E '_median|_iqr|ERROR|error'
    rc=${PIPESTATUS[0]}
    set -e
    ((rc == 0)) || die "bench_$s failed with status $rc (log: $out/$s.run$r.log)"
    if ((python_refs)) && [[ $python_ref_suites == *" $s "* ]]; then
      say "run $r/$runs: $s, Python references ($((SECONDS - start)) s elapsed)"
      set +e
      "${pin[@]}" "$pyenv/bin/python" "$root/bench/ref_python/refs.py" --suite "$s" \
        --filter "$(suite_filter "$s")" --repetitions "$reps" --min-time "$min_time" --seed "$r" \
        --out "$out/$s.py.run$r.json" 2>&1 | tee "$out/$s.py.run$r.log" | grep --line-buffered -E 'ERROR|skipped'
      rc=${PIPESTATUS[0]}
      set -e
      # 3: a row failed its check (recorded in the JSON as an error, like the C++ rows).
      ((rc == 0 || rc == 3)) || die "refs.py failed with status $rc (log: $out/$s.py.run$r.log)"
    fi
  done
done
say "all runs done in $((SECONDS - start)) s"

say "report ($out/summary.md)"
notes=("profile $profile: $runs runs x $reps repetitions per row, min time ${min_time}s per repetition")
((python_refs)) && notes[0]+="; Python references (refs.py) run after each suite's binary in every run"
jsons=()
for s in "${suites[@]}"; do
  jsons+=("$out/$s".run*.json)
  ((python_refs)) && [[ -e $out/$s.py.run1.json ]] && jsons+=("$out/$s".py.run*.json)
done
status=0
"$report_py" "$root/bench/report.py" --out "$out" --command "$command_line" --cpu "${cpu:-}" \
  --note "${notes[0]}" "${jsons[@]}" || status=$?
((status == 0)) || die "report flagged failures (exit $status): see $out/summary.md"
