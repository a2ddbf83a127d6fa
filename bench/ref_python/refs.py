#!/usr/bin/env python3
"""PyTorch and JAX reference rows for the tenax benchmark suites (shared BENCHMARKS.md).

Runs the workloads of the C++ suites (bench/large_ad.cpp, bench/overhead.cpp, bench/mlp.cpp, bench/ops.cpp and the
jvp_vjp suite) in PyTorch and JAX from Python, float64, one thread, with the very same inputs (the
data/well/spd generators of bench/large_ad_cases.hpp, bit for bit) and the same timed regions, and
writes a Google-Benchmark-compatible JSON file that bench/report.py pools with the C++ rows.

    python bench/ref_python/refs.py --out FILE.json [--suite large_ad] [--filter REGEX]
        [--repetitions 5] [--min-time 0.1] [--frameworks pytorch,jax] [--list]

Rows (mode = the framework, or <framework>_<mode> where the C++ row has a mode of its own):
    large_ad/<case>/f64/<n>x<n>/{pytorch,jax}        forward + sum loss + backward
    jvp_vjp/<case>_{jvp,vjp}/f64/<n>x<n>/{pytorch,jax}
    overhead/chain100/f64/1/{pytorch,jax}_{recorded,unrecorded}
    mlp/train/f64/<shape>/{pytorch,jax}              the whole SGD training
    ops/<case>/f64/<shape>/{pytorch,jax}             einsum forward; softmax, logsumexp fwd + bwd; gelu, mse forward

jvp_vjp rows follow jvp_vjp_cases.hpp and ref_libtorch/jvp_vjp_torch.cpp exactly: each case is a
scalar loss of A alone (qr: sum(Q) + sum(R), A = well(n, 1); eigh: sum(w) + sum(V), A = spd(n, 1),
V in the canonical gauge of large_ad; solve: sum(solve(A, b)), A = well(n, 1), b = data((n,1), 2)
a constant; lu: sum(L) + sum(U), A = well(n, 1); svd_s: sum of the singular values, A = well(n, 1));
the JVP rows compute the loss and its derivative along dA = data((n,n), 1001) (symmetrised for
eigh, unit Frobenius norm), the VJP rows the loss and its gradient for the cotangent 1; checked:
the tangent (or <gradient, dA>) against central differences along dA, and PyTorch against JAX.

Sizes: large_ad follows TENAX_LARGE_AD_SIZES (comma list) or TENAX_BENCH_PROFILE (full: 64..1024,
otherwise 64..512), like the C++ binary; jvp_vjp follows TENAX_JVP_VJP_SIZES or the profile (2, 4,
8, 256, 512, plus 1024 in the full profile).

Timing, per row: the inputs (and, for JAX, the compiled function) are built outside the timing; a
warm-up estimates the iterations per repetition the way Google Benchmark does (at least --min-time
seconds per repetition); the repetitions of all rows are then run in a shuffled order (like
--benchmark_enable_random_interleaving). Each repetition is one "iteration" entry with the wall
and process CPU time per iteration. Before timing, each row's result is checked once (gradients
against fourth-order central differences of the framework's own forward, PyTorch against JAX,
the chain against its analytic value, the mlp final loss against the reference); a failed check
turns the row into an entry with error_occurred/error_message instead of a time, as Google
Benchmark does. A framework that cannot be imported has no rows: the reason is printed.
"""

import os

# One thread everywhere, set before numpy, torch or jax are imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
_xla = os.environ.get("XLA_FLAGS", "")
for _flag in ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1"):
    if _flag.split("=")[0] not in _xla:
        _xla = (_xla + " " + _flag).strip()
os.environ["XLA_FLAGS"] = _xla
# The GPU suite alone (--suite gpu_linalg_ad) lets JAX see CUDA (TENAX_REFS_DEVICE=cpu keeps it on
# the CPU, to try the GPU rows' code without a GPU); every other run is CPU-only.
import sys as _sys  # noqa: E402


def _suites_in(argv):
    out = []
    for i, a in enumerate(argv):
        if a == "--suite" and i + 1 < len(argv):
            out += argv[i + 1].split(",")
        elif a.startswith("--suite="):
            out += a.split("=", 1)[1].split(",")
    return out


_gpu_only = _suites_in(_sys.argv[1:]) == ["gpu_linalg_ad"]
if _gpu_only and os.environ.get("TENAX_REFS_DEVICE", "cuda") != "cpu":
    os.environ.setdefault("JAX_PLATFORMS", "cuda,cpu")
else:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["JAX_ENABLE_X64"] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

try:
    import numpy as np
except ImportError as _e:  # the inputs are generated with numpy: no rows at all without it
    sys.exit(
        f"refs.py: numpy is needed for the inputs and checks ({_e}); "
        "use the venv that scripts/bench.sh makes (.venv-refs)"
    )

SUITES = ["large_ad", "jvp_vjp", "overhead", "mlp", "ops", "gpu_linalg_ad"]
FRAMEWORKS = ["pytorch", "jax"]

# ---- frameworks -----------------------------------------------------------------------------------

torch = None
jax = jnp = None
IMPORT_ERRORS = {}


def import_frameworks(wanted):
    """Imports the wanted frameworks; a failure is recorded (and printed), never faked."""
    global torch, jax, jnp
    if "pytorch" in wanted:
        try:
            import torch as _torch

            _torch.set_num_threads(1)
            try:
                _torch.set_num_interop_threads(1)
            except RuntimeError:
                pass  # already set (only possible before any parallel work)
            torch = _torch
        except Exception as e:  # noqa: BLE001 - any import problem means no rows
            IMPORT_ERRORS["pytorch"] = f"{type(e).__name__}: {e}"
    if "jax" in wanted:
        try:
            import jax as _jax

            _jax.config.update("jax_enable_x64", True)
            _jax.config.update("jax_platforms", os.environ["JAX_PLATFORMS"])
            import jax.numpy as _jnp

            jax, jnp = _jax, _jnp
        except Exception as e:  # noqa: BLE001
            IMPORT_ERRORS["jax"] = f"{type(e).__name__}: {e}"
    for fw, err in IMPORT_ERRORS.items():
        print(f"refs.py: {fw} rows skipped: {fw} is not importable ({err})", file=sys.stderr)
    return [fw for fw in wanted if fw not in IMPORT_ERRORS]


# ---- inputs (BENCHMARKS.md; bench/large_ad_cases.hpp), row-major float64 ------------------------------

_MASK = (1 << 64) - 1
_CACHE = {}


def data(rows, cols, seed):
    """data((rows, cols), seed): element i (row-major) is ((x mod 1024) - 512)/512 with
    x = (i*6364136223846793005 + seed*1442695040888963407) mod 2^64."""
    i = np.arange(rows * cols, dtype=np.uint64)
    x = i * np.uint64(6364136223846793005) + np.uint64((seed * 1442695040888963407) & _MASK)  # wraps mod 2^64
    return ((x % np.uint64(1024)).astype(np.float64) - 512.0).reshape(rows, cols) / 512.0


def well(n, seed):
    """well(n, seed): 0.05 data((n,n), seed) with 1 + j/n added to diagonal element j."""
    v = data(n, n, seed) * 0.05
    v[np.arange(n), np.arange(n)] += 1.0 + np.arange(n, dtype=np.float64) / n
    return v


def spd(n, seed):
    """spd(n, seed) = well^T well + I, bit for bit as large_ad_cases.hpp computes it: the sum over
    the rows k of well in increasing k (no FMA), then + 1 on the diagonal; exactly symmetric."""
    key = ("spd", n, seed)
    if key not in _CACHE:
        w = well(n, seed)
        s = np.zeros((n, n))
        for k in range(n):
            s += np.multiply.outer(w[k], w[k])
        s[np.arange(n), np.arange(n)] += 1.0
        _CACHE[key] = s
    return _CACHE[key].copy()


# ---- shared checks (the tolerances of large_ad_cases.hpp) ---------------------------------------------

FD_RTOL, CROSS_RTOL, LOSS_RTOL = 1e-6, 1e-8, 1e-10


def close(a, b, rtol=1e-12):
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def fd_error(f, xs, ds, ad):
    """Best relative error of the directional derivative `ad` against fourth-order central
    differences of f along the unit-norm direction ds at xs, steps 1e-1 ... 1e-5."""
    best, best_h = math.inf, None
    for h in (1e-1, 1e-2, 1e-3, 1e-4, 1e-5):

        def at(t):
            return f(*[x + t * d for x, d in zip(xs, ds)])

        fd = (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h)
        err = abs(fd - ad) / max(abs(fd), abs(ad), 1e-300)
        if err < best:
            best, best_h = err, h
    return best, best_h


def rel_diff(x, y, sym):
    """||x - y|| / max(||x||, ||y||), on the symmetric parts when sym."""
    if x.shape != y.shape:
        return math.inf
    if sym:
        x, y = 0.5 * (x + x.T), 0.5 * (y + y.T)
    s = max(np.linalg.norm(x), np.linalg.norm(y))
    d = np.linalg.norm(x - y)
    return d / s if s > 0 else d


def num(v):
    return f"{v:.6g}"


# ---- linear algebra cases (large_ad, jvp_vjp) -------------------------------------------------------

LARGE_AD_CASES = ["matmul", "solve", "qr", "eigh", "eigvalsh", "svdvals", "lu", "cholesky", "lstsq", "eigvals",
                  "matrix_exp"]
JVP_VJP_CASES = ["qr", "eigh", "solve", "lu", "svd_s", "lstsq", "eigvals", "matrix_exp"]
SYMMETRIC = {"eigh", "eigvalsh", "cholesky"}
SEED_A, SEED_B, TANGENT_OFFSET = 1, 2, 1000


def sizes_from(env, full, quick):
    text = os.environ.get(env, "")
    vals = [int(t) for t in text.split(",") if t.strip().isdigit() and int(t) > 0]
    if vals:
        return vals
    return full if os.environ.get("TENAX_BENCH_PROFILE") == "full" else quick


def large_ad_sizes():
    return sizes_from("TENAX_LARGE_AD_SIZES", [64, 128, 256, 512, 1024], [64, 128, 256, 512])


def jvp_vjp_sizes():
    return sizes_from("TENAX_JVP_VJP_SIZES", [2, 4, 8, 256, 512, 1024], [2, 4, 8, 256, 512])


def op_of(case):
    """The linear algebra op of a jvp_vjp case, as the large_ad case name ('svd_s' = svdvals)."""
    return "svdvals" if case == "svd_s" else case


def make_inputs(case, n):
    """The case's inputs (A, and b or B when it has a second one), as large_ad_cases.hpp."""
    if case == "matmul":
        return [data(n, n, SEED_A), data(n, n, SEED_B)]
    if case in ("solve", "lstsq"):
        return [well(n, SEED_A), data(n, 1, SEED_B)]
    if case in SYMMETRIC:
        return [spd(n, SEED_A)]
    return [well(n, SEED_A)]


def make_direction(case, n):
    """The finite-difference direction of large_ad_cases.hpp: data() with the tangent seeds,
    symmetrised for the symmetric-input cases, scaled to unit Frobenius norm jointly."""
    ds = [data(n, n, SEED_A + TANGENT_OFFSET)]
    if case in SYMMETRIC:
        ds[0] = 0.5 * (ds[0] + ds[0].T)  # off-diagonal pairs averaged, the diagonal unchanged
    if case == "matmul":
        ds.append(data(n, n, SEED_B + TANGENT_OFFSET))
    elif case in ("solve", "lstsq"):
        ds.append(data(n, 1, SEED_B + TANGENT_OFFSET))
    s = math.sqrt(sum(float(np.sum(d * d)) for d in ds))
    return [d / s for d in ds]


def jvp_vjp_inputs(case, n):
    """(A, bs) of a jvp_vjp case (jvp_vjp_cases.hpp, large_ad's inputs): A = well(n, 1) (spd(n, 1)
    for eigh), and bs = [b] with b = data((n,1), 2) for solve (a constant, not differentiated), else
    []."""
    xs = make_inputs(op_of(case), n)
    return xs[0], xs[1:]


def jvp_vjp_tangent(case, n):
    """The tangent dA of the jvp_vjp rows (jvp_vjp_cases.hpp make_tangent): data((n,n), 1 + 1000),
    symmetrised for eigh (off-diagonal pairs averaged, the diagonal unchanged), scaled to unit
    Frobenius norm (b has no tangent). It is also the finite-difference direction of the checks.
    The sum of squares is exact in float64 (multiples of 2^-20, at most n^2 of them), so the order
    of summation cannot change a bit of the result."""
    dA = data(n, n, SEED_A + TANGENT_OFFSET)
    if op_of(case) in SYMMETRIC:
        dA = 0.5 * (dA + dA.T)
    return dA / math.sqrt(float(np.sum(dA * dA)))


def torch_loss(case, xs):
    """The sum loss of a case in PyTorch (xs: the input tensors; the losses of
    ref_libtorch/large_ad_torch.hpp). eigh: sum(w) + sum(V) with V in the canonical gauge (each
    column signed by its first largest-magnitude entry, the signs computed without recording)."""
    A = xs[0]
    if case == "matmul":
        return torch.matmul(A, xs[1]).sum()
    if case == "solve":
        return torch.linalg.solve(A, xs[1]).sum()
    if case == "qr":
        Q, R = torch.linalg.qr(A)
        return Q.sum() + R.sum()
    if case == "eigh":
        w, V = torch.linalg.eigh(A)
        with torch.no_grad():
            s = V.gather(0, V.abs().argmax(0, keepdim=True)).sign()
        return w.sum() + (V * s).sum()
    if case == "eigvalsh":
        return torch.linalg.eigvalsh(A).sum()
    if case in ("svdvals", "svd_s"):
        return torch.linalg.svdvals(A).sum()
    if case == "lu":
        P, L, U = torch.linalg.lu(A)
        return L.sum() + U.sum()
    if case == "cholesky":
        return torch.linalg.cholesky(A).sum()
    if case == "lstsq":
        return torch.linalg.lstsq(A, xs[1]).solution.sum()
    if case == "eigvals":
        return torch.linalg.eigvals(A).real.sum()
    if case == "matrix_exp":
        return torch.linalg.matrix_exp(A).sum()
    raise ValueError(case)


def jax_loss(case, xs):
    """The same loss in JAX (jnp.linalg, jax.scipy.linalg.lu for lu; eigh's gauge as in PyTorch:
    jnp.argmax also returns the first maximum, the signs under stop_gradient)."""
    A = xs[0]
    if case == "matmul":
        return jnp.sum(A @ xs[1])
    if case == "solve":
        return jnp.sum(jnp.linalg.solve(A, xs[1]))
    if case == "qr":
        Q, R = jnp.linalg.qr(A)
        return jnp.sum(Q) + jnp.sum(R)
    if case == "eigh":
        w, V = jnp.linalg.eigh(A)
        idx = jnp.argmax(jnp.abs(V), axis=0)
        s = jax.lax.stop_gradient(jnp.sign(V[idx, jnp.arange(V.shape[1])]))
        return jnp.sum(w) + jnp.sum(V * s)
    if case == "eigvalsh":
        return jnp.sum(jnp.linalg.eigvalsh(A))
    if case in ("svdvals", "svd_s"):
        return jnp.sum(jnp.linalg.svd(A, compute_uv=False))
    if case == "lu":
        P, L, U = jax.scipy.linalg.lu(A)
        return jnp.sum(L) + jnp.sum(U)
    if case == "cholesky":
        return jnp.sum(jnp.linalg.cholesky(A))
    if case == "lstsq":
        return jnp.sum(jnp.linalg.lstsq(A, xs[1])[0])
    if case == "eigvals":
        return jnp.sum(jnp.real(jnp.linalg.eigvals(A)))
    if case == "matrix_exp":
        return jnp.sum(jax.scipy.linalg.expm(A))
    raise ValueError(case)


class LinalgImpl:
    """One framework's loss and gradient (cotangent 1) of a large_ad case, untimed (checks)."""

    def __init__(self, fw, case, n):
        self.fw, self.case, self.n = fw, case, n
        self.xs = make_inputs(case, n)
        self._jit = {}

    # -- plain float64 results (numpy) --
    def loss(self, *xs):
        if self.fw == "pytorch":
            with torch.no_grad():
                return float(torch_loss(self.case, [torch.from_numpy(np.ascontiguousarray(x)) for x in xs]))
        f = self._jitted("loss", lambda *a: jax_loss(self.case, a))
        return float(f(*[jnp.asarray(x) for x in xs]))

    def grad(self):
        """(loss, [gradients]) at the case's inputs."""
        if self.fw == "pytorch":
            ts = [torch.from_numpy(x.copy()).requires_grad_(True) for x in self.xs]
            loss = torch_loss(self.case, ts)
            loss.backward()
            return float(loss), [t.grad.numpy().copy() for t in ts]
        f = self._jitted("vg", self.jax_value_and_grad())
        val, gs = f(*[jnp.asarray(x) for x in self.xs])
        return float(val), [np.asarray(g) for g in gs]

    def _jitted(self, key, fn):
        if key not in self._jit:
            self._jit[key] = jax.jit(fn)
        return self._jit[key]

    # -- JAX functions (jitted by the callers) --
    def jax_value_and_grad(self):
        case, k = self.case, len(self.xs)
        return jax.value_and_grad(lambda *a: jax_loss(case, a), argnums=tuple(range(k)))


class JvpVjpImpl:
    """One framework's jvp_vjp case as a function of A alone (b, for solve, a constant), the
    conventions of jvp_vjp_cases.hpp and ref_libtorch/jvp_vjp_torch.cpp:
      jvp  the loss and its directional derivative along dA. PyTorch: forward-mode AD, A made a
           dual tensor with tangent dA (make_dual), the loss, its tangent unpacked (unpack_dual), in
           a forward AD level entered outside the timed batch (scope()), A not requiring grad;
           JAX: jit((A, dA, b) -> jax.jvp(loss, (A,), (dA,))).
      vjp  the loss and its gradient, cotangent the scalar 1 (built outside). PyTorch: the loss
           with A requiring grad, then torch.autograd.grad(loss, A, 1); JAX:
           jit((A, 1, b) -> (y, pullback(1)) with (y, pullback) = jax.vjp(loss, A)).
    step(mode) returns (step, result): step() is the timed region, result() reads the last one as
    floats/numpy ((loss, tangent) or (loss, gradient))."""

    def __init__(self, fw, case, n, device=None):
        self.fw, self.case, self.n = fw, case, n
        self.device = device  # None: the CPU; else a torch.device or a jax device (gpu_linalg_ad)
        self.op = op_of(case)
        self.A, self.bs = jvp_vjp_inputs(case, n)
        self.dA = jvp_vjp_tangent(case, n)
        self._loss = None

    def scope(self, mode):
        """The context a batch of timed JVP steps runs in (PyTorch's forward AD level)."""
        if self.fw == "pytorch" and mode == "jvp":
            return torch.autograd.forward_ad.dual_level()
        return contextlib.nullcontext()

    def loss(self, A):
        """The loss at A (b constant), without derivatives (the finite differences)."""
        if self.fw == "pytorch":
            with torch.no_grad():
                xs = [torch.from_numpy(np.ascontiguousarray(x)) for x in [A, *self.bs]]
                return float(torch_loss(self.op, xs))
        if self._loss is None:
            op = self.op
            self._loss = jax.jit(lambda a, *bs: jax_loss(op, [a, *bs]))
        return float(self._loss(jnp.asarray(A), *[jnp.asarray(b) for b in self.bs]))

    def step(self, mode, each_sync=True):
        """each_sync=False (the GPU deferred rows): a device step only queues its work, and
        self.barrier() waits for everything queued."""
        op, last = self.op, {}
        self.barrier = lambda: None
        if self.fw == "pytorch":
            fwad = torch.autograd.forward_ad
            dev = self.device or torch.device("cpu")
            # A device step ends with a synchronisation (the GPU latency rows) unless deferred.
            if dev.type == "cuda":
                self.barrier = torch.cuda.synchronize
            sync = self.barrier if each_sync else (lambda: None)
            A = torch.from_numpy(self.A.copy()).to(dev)
            bs = [torch.from_numpy(b.copy()).to(dev) for b in self.bs]
            if mode == "jvp":
                dA = torch.from_numpy(self.dA.copy()).to(dev)

                def step():
                    y = torch_loss(op, [fwad.make_dual(A, dA), *bs])
                    last["out"] = fwad.unpack_dual(y)
                    sync()

                def result():
                    p, t = last["out"]
                    return float(p), (float(t) if t is not None else math.nan)

            else:
                A.requires_grad_(True)
                one = torch.ones((), dtype=torch.float64, device=dev)

                def step():
                    y = torch_loss(op, [A, *bs])
                    last["out"] = (y, torch.autograd.grad([y], [A], [one])[0])
                    sync()

                def result():
                    y, g = last["out"]
                    return float(y), g.detach().cpu().numpy().copy()

        else:
            A, bs = jnp.asarray(self.A), [jnp.asarray(b) for b in self.bs]
            if mode == "jvp":

                def fn(a, da, *bs):
                    return jax.jvp(lambda x: jax_loss(op, [x, *bs]), (a,), (da,))

                args = (A, jnp.asarray(self.dA), *bs)
            else:

                def fn(a, ct, *bs):
                    y, pull = jax.vjp(lambda x: jax_loss(op, [x, *bs]), a)
                    return y, pull(ct)[0]

                args = (A, jnp.ones(()), *bs)
            if self.device is not None:
                args = tuple(jax.device_put(a, self.device) for a in args)
            f = jax.jit(fn)
            jax.block_until_ready(f(*args))  # compile outside the timing

            def step():
                last["out"] = jax.block_until_ready(f(*args)) if each_sync else f(*args)

            # JAX runs a device's computations in dispatch order: the last one's end is the barrier.
            self.barrier = lambda: jax.block_until_ready(last["out"])

            def result():
                p, t = last["out"]
                return float(p), (float(t) if mode == "jvp" else np.asarray(t))

        return step, result

    def run(self, mode):
        """One untimed run: (loss, tangent) or (loss, gradient)."""
        step, result = self.step(mode)
        with self.scope(mode):
            step()
            return result()


# ---- rows -----------------------------------------------------------------------------------------


class Bench:
    """A row: name, framework, and prepare() -> (step, post) where step() is the timed region and
    post() (after timing) returns "" or the reason the last timed result is wrong. check() returns
    (error or "", label); it runs once, before prepare()."""

    ops = None
    runs_per_step = 1  # runs one step() times (the GPU deferred rows: K); samples are per run

    def __init__(self, name, fw):
        self.name, self.fw = name, fw

    def check(self):
        return "", ""

    def scope(self):
        """The context each batch of timed steps runs in (entered and left outside the timing)."""
        return contextlib.nullcontext()

    def prepare(self):
        raise NotImplementedError


_CHECKS = {}


def cached(key, fn):
    """fn() computed once per key; an exception is cached and raised again."""
    if key not in _CHECKS:
        try:
            _CHECKS[key] = fn()
        except Exception as e:  # noqa: BLE001
            _CHECKS[key] = e
    if isinstance(_CHECKS[key], Exception):
        raise _CHECKS[key]
    return _CHECKS[key]


def checked(key, who, fn):
    """A row check (error or "", label), computed once per key; an exception fails the check."""
    try:
        return cached(key, fn)
    except Exception as e:  # noqa: BLE001 - a failing framework call fails the row's check
        return (f"{who}: exception: {type(e).__name__}: {e}", "")


def linalg_grad_check(fw, case, n, frameworks, who):
    """Checks fw's gradient of a large_ad case at its inputs: central differences of fw's own loss
    along the unit direction, and agreement with the other framework (loss and gradients)."""

    def run():
        impl = LinalgImpl(fw, case, n)
        val, gs = impl.grad()
        if not math.isfinite(val):
            return (f"{who}: loss is not finite", "")
        ds = make_direction(case, n)
        ad = sum(float(np.sum(g * d)) for g, d in zip(gs, ds))
        err, h = fd_error(impl.loss, impl.xs, ds, ad)
        info = f"fd rel err {num(err)} (h {num(h)})"
        if not err < FD_RTOL:
            return (f"{who}: gradient fails the central-difference check: relative error {num(err)}", "")
        for other in frameworks:
            if other == fw:
                continue
            oval, ogs = cached(("grad", other, case, n), lambda: LinalgImpl(other, case, n).grad())
            if not close(val, oval, LOSS_RTOL):
                return (f"{who}: loss {num(val)} differs from {other} {num(oval)}", "")
            e = max(rel_diff(g, og, case in SYMMETRIC and i == 0) for i, (g, og) in enumerate(zip(gs, ogs)))
            info += f", vs {other} {num(e)}"
            if not e <= CROSS_RTOL:
                return (f"{who}: gradient differs from {other}'s: relative difference {num(e)}", "")
        _CHECKS[("grad", fw, case, n)] = (val, gs)
        return ("", info)

    return checked(("gradcheck", fw, case, n), who, run)


def jvp_vjp_check(fw, case, mode, n, frameworks, who):
    """The checks of jvp_vjp_cases.hpp (check_jvp, check_vjp) of fw's JVP or VJP of a case: a finite
    loss (and tangent); the tangent, or <gradient, dA>, against central differences of fw's own
    loss along dA; agreement of the loss (1e-10) and of the tangent, or gradient (symmetric parts
    for eigh), (1e-8) with the other framework."""

    def run():
        impl = JvpVjpImpl(fw, case, n)
        val, res = impl.run(mode)
        if mode == "jvp":
            ad = res
            if not (math.isfinite(val) and math.isfinite(ad)):
                return (f"{who}: loss or tangent is not finite", "")
        else:
            if not math.isfinite(val):
                return (f"{who}: loss is not finite", "")
            if res.shape != impl.A.shape:
                return (f"{who}: gradient has the wrong shape {res.shape}", "")
            ad = float(np.sum(res * impl.dA))
        err, h = fd_error(impl.loss, [impl.A], [impl.dA], ad)
        info = f"fd rel err {num(err)} (h {num(h)})"
        if not err < FD_RTOL:
            what = "tangent" if mode == "jvp" else "gradient"
            return (
                f"{who}: {what} fails the central-difference check: {'tangent' if mode == 'jvp' else '<g, dA>'} "
                f"{num(ad)}, relative error {num(err)} (limit {num(FD_RTOL)})",
                "",
            )
        for other in frameworks:
            if other == fw:
                continue
            oval, ores = cached(("jvp_vjp", other, case, mode, n), lambda: JvpVjpImpl(other, case, n).run(mode))
            if not close(val, oval, LOSS_RTOL):
                return (f"{who}: loss {val!r} differs from {other}'s {oval!r}", "")
            if mode == "jvp":
                e = abs(res - ores) / max(abs(res), abs(ores), 1e-300)
            else:
                e = rel_diff(res, ores, op_of(case) in SYMMETRIC)
            info += f", vs {other} {num(e)}"
            if not e <= CROSS_RTOL:
                what = f"tangent {num(res)} differs from {other}'s {num(ores)}" if mode == "jvp" else "gradient differs"
                return (f"{who}: {what}: relative difference {num(e)} (limit {num(CROSS_RTOL)})", "")
        _CHECKS[("jvp_vjp", fw, case, mode, n)] = (val, res)
        return ("", info)

    return checked(("jvp_vjp_check", fw, case, mode, n), who, run)


class GradRow(Bench):
    """large_ad: forward + sum loss + backward. PyTorch: clear .grad, the op, the loss, backward().
    JAX: jit(value_and_grad(loss)) compiled outside the timing; the timed region is the call and
    block_until_ready."""

    def __init__(self, name, fw, case, n, frameworks):
        super().__init__(name, fw)
        self.case, self.n, self.frameworks = case, n, frameworks

    def check(self):
        return linalg_grad_check(self.fw, self.case, self.n, self.frameworks, f"{self.fw} {self.name}")

    def prepare(self):
        case = self.case
        want_val, want_gs = _CHECKS[("grad", self.fw, case, self.n)]
        xs = make_inputs(case, self.n)
        last = {}
        if self.fw == "pytorch":
            ts = [torch.from_numpy(x.copy()).requires_grad_(True) for x in xs]

            def step():
                for t in ts:
                    t.grad = None
                loss = torch_loss(case, ts)
                loss.backward()
                last["loss"] = loss

            def post():
                return grads_equal(float(last["loss"]), [t.grad.numpy() for t in ts], want_val, want_gs)

        else:
            f = jax.jit(LinalgImpl("jax", case, self.n).jax_value_and_grad())
            args = [jnp.asarray(x) for x in xs]
            jax.block_until_ready(f(*args))  # compile outside the timing

            def step():
                last["out"] = jax.block_until_ready(f(*args))

            def post():
                val, gs = last["out"]
                return grads_equal(float(val), [np.asarray(g) for g in gs], want_val, want_gs)

        return step, post


def grads_equal(val, gs, want_val, want_gs):
    if not close(val, want_val) or any(rel_diff(g, w, False) > 1e-12 for g, w in zip(gs, want_gs)):
        return "the loss or gradient left by the timed iterations differs from the checked one"
    return ""


class JvpVjpRow(Bench):
    """jvp_vjp/<case>_<jvp|vjp>: the timed region of JvpVjpImpl.step (PyTorch's JVP batches run in
    one forward AD level, entered and left outside the timing, like jvp_vjp_torch.cpp)."""

    def __init__(self, name, fw, case, mode, n, frameworks):
        super().__init__(name, fw)
        self.case, self.mode, self.n, self.frameworks = case, mode, n, frameworks
        self.impl = None

    def check(self):
        return jvp_vjp_check(self.fw, self.case, self.mode, self.n, self.frameworks, f"{self.fw} {self.name}")

    def scope(self):
        return self.impl.scope(self.mode) if self.impl else contextlib.nullcontext()

    def prepare(self):
        want_val, want_res = _CHECKS[("jvp_vjp", self.fw, self.case, self.mode, self.n)]
        self.impl = JvpVjpImpl(self.fw, self.case, self.n)
        step, result = self.impl.step(self.mode)

        def post():
            val, res = result()
            if self.mode == "jvp":
                ok = close(val, want_val) and close(res, want_res)
            else:
                ok = close(val, want_val) and rel_diff(res, want_res, False) <= 1e-12
            what = "tangent" if self.mode == "jvp" else "gradient"
            return "" if ok else f"the loss or {what} left by the timed iterations differs from the checked one"

        return step, post


# -- gpu_linalg_ad: the jvp_vjp cases on a CUDA device (bench/gpu_linalg_ad.cpp) --


def gpu_sizes():
    return sizes_from("TENAX_GPU_SIZES", [2, 4, 8, 256, 512], [2, 4, 8, 256, 512])


def framework_device(fw):
    """(device, "") for fw's GPU rows, or (None, why not). TENAX_REFS_DEVICE=cpu runs them on the
    CPU (to try the code without a GPU; such figures are not GPU figures)."""
    cpu = os.environ.get("TENAX_REFS_DEVICE", "cuda") == "cpu"
    if fw == "pytorch":
        if cpu:
            return torch.device("cpu"), ""
        if not torch.cuda.is_available():
            return None, "no CUDA device is visible to PyTorch"
        return torch.device("cuda:0"), ""
    try:
        return jax.devices("cpu" if cpu else "gpu")[0], ""
    except RuntimeError as e:
        return None, f"no CUDA device is visible to JAX ({e})"


def gpu_deferred_runs():
    """K of the deferred rows, as bench/gpu_linalg_ad.cpp reads it (TENAX_GPU_DEFERRED, default 32)."""
    try:
        k = int(os.environ.get("TENAX_GPU_DEFERRED", "32"))
    except ValueError:
        k = 32
    return k if k > 0 else 32


class GpuRow(JvpVjpRow):
    """gpu_linalg_ad/<case>_<jvp|vjp>/f64/<n>x<n>/<fw>: jvp_vjp's timed region on the device, inputs
    uploaded outside the timing, a synchronisation at the end of each step (PyTorch:
    torch.cuda.synchronize; JAX: block_until_ready), nothing downloaded. <fw>_deferred (deferred=True):
    K = TENAX_GPU_DEFERRED steps queued without synchronising, then one barrier, the time per step
    (throughput: the reference of tenax's deferred rows). PyTorch's default linalg calls that check
    their info on the host (solve, eigh, svdvals) still synchronise inside each step: that is what
    its users get from those calls. Checked once: the framework's CPU result as
    in jvp_vjp (central differences, PyTorch vs JAX), then the device result against it (1e-8)."""

    def __init__(self, name, fw, case, mode, n, frameworks, deferred=False):
        super().__init__(name, fw, case, mode, n, frameworks)
        self.deferred = deferred

    def check(self):
        dev, why = framework_device(self.fw)
        if dev is None:
            return (f"{self.fw} {self.name}: {why}", "")
        err, info = jvp_vjp_check(self.fw, self.case, self.mode, self.n, self.frameworks, f"{self.fw} {self.name}")
        if err:
            return (err, "")
        want_val, want_res = _CHECKS[("jvp_vjp", self.fw, self.case, self.mode, self.n)]
        # One device run per (framework, case, mode, n): the latency and deferred rows share it.
        key = ("gpu", self.fw, self.case, self.mode, self.n)
        val, res = cached(key, lambda: JvpVjpImpl(self.fw, self.case, self.n, dev).run(self.mode))
        if self.mode == "jvp":
            e = abs(res - want_res) / max(abs(res), abs(want_res), 1e-300)
        else:
            e = rel_diff(res, want_res, op_of(self.case) in SYMMETRIC)
        if not (close(val, want_val, LOSS_RTOL * 100) and e <= CROSS_RTOL):
            return (f"{self.fw} {self.name}: the device result differs from the CPU's (relative {num(e)})", "")
        self.device = dev
        self.device_result = (val, res)
        return ("", f"{info}, {dev} vs cpu {num(e)}")

    def prepare(self):
        want_val, want_res = self.device_result
        self.impl = impl = JvpVjpImpl(self.fw, self.case, self.n, self.device)
        step, result = impl.step(self.mode, each_sync=not self.deferred)
        if self.deferred:
            one, k = step, gpu_deferred_runs()
            self.runs_per_step = k

            def step():
                for _ in range(k):
                    one()
                impl.barrier()

        def post():
            val, res = result()
            ok = close(val, want_val) and (
                close(res, want_res) if self.mode == "jvp" else rel_diff(res, want_res, False) <= 1e-12
            )
            return "" if ok else "the result left by the timed iterations differs from the checked one"

        return step, post


# -- overhead: chain of 100 mul/add on one-element tensors (bench/overhead_chain.hpp) --

CHAIN_OPS, CHAIN_X0, CHAIN_C = 100, 0.5, 1.01


def chain_analytic():
    y, g = CHAIN_X0, 1.0
    for i in range(CHAIN_OPS):
        if i % 2 == 0:
            y, g = y * CHAIN_C, g * CHAIN_C
        else:
            y = y + CHAIN_C
    return y, g


def run_chain(x, c):
    y = x
    for _ in range(0, CHAIN_OPS, 2):
        y = y * c
        y = y + c
    return y


class ChainRow(Bench):
    """overhead/chain100: y = x, then 50 x (y = y * c; y = y + c), x and c of shape (1,), f64.
    Recorded: PyTorch clears x.grad, runs the chain and y.backward() (x requires grad); JAX runs
    jax.vjp of the chain eagerly (op by op, no jit: JAX's closest analogue of a recorded eager chain)
    and the pullback with cotangent 1. Unrecorded: the forward chain alone (PyTorch under no_grad;
    JAX eager)."""

    ops = CHAIN_OPS

    def __init__(self, name, fw, recorded):
        super().__init__(name, fw)
        self.recorded = recorded

    def _pieces(self):
        last = {}
        if self.fw == "pytorch":
            c = torch.full((1,), CHAIN_C, dtype=torch.float64)
            x = torch.full((1,), CHAIN_X0, dtype=torch.float64)
            if self.recorded:
                x.requires_grad_(True)

                def step():
                    x.grad = None
                    y = run_chain(x, c)
                    y.backward()
                    last["y"] = y

                def result():
                    return float(last["y"]), float(x.grad), last["y"].requires_grad

            else:

                def step():
                    with torch.no_grad():
                        last["y"] = run_chain(x, c)

                def result():
                    return float(last["y"]), math.nan, last["y"].requires_grad

        else:
            c = jnp.full((1,), CHAIN_C)
            x = jnp.full((1,), CHAIN_X0)
            one = jnp.ones((1,))
            if self.recorded:

                def step():
                    y, pull = jax.vjp(lambda v: run_chain(v, c), x)
                    last["y"], last["g"] = y, pull(one)[0].block_until_ready()

                def result():
                    return float(last["y"][0]), float(last["g"][0]), True

            else:

                def step():
                    last["y"] = run_chain(x, c).block_until_ready()

                def result():
                    return float(last["y"][0]), math.nan, False

        return step, result

    def _verify(self, result):
        want_y, want_g = chain_analytic()
        y, g, tracks = result()
        if not close(y, want_y):
            return f"{self.fw}: chain value {y!r} != analytic {want_y!r}"
        if self.recorded and not close(g, want_g):
            return f"{self.fw}: gradient {g!r} != analytic product of multipliers {want_g!r}"
        if not self.recorded and tracks:
            return f"{self.fw}: unrecorded chain output tracks grad"
        return ""

    def check(self):
        step, result = self._pieces()
        step()
        err = self._verify(result)
        return err, ("" if err else ("value and gradient = analytic" if self.recorded else "value = analytic"))

    def prepare(self):
        step, result = self._pieces()
        return step, lambda: self._verify(result)


# -- mlp: SGD on mean((relu(x W + b) - t)^2) (workloads/mlp_cases.hpp) --

MLP_CASES = [("8x16->8", 8, 16, 8, 1000, 0.15588569886166584), ("64x256->64", 64, 256, 64, 100, 0.22944422082908303)]
MLP_LR = 0.01


def mlp_values(batch, din, dout):
    """x, t, W0, b0 of BENCHMARKS.md (i, j math indices; b0 of shape (dout,))."""
    i, j = np.arange(batch)[:, None], np.arange(din)[None, :]
    x = ((7 * i + 3 * j) % 17 - 8) / 8
    j = np.arange(dout)[None, :]
    t = ((5 * i + 11 * j) % 13 - 6) / 8
    i = np.arange(din)[:, None]
    W0 = ((3 * i + 5 * j) % 11 - 5) / 8 / din
    b0 = ((7 * np.arange(dout)) % 5 - 2) / 8
    return [np.ascontiguousarray(v, dtype=np.float64) for v in (x, t, W0, b0)]


class MlpRow(Bench):
    """The whole training from W0, b0, timed. PyTorch (eager, like ref_libtorch/mlp_torch.cpp):
    forward, loss, backward, then W -= lr W.grad and b -= lr b.grad under no_grad, grads reset.
    JAX: the step (value_and_grad and the update) jitted and compiled outside the timing, called
    once per step from Python; the last loss is read back (blocking). Checked: the final loss
    (the last step's, before its update) within 1e-12 relative of the reference."""

    def __init__(self, name, fw, case):
        super().__init__(name, fw)
        self.shape, self.batch, self.din, self.dout, self.steps, self.reference = case

    def _train(self):
        x, t, W0, b0 = mlp_values(self.batch, self.din, self.dout)
        steps = self.steps
        if self.fw == "pytorch":
            x, t, W0, b0 = (torch.from_numpy(v) for v in (x, t, W0, b0))

            def train():
                W = W0.clone().requires_grad_(True)
                b = b0.clone().requires_grad_(True)
                for _ in range(steps):
                    loss = (torch.relu(torch.matmul(x, W) + b) - t).pow(2).mean()
                    loss.backward()
                    with torch.no_grad():
                        W.sub_(W.grad * MLP_LR)
                        b.sub_(b.grad * MLP_LR)
                    W.grad = None
                    b.grad = None
                return loss.item()

        else:
            x, t, W0, b0 = (jnp.asarray(v) for v in (x, t, W0, b0))

            def loss_fn(W, b):
                return jnp.mean(jnp.square(jax.nn.relu(x @ W + b) - t))

            @jax.jit
            def step(W, b):
                loss, (gW, gb) = jax.value_and_grad(loss_fn, argnums=(0, 1))(W, b)
                return loss, W - gW * MLP_LR, b - gb * MLP_LR

            jax.block_until_ready(step(W0, b0))  # compile outside the timing

            def train():
                W, b = W0, b0
                for _ in range(steps):
                    loss, W, b = step(W, b)
                return float(loss)

        return train

    def _verify(self, loss):
        rel = (loss - self.reference) / self.reference
        if abs(rel) < 1e-12:
            return ""
        return f"{self.fw}: final loss {loss!r} differs from the reference {self.reference!r} (relative {rel:.3g})"

    def check(self):
        loss = self._train()()
        err = self._verify(loss)
        return err, ("" if err else f"final loss {loss!r}")

    def prepare(self):
        train = self._train()
        last = {}

        def step():
            last["loss"] = train()

        return step, lambda: self._verify(last["loss"])


# -- ops: einsum, softmax and logsumexp (bench/ops.cpp) --

OPS_N, OPS_ROWS = 64, 1000
OPS_EINSUM = {"einsum_network": ("ijk,jl,lkm->im", [(OPS_N,) * 3, (OPS_N,) * 2, (OPS_N,) * 3]),
              "einsum_bmm": ("bij,bjk->bik", [(OPS_N,) * 3, (OPS_N,) * 3])}
OPS_REDUCTIONS = ("softmax", "logsumexp")
GELU_C = 0.7978845608028654  # sqrt(2 / pi)


def gelu_ops(x, tanh):
    """The tanh GELU by the nine elementwise ops of bench/ops.cpp, in its order."""
    cube = x * x * x
    return x * 0.5 * (tanh((x + cube * 0.044715) * GELU_C) + 1.0)


def ops_einsum_inputs(case):
    """The operands of an einsum case: data() of each shape (row-major), seeds 1, 2, 3 (ops.cpp)."""
    spec, shapes = OPS_EINSUM[case]
    return spec, [data(s[0], int(np.prod(s[1:])), k + 1).reshape(s) for k, s in enumerate(shapes)]


def ops_reduction_host(case, x, w):
    """Loss and gradient in numpy over the last axis: sum(softmax(x) * w), or sum(logsumexp(x))."""
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    s = e / e.sum(axis=1, keepdims=True)
    if case == "logsumexp":
        return float(np.sum(m[:, 0] + np.log(e.sum(axis=1)))), s
    sw = (s * w).sum(axis=1, keepdims=True)
    return float(np.sum(sw)), s * (w - sw)


class OpsRow(Bench):
    """ops/<case>/f64/<shape>/{pytorch,jax}, the rows of bench/ops.cpp. einsum_network and
    einsum_bmm: the forward einsum (torch.einsum; jnp.einsum jitted, compiled outside the timing),
    checked against numpy.einsum. softmax and logsumexp: the loss (sum(softmax(x) * w), sum(logsumexp(x)),
    over the last axis of x = data((1000, 1000), 1), w = data((1000, 1000), 2)) and its gradient
    (torch.autograd.grad; jax.jit of jax.value_and_grad), checked against numpy closed forms. gelu:
    the nine elementwise ops of gelu_ops on x (PyTorch eager under no_grad, one kernel per op; JAX
    jitted, which XLA fuses), checked against numpy. mse: mean((x - t)^2) of x and t = data((1000,
    1000), 2) (PyTorch under no_grad; JAX jitted), checked against numpy's to 1e-12."""

    def __init__(self, name, fw, case):
        super().__init__(name, fw)
        self.case = case

    def _pieces(self):
        last = {}
        if self.case in OPS_EINSUM:
            spec, xs = ops_einsum_inputs(self.case)
            want = np.einsum(spec, *xs, optimize=True)
            if self.fw == "pytorch":
                ts = [torch.from_numpy(x.copy()) for x in xs]

                def step():
                    with torch.no_grad():
                        last["out"] = torch.einsum(spec, *ts)

                def read():
                    return last["out"].numpy()

            else:
                js = [jnp.asarray(x) for x in xs]
                f = jax.jit(lambda *a: jnp.einsum(spec, *a))
                jax.block_until_ready(f(*js))  # compile outside the timing

                def step():
                    last["out"] = jax.block_until_ready(f(*js))

                def read():
                    return np.asarray(last["out"])

            def verify():
                got = read()
                err = rel_diff(got.reshape(got.shape[0], -1), want.reshape(want.shape[0], -1), False)
                return "" if err <= 1e-12 else f"{self.fw}: einsum differs from numpy by {num(err)} (relative)"

            return step, verify
        if self.case == "gelu":
            x = data(OPS_ROWS, OPS_ROWS, 1)
            want = gelu_ops(x, np.tanh)
            if self.fw == "pytorch":
                tx = torch.from_numpy(x.copy())

                def step():
                    with torch.no_grad():
                        last["out"] = gelu_ops(tx, torch.tanh)

                def read():
                    return last["out"].numpy()

            else:
                jx = jnp.asarray(x)
                f = jax.jit(lambda v: gelu_ops(v, jnp.tanh))
                jax.block_until_ready(f(jx))  # compile outside the timing

                def step():
                    last["out"] = jax.block_until_ready(f(jx))

                def read():
                    return np.asarray(last["out"])

            def verify():
                err = float(np.max(np.abs(read() - want)))
                return "" if err <= 1e-12 else f"{self.fw}: gelu differs from numpy's by {num(err)} (max abs)"

            return step, verify
        if self.case == "mse":
            x, t = data(OPS_ROWS, OPS_ROWS, 1), data(OPS_ROWS, OPS_ROWS, 2)
            want = float(np.mean(np.square(x - t)))
            if self.fw == "pytorch":
                tx, tt = torch.from_numpy(x.copy()), torch.from_numpy(t.copy())

                def step():
                    with torch.no_grad():
                        last["out"] = torch.mean(torch.square(tx - tt))

            else:
                jx, jt = jnp.asarray(x), jnp.asarray(t)
                f = jax.jit(lambda a, b: jnp.mean(jnp.square(a - b)))
                jax.block_until_ready(f(jx, jt))  # compile outside the timing

                def step():
                    last["out"] = jax.block_until_ready(f(jx, jt))

            def verify():
                got = float(last["out"])
                return "" if close(got, want, 1e-12) else f"{self.fw}: mse {got!r} differs from numpy's {want!r}"

            return step, verify
        x, w = data(OPS_ROWS, OPS_ROWS, 1), data(OPS_ROWS, OPS_ROWS, 2)
        want_loss, want_g = ops_reduction_host(self.case, x, w)
        if self.fw == "pytorch":
            tx, tw = torch.from_numpy(x.copy()).requires_grad_(True), torch.from_numpy(w.copy())
            softmax = self.case == "softmax"

            def step():
                loss = (torch.softmax(tx, 1) * tw).sum() if softmax else torch.logsumexp(tx, 1).sum()
                last["out"] = (loss, torch.autograd.grad([loss], [tx])[0])

            def read():
                return float(last["out"][0]), last["out"][1].numpy()

        else:
            jx, jw = jnp.asarray(x), jnp.asarray(w)
            if self.case == "softmax":

                def loss_fn(v):
                    return jnp.sum(jax.nn.softmax(v, axis=1) * jw)

            else:

                def loss_fn(v):
                    return jnp.sum(jax.scipy.special.logsumexp(v, axis=1))

            f = jax.jit(jax.value_and_grad(loss_fn))
            jax.block_until_ready(f(jx))  # compile outside the timing

            def step():
                last["out"] = jax.block_until_ready(f(jx))

            def read():
                return float(last["out"][0]), np.asarray(last["out"][1])

        def verify():
            loss, g = read()
            if not close(loss, want_loss, 1e-10):
                return f"{self.fw}: loss {loss!r} differs from numpy's {want_loss!r}"
            err = float(np.max(np.abs(g - want_g)))
            return "" if err <= 1e-12 else f"{self.fw}: gradient differs from numpy's by {num(err)} (max abs)"

        return step, verify

    def check(self):
        def run():
            step, verify = self._pieces()
            step()
            err = verify()
            return err, ("" if err else "matches numpy")

        return checked(("ops", self.fw, self.case), f"{self.fw} {self.name}", run)

    def prepare(self):
        return self._pieces()


# -- jvp_vjp Jacobian rows (bench/jvp_vjp_jacobian.cpp) --

JAC_CASES = [("solve_map_jacrev", "64x64"), ("solve_map_jacfwd", "64x64"), ("mlp_loss_jacfwd", "16x8"),
             ("mlp_loss_hessian", "16x8")]
JAC_N = 64


def torch_func():
    """(jacrev, jacfwd, hessian) of torch.func (PyTorch >= 2.0), else of functorch (1.13)."""
    try:
        import torch.func as tf
    except ImportError:
        import functorch as tf
    return tf.jacrev, tf.jacfwd, tf.hessian


def jac_problem(case):
    """(f, x, want) in numpy terms: the function's inputs and the closed-form result, as in
    jvp_vjp_jacobian.cpp. solve_map: f(x) = solve(A, tanh(x)), A = well(64, 1), x = data((64,1), 2),
    J = A^-1 diag(1 - tanh(x)^2) (64 x 1 x 64 x 1). mlp_loss: L(W) = mean((relu(x W + b0) - t)^2) of the
    8x16->8 workload at W0: jacfwd gives dL/dW (16 x 8), hessian H (16 x 8 x 16 x 8) with
    H[i,j,k,l] = 2/N sum_b x[b,i] x[b,k] m[b,j] delta_jl (m: the relu mask, N = 64)."""
    if case.startswith("solve_map"):
        A, x = well(JAC_N, SEED_A), data(JAC_N, 1, SEED_B)
        y = np.tanh(x[:, 0])
        J = np.linalg.solve(A, np.diag(1 - y * y))
        return {"A": A}, x, J.reshape(JAC_N, 1, JAC_N, 1)
    _, batch, din, dout, _, _ = MLP_CASES[0]
    x, t, W0, b0 = mlp_values(batch, din, dout)
    Z = x @ W0 + b0
    m = (Z > 0).astype(np.float64)
    N = batch * dout
    if case == "mlp_loss_jacfwd":
        want = 2.0 / N * x.T @ ((np.maximum(Z, 0) - t) * m)
    else:
        want = np.zeros((din, dout, din, dout))
        for j in range(dout):
            want[:, j, :, j] = 2.0 / N * (x * m[:, j:j + 1]).T @ x
    return {"x": x, "t": t, "b": b0}, W0, want


class JacobianRow(Bench):
    """jvp_vjp/<case>/f64/<size>/{pytorch,jax}: the full Jacobian or Hessian of jac_problem's
    function. PyTorch: torch.func (functorch on 1.13) jacrev / jacfwd / hessian, called on the
    function each timed step (eager, as tenax's eager row); JAX: jax.jit of jax.jacrev / jacfwd /
    hessian, compiled outside the timing. Checked: the result against the closed form (1e-12
    relative, max norm) and the two frameworks against each other through it."""

    def __init__(self, name, fw, case):
        super().__init__(name, fw)
        self.case = case

    def _fn(self):
        consts, x0, want = jac_problem(self.case)
        kind = self.case.rsplit("_", 1)[1]
        if self.fw == "pytorch":
            jacrev, jacfwd, hessian = torch_func()
            T = {k: torch.from_numpy(v.copy()) for k, v in consts.items()}
            if self.case.startswith("solve_map"):

                def f(v):
                    return torch.linalg.solve(T["A"], torch.tanh(v))

            else:

                def f(W):
                    return (torch.relu(T["x"] @ W + T["b"]) - T["t"]).pow(2).mean()

            tr = {"jacrev": jacrev, "jacfwd": jacfwd, "hessian": hessian}[kind]
            x = torch.from_numpy(x0.copy())
            return (lambda: tr(f)(x)), (lambda r: r.detach().numpy()), want
        J = {k: jnp.asarray(v) for k, v in consts.items()}
        if self.case.startswith("solve_map"):

            def f(v):
                return jnp.linalg.solve(J["A"], jnp.tanh(v))

        else:

            def f(W):
                return jnp.mean(jnp.square(jax.nn.relu(J["x"] @ W + J["b"]) - J["t"]))

        tr = {"jacrev": jax.jacrev, "jacfwd": jax.jacfwd, "hessian": jax.hessian}[kind]
        g = jax.jit(tr(f))
        x = jnp.asarray(x0)
        jax.block_until_ready(g(x))  # compile outside the timing
        return (lambda: jax.block_until_ready(g(x))), (lambda r: np.asarray(r)), want

    def _verify(self, got, want):
        if got.shape != want.shape:
            return f"{self.fw} {self.name}: result of shape {got.shape}, expected {want.shape}"
        err = float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-300)
        if not err <= 1e-12:
            return f"{self.fw} {self.name}: differs from the closed form by {num(err)} (relative, max norm)"
        return ""

    def check(self):
        def run():
            step, read, want = self._fn()
            err = self._verify(read(step()), want)
            return (err, "" if err else "matches the closed form")

        return checked(("jacobian", self.fw, self.case), f"{self.fw} {self.name}", run)

    def prepare(self):
        step, read, want = self._fn()
        last = {}

        def timed():
            last["out"] = step()

        return timed, lambda: self._verify(read(last["out"]), want)


def all_rows(suites, frameworks):
    rows = []
    for fw in frameworks:
        if "large_ad" in suites:
            for case in LARGE_AD_CASES:
                for n in large_ad_sizes():
                    rows.append(GradRow(f"large_ad/{case}/f64/{n}x{n}/{fw}", fw, case, n, frameworks))
        if "jvp_vjp" in suites:
            for case in JVP_VJP_CASES:
                for n in jvp_vjp_sizes():
                    for mode in ("jvp", "vjp"):
                        name = f"jvp_vjp/{case}_{mode}/f64/{n}x{n}/{fw}"
                        rows.append(JvpVjpRow(name, fw, case, mode, n, frameworks))
            for case, size in JAC_CASES:
                rows.append(JacobianRow(f"jvp_vjp/{case}/f64/{size}/{fw}", fw, case))
        if "overhead" in suites:
            for recorded in (True, False):
                mode = f"{fw}_{'recorded' if recorded else 'unrecorded'}"
                rows.append(ChainRow(f"overhead/chain100/f64/1/{mode}", fw, recorded))
        if "mlp" in suites:
            for case in MLP_CASES:
                rows.append(MlpRow(f"mlp/train/f64/{case[0]}/{fw}", fw, case))
        if "ops" in suites:
            for case in OPS_EINSUM:
                rows.append(OpsRow(f"ops/{case}/f64/{OPS_N}x{OPS_N}x{OPS_N}/{fw}", fw, case))
            for case in OPS_REDUCTIONS + ("gelu", "mse"):
                rows.append(OpsRow(f"ops/{case}/f64/{OPS_ROWS}x{OPS_ROWS}/{fw}", fw, case))
        if "gpu_linalg_ad" in suites:
            for case in JVP_VJP_CASES:
                for n in gpu_sizes():
                    for mode in ("jvp", "vjp"):
                        name = f"gpu_linalg_ad/{case}_{mode}/f64/{n}x{n}/{fw}"
                        rows.append(GpuRow(name, fw, case, mode, n, frameworks))
                        rows.append(GpuRow(name + "_deferred", fw, case, mode, n, frameworks, deferred=True))
    return rows


# ---- timing and output ----------------------------------------------------------------------------


def measure(step, iters):
    """Wall and process CPU seconds of `iters` calls of step."""
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(iters):
        step()
    return time.perf_counter() - t0, time.process_time() - c0


def estimate_iterations(step, min_time):
    """Iterations per repetition, found like Google Benchmark does: grow the count until one
    batch runs for at least min_time (this is also the row's warm-up)."""
    iters = 1
    while True:
        real, _ = measure(step, iters)
        if real >= min_time or iters >= 10**9:
            return iters
        mult = min_time * 1.4 / max(real, 1e-9) if real / min_time > 0.1 else 10.0
        iters = max(iters + 1, int(math.ceil(min(mult, 10.0) * iters)))


def entry(name, rep, reps, iters, real, cpu, extra=None):
    e = {
        "name": name,
        "family_index": 0,
        "per_family_instance_index": 0,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": reps,
        "repetition_index": rep,
        "threads": 1,
        "iterations": iters,
        "real_time": real,
        "cpu_time": cpu,
        "time_unit": "us",
    }
    e.update(extra or {})
    return e


def context(frameworks):
    ctx = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": "bench/ref_python/refs.py",
        "num_cpus": os.cpu_count(),
        "mhz_per_cpu": 0,
        "cpu_scaling_enabled": False,
        "library_build_type": "release",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "threads": "1 (OPENBLAS/OMP/MKL_NUM_THREADS=1, torch.set_num_threads(1), XLA_FLAGS="
        + os.environ["XLA_FLAGS"]
        + ")",
        "python_refs": ", ".join(frameworks) or "none",
    }
    try:
        ctx["load_avg"] = list(os.getloadavg())
    except OSError:
        pass
    try:
        ctx["cpu_affinity"] = sorted(os.sched_getaffinity(0))
    except AttributeError:
        pass
    if torch is not None:
        ctx["pytorch"] = f"{torch.__version__} ({torch.get_num_threads()} intra-op thread(s))"
    if jax is not None:
        ctx["jax"] = f"{jax.__version__} (jaxlib {getattr(jax.lib, '__version__', '?')}, {jax.default_backend()})"
    for fw, err in IMPORT_ERRORS.items():
        ctx[f"{fw}_skipped"] = err
    ctx["large_ad"] = "sizes " + " ".join(map(str, large_ad_sizes()))
    ctx["jvp_vjp"] = "sizes " + " ".join(map(str, jvp_vjp_sizes()))
    return ctx


def parse_min_time(text):
    return float(text[:-1] if text.endswith("s") else text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="the JSON output file (Google Benchmark format); default: stdout only")
    ap.add_argument(
        "--suite",
        action="append",
        default=[],
        help=f"suites to run (repeatable or comma list; {', '.join(SUITES)}; default all)",
    )
    ap.add_argument("--frameworks", default=",".join(FRAMEWORKS), help="comma list of pytorch, jax (default both)")
    ap.add_argument("--filter", default=".", help="regex searched in the row names (like --benchmark_filter)")
    ap.add_argument("--repetitions", type=int, default=5, help="repetitions per row (default 5)")
    ap.add_argument("--min-time", type=parse_min_time, default=0.1, help="minimum seconds per repetition (default 0.1)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the shuffled repetition order")
    ap.add_argument("--no-interleave", action="store_true", help="run each row's repetitions back to back")
    ap.add_argument("--list", action="store_true", help="list the rows and exit")
    args = ap.parse_args(argv)

    suites = [s for arg in args.suite for s in arg.split(",") if s] or SUITES
    for s in suites:
        if s not in SUITES:
            ap.error(f"unknown suite '{s}' (known: {', '.join(SUITES)})")
    wanted = [f for f in args.frameworks.split(",") if f]
    for f in wanted:
        if f not in FRAMEWORKS:
            ap.error(f"unknown framework '{f}' (known: {', '.join(FRAMEWORKS)})")
    pattern = re.compile(args.filter)
    frameworks = import_frameworks(wanted)
    rows = [r for r in all_rows(suites, frameworks) if pattern.search(r.name)]
    if args.list:
        print("\n".join(r.name for r in rows))
        return 0

    out = {"context": context(frameworks), "benchmarks": []}
    reps = args.repetitions
    ready, failed = [], 0
    for r in rows:
        err, label = r.check()
        step = post = None
        if not err:
            try:
                step, post = r.prepare()
                with r.scope():
                    step()
                    r.iters = estimate_iterations(step, args.min_time)
            except Exception as e:  # noqa: BLE001
                err = f"{r.fw}: exception: {type(e).__name__}: {e}"
        if err:
            failed += 1
            print(f"{r.name:<52} ERROR: {err}", flush=True)
            out["benchmarks"].append(dict(entry(r.name, 0, reps, 0, 0.0, 0.0), error_occurred=True, error_message=err))
            continue
        r.step, r.post, r.label, r.samples = step, post, label, []
        ready.append(r)
    order = [(r, k) for k in range(reps) for r in ready]
    if not args.no_interleave:
        random.Random(args.seed).shuffle(order)
    else:
        order.sort(key=lambda p: ready.index(p[0]))
    for r, _ in order:
        with r.scope():
            real, cpu = measure(r.step, r.iters)
        r.samples.append((real / (r.iters * r.runs_per_step), cpu / (r.iters * r.runs_per_step)))
    for r in ready:
        err = r.post()
        extra = {"label": r.label} if r.label else {}
        if r.ops:
            extra["ops"] = r.ops
        if err:
            failed += 1
            print(f"{r.name:<52} ERROR: {err}", flush=True)
            out["benchmarks"].append(dict(entry(r.name, 0, reps, 0, 0.0, 0.0), error_occurred=True, error_message=err))
            continue
        for k, (real, cpu) in enumerate(r.samples):
            e = entry(r.name, k, reps, r.iters, real * 1e6, cpu * 1e6, extra)
            if r.ops:
                e["per_op"] = real / r.ops
            out["benchmarks"].append(e)
        reals, cpus = [s[0] * 1e6 for s in r.samples], [s[1] * 1e6 for s in r.samples]
        for agg, fn in (("median", statistics.median), ("iqr", iqr)):
            out["benchmarks"].append(
                dict(
                    entry(r.name + "_" + agg, 0, reps, r.iters, fn(reals), fn(cpus), extra),
                    run_name=r.name,
                    run_type="aggregate",
                    aggregate_name=agg,
                    aggregate_unit="time",
                )
            )
        per = f" ({statistics.median(reals) / r.ops * 1e3:.1f} ns/op)" if r.ops else ""
        print(
            f"{r.name:<52} median {statistics.median(reals):12.2f} us  CPU {statistics.median(cpus):12.2f} us"
            f"  IQR {iqr(reals):9.2f} us  x{r.iters}{per}  {r.label}",
            flush=True,
        )
    text = json.dumps(out, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 3 if failed else 0


def iqr(xs):
    if len(xs) < 2:
        return 0.0
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[2] - q[0]


if __name__ == "__main__":
    sys.exit(main())
