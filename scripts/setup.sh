#!/usr/bin/env bash
# Installs the system packages tenax's build, tests and benchmarks need (Debian/Ubuntu, apt).
# Idempotent: packages already installed are left alone, and the package lists are refreshed only
# when something has to be installed.
#
#   scripts/setup.sh                    compiler, CMake, Ninja, ccache, OpenBLAS/LAPACKE, Eigen,
#                                       GoogleTest, Google Benchmark
#   scripts/setup.sh --with-libtorch    also libtorch-dev (the libtorch reference benchmarks)
#   scripts/setup.sh --with-python      also python3 (report tooling)
#   scripts/setup.sh --with-python-refs also python3-venv and python3-pip (the Python reference rows:
#                                       scripts/bench.sh pip-installs PyTorch, JAX, numpy and
#                                       matplotlib from PyPI into a venv)
#   scripts/setup.sh --with-legacy-python-refs
#                                       also python3-numpy and python3-torch (Debian's PyTorch 1.13,
#                                       for scripts/bench.sh --legacy-refs)
#   scripts/setup.sh --with-clang       also clang and its runtime libraries (the sanitizer pass and
#                                       the libFuzzer targets; --with-fuzz is the same)
#
# Runs as root directly, otherwise through sudo. TENAX_SKIP_SETUP=1 skips it entirely (for machines
# whose dependencies are provided some other way).
set -euo pipefail

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

usage() { sed -n '2,21s/^# \{0,1\}//p' "$0"; }

with_libtorch=0
with_python=0
with_python_refs=0
with_legacy_refs=0
with_clang=0
for arg in "$@"; do
  case "$arg" in
    --with-libtorch) with_libtorch=1 ;;
    --with-python) with_python=1 ;;
    --with-python-refs) with_python=1 with_python_refs=1 ;;
    --with-legacy-python-refs) with_python=1 with_python_refs=1 with_legacy_refs=1 ;;
    --with-clang | --with-fuzz) with_clang=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$arg'" ;;
  esac
done

if [[ "${TENAX_SKIP_SETUP:-0}" == 1 ]]; then
  say "TENAX_SKIP_SETUP=1: not checking system packages"
  exit 0
fi

packages=(
  cmake g++ make ninja-build
  ccache                           # scripts/test.sh: the second provider's build reuses the first's objects
  libopenblas-dev liblapacke-dev   # default CPU provider (CBLAS + LAPACKE)
  libeigen3-dev                    # the Eigen provider, and small eigensolvers in every provider
  libdlpack-dev                    # DLPack import and export (tenax/interop/dlpack.hpp; test_dlpack)
  zlib1g-dev                       # .npz archives (deflate, CRC-32)
  libgtest-dev                     # tests
  libbenchmark-dev                 # benchmarks
)
((with_libtorch)) && packages+=(libtorch-dev)
((with_python)) && packages+=(python3)
((with_python_refs)) && packages+=(python3-venv python3-pip)
((with_legacy_refs)) && packages+=(python3-numpy python3-torch)
((with_clang)) && packages+=(clang libclang-rt-dev)

command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 ||
  die "this script needs an apt-based system (Debian/Ubuntu). Install these packages (or equivalents) yourself and rerun with TENAX_SKIP_SETUP=1: ${packages[*]}"

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == installed ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  say "all ${#packages[@]} packages present"
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  die "missing packages (${missing[*]}) and not running as root, and sudo is not available"
fi

log=$(mktemp "${TMPDIR:-/tmp}/tenax-setup.XXXXXX.log")
apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=600)

say "installing: ${missing[*]}"
if ! "${apt[@]}" update >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  die "apt-get update failed (full log: $log)"
fi
if ! "${apt[@]}" install --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
  tail -n 30 "$log" >&2
  die "apt-get install failed for: ${missing[*]} (full log: $log)"
fi

# Verify: a package name that apt resolved to something else would otherwise pass silently.
still=()
for p in "${missing[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == installed ]] || still+=("$p")
done
((${#still[@]} == 0)) || die "still not installed after apt-get: ${still[*]} (log: $log)"
rm -f "$log"
say "installed ${#missing[@]} package(s)"
