#!/usr/bin/env bash
# The benchmark job (the README's main job). Installs the dependencies (scripts/setup.sh, with
# libtorch for the reference rows), makes the Python references' virtual environment (PyPI's
# PyTorch and JAX, pinned), builds the Google Benchmark drivers (Release) in build-bench/, runs
# every suite pinned to one CPU with interleaved repetitions, each suite's binary followed by its
# PyTorch and JAX rows, and writes the JSON outputs, a markdown summary (a headline table of each
# suite's ratios to the best reference and to the provider floor, then a table per suite) and the
# charts to results/<date>/. It ends by printing the headline table and the chart paths.
#
#   scripts/bench.sh                      short profile (the default, about 10 minutes on 2 cores
#                                         once installed and built): every suite, 2 runs x 3
#                                         repetitions, 0.05 s minimum per repetition, large_ad at
#                                         n = 64, 256 and jvp_vjp at n = 2, 8, 256
#   scripts/bench.sh --profile standard   3 runs x 5 repetitions, 0.1 s, large_ad n = 64..512,
#                                         jvp_vjp n = 2, 4, 8, 256, 512 (--quick is the same)
#   scripts/bench.sh --full               full profile (--profile full): 3 runs x 10 repetitions,
#                                         0.5 s, and the large sizes (large_ad, jvp_vjp: n = 1024)
#   scripts/bench.sh --suite overhead     only the named suites (repeatable; default: all, gpu_linalg_ad only where a GPU is visible)
#   scripts/bench.sh --runs N --repetitions N --min-time SECONDS --filter REGEX
#                                         override the profile's counts, or run only some rows
#   scripts/bench.sh --no-python-refs     leave out the PyTorch and JAX rows from Python (and their
#                                         venv); the libtorch rows stay
#   scripts/bench.sh --legacy-refs        the Python rows with Debian's PyTorch 1.13 and JAX 0.4.38
#                                         instead of the current PyPI releases
#
# Runs: each run starts every suite's binary once (suites alternate within a run), and each binary
# interleaves its rows' repetitions randomly (--benchmark_enable_random_interleaving); the Python
# references (bench/ref_python/refs.py) run after each suite's binary in every run, pinned to the
# same CPU. Medians and IQRs in the summary pool all repetitions of all runs.
# Environment: TENAX_BENCH_BUILD_DIR (default <repo>/build-bench), TENAX_BENCH_CPU (the CPU list
# for taskset, default 0; the 1-thread suites), TENAX_BENCH_POOL_CPUS (default 0-1: the threads
# suite, whose rows compare 1 and 2 threads), TENAX_RESULTS_DIR (default <repo>/results/<YYYY-MM-DD>), TENAX_JOBS
# (build jobs, default nproc), TENAX_SKIP_SETUP=1 (do not check system packages). The binaries and
# refs.py get TENAX_BENCH_PROFILE=short|standard|full (full: the n = 1024 sizes) and, in the short
# profile, TENAX_LARGE_AD_SIZES=64,256 and TENAX_JVP_VJP_SIZES=2,8,256; set either yourself to
# choose other sizes in any profile. The CUDA backend is built only when gpu_linalg_ad runs.
# Python references: a virtual environment TENAX_BENCH_PYENV (default <repo>/.venv-refs, no system
# site packages) with bench/ref_python/requirements.txt from PyPI (PyTorch 2.15, JAX 0.10, numpy,
# matplotlib; torch's wheel is about 6 GB installed). --legacy-refs uses TENAX_BENCH_LEGACY_PYENV
# (default <repo>/.venv-bench, --system-site-packages, so that it sees Debian's python3-torch 1.13
# and numpy) with bench/ref_python/requirements-legacy.txt (jax[cpu] 0.4.x and matplotlib, numpy
# held at the system's). A venv is (re)installed only when the requirement lines of its
# .tenax-requirements stamp (a copy of the file last installed) differ from the requirements
# file's. report.py runs with the venv's python whenever the venv exists (then it also draws the
# charts).
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
profile=short
runs=""
reps=""
min_time=""
filter=""
python_refs=1
legacy_refs=0
suites=()
while (($#)); do
  case "$1" in
    --profile) shift; profile=${1:?--profile needs a name (short, standard or full)} ;;
    --quick | --standard) profile=standard ;;
    --full) profile=full ;;
    --suite) shift; suites+=("${1:?--suite needs a name}") ;;
    --runs) shift; runs=${1:?--runs needs a number} ;;
    --repetitions) shift; reps=${1:?--repetitions needs a number} ;;
    --min-time) shift; min_time=${1:?--min-time needs seconds} ;;
    --filter) shift; filter=${1:?--filter needs a regex} ;;
    --with-python-refs) python_refs=1 ;; # the default; kept for older command lines
    --no-python-refs) python_refs=0 ;;
    --legacy-refs) python_refs=1 legacy_refs=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done
((${#suites[@]})) || suites=("${default_suites[@]}")
for s in "${suites[@]}"; do
  [[ " ${all_suites[*]} " == *" $s "* ]] || die "unknown suite '$s' (known: ${all_suites[*]})"
done
# A profile: runs, repetitions, minimum time per repetition and (short) the sizes of the suites
# whose sizes are lists (an exported TENAX_LARGE_AD_SIZES / TENAX_JVP_VJP_SIZES wins).
case "$profile" in
  short)
    runs=${runs:-2} reps=${reps:-3} min_time=${min_time:-0.05}
    export TENAX_LARGE_AD_SIZES=${TENAX_LARGE_AD_SIZES:-64,256}
    export TENAX_JVP_VJP_SIZES=${TENAX_JVP_VJP_SIZES:-2,8,256}
    ;;
  standard) runs=${runs:-3} reps=${reps:-5} min_time=${min_time:-0.1} ;;
  full) runs=${runs:-3} reps=${reps:-10} min_time=${min_time:-0.5} ;;
  *) die "unknown profile '$profile' (known: short, standard, full)" ;;
esac

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
if ((legacy_refs)); then
  setup_args=(--with-libtorch --with-legacy-python-refs)
elif ((python_refs)); then
  setup_args=(--with-libtorch --with-python-refs)
fi
say "setup (scripts/setup.sh ${setup_args[*]})"
"$root/scripts/setup.sh" "${setup_args[@]}"
command -v python3 >/dev/null 2>&1 || die "python3 is needed for the report (bench/report.py)"

# The Python references' virtual environment, made from Debian's python3 (/usr/bin/python3, also
# the interpreter python3-torch is installed for). Current (default): its own packages only, the
# pinned PyPI releases of requirements.txt. Legacy (--legacy-refs): --system-site-packages, so that
# Debian's torch 1.13 and numpy are seen; pip adds jax and matplotlib, with numpy held at the
# system's version (Debian's torch is built against it). Installed only when the requirement lines
# of the venv's stamp (.tenax-requirements, a copy of the requirements file last installed) differ
# from the file's.
if ((legacy_refs)); then
  refs_set=legacy pyenv_var=TENAX_BENCH_LEGACY_PYENV want_site=true venv_args=(--system-site-packages)
  pyenv=${TENAX_BENCH_LEGACY_PYENV:-$root/.venv-bench}
  req=$root/bench/ref_python/requirements-legacy.txt
else
  refs_set=current pyenv_var=TENAX_BENCH_PYENV want_site=false venv_args=()
  pyenv=${TENAX_BENCH_PYENV:-$root/.venv-refs}
  req=$root/bench/ref_python/requirements.txt
fi
python_ref_suites=" large_ad jvp_vjp overhead mlp ops gpu_linalg_ad "
if ((python_refs)); then
  sys_py=/usr/bin/python3
  [[ -x $sys_py ]] || sys_py=$(command -v python3)
  if [[ ! -x $pyenv/bin/python ]]; then
    say "python references ($refs_set): virtual environment $pyenv (from $sys_py ${venv_args[*]})"
    "$sys_py" -m venv "${venv_args[@]}" "$pyenv" || die "could not create the virtual environment $pyenv"
  fi
  # A venv made for the other set would mix Debian's torch and numpy with PyPI's.
  site=$(sed -n 's/^include-system-site-packages *= *//p' "$pyenv/pyvenv.cfg" 2>/dev/null || true)
  [[ ${site:-false} == "$want_site" ]] ||
    die "the venv $pyenv has include-system-site-packages = ${site:-?}; the $refs_set references need" \
      "$want_site: remove it, or point $pyenv_var elsewhere"
  stamp=$pyenv/.tenax-requirements
  requirements_of() { grep -v -E '^[[:space:]]*(#|$)' "$1" 2>/dev/null || true; } # comments do not count
  if [[ ! -f $stamp || "$(requirements_of "$req")" != "$(requirements_of "$stamp")" ]]; then
    cons=$pyenv/.tenax-constraints
    : >"$cons"
    np=""
    if ((legacy_refs)); then
      np=$("$pyenv/bin/python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true)
      [[ -n $np ]] && echo "numpy==$np" >"$cons"
    fi
    say "python references ($refs_set): pip install -r $req${np:+ (numpy held at $np)}" \
      "$( ((legacy_refs)) || echo '(PyTorch from PyPI: a download of a few GB, once)')"
    "$pyenv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" -c "$cons" ||
      die "pip install failed (PyPI reachable?); the venv is $pyenv"
    cp "$req" "$stamp"
  fi
  say "python references ($refs_set): $pyenv"
  "$pyenv/bin/python" - <<'PY' || true
import importlib
for m in ("torch", "jax", "numpy", "matplotlib"):
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
cuda_args=(-DTENAX_WITH_CUDA=OFF) # the CPU suites need no CUDA backend (nor its long build)
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
[[ -n ${TENAX_LARGE_AD_SIZES:-} ]] && notes[0]+="; large_ad n = $TENAX_LARGE_AD_SIZES"
[[ -n ${TENAX_JVP_VJP_SIZES:-} ]] && notes[0]+="; jvp_vjp n = $TENAX_JVP_VJP_SIZES"
((python_refs)) && notes[0]+="; Python references ($refs_set, $pyenv) run after each suite's binary in every run"
jsons=()
for s in "${suites[@]}"; do
  jsons+=("$out/$s".run*.json)
  ((python_refs)) && [[ -e $out/$s.py.run1.json ]] && jsons+=("$out/$s".py.run*.json)
done
# The commit the binaries were built from (-dirty: with uncommitted changes to tracked files).
commit=$(git -C "$root" describe --always --dirty --abbrev=10 2>/dev/null || echo unknown)
status=0
# The whole summary goes to summary.md; the console gets its header, the headline table and the
# chart paths.
"$report_py" "$root/bench/report.py" --out "$out" --command "$command_line" --cpu "${cpu:-}" \
  --tenax-commit "$commit" --print headline --note "${notes[0]}" "${jsons[@]}" || status=$?
say "done in $((SECONDS - start)) s after the build; every table: $out/summary.md"
((status == 0)) || die "report flagged failures (exit $status): see $out/summary.md"
