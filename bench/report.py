#!/usr/bin/env python3
"""Summarise Google Benchmark JSON outputs of the tenax bench drivers into a markdown table.

Standard library only (json, statistics), so it runs without pip installs; the PNG charts are drawn
only when matplotlib is importable (it is in the Python references' venv that scripts/bench.sh
makes; bench.sh then runs this script with it): per suite, chart_<suite>.png (times, log axis) and
chart_ratio_<suite>.png (tenax / best reference and tenax / floor per row, linear axis, a line at
1). Every sample (one repetition of one row in one file) is also written to samples.csv and
samples.json.

    python3 bench/report.py --out results/DATE [--command CMD] [--tenax-commit C] [--print headline]
        FILE.json [FILE.json ...]

summary.md starts with the headline table (summarise_headline): per suite and tenax mode, the
geometric mean and the worst row of tenax / best reference (the fastest of libtorch, PyTorch and
JAX on each row) and of tenax / floor, and a line naming every version (tenax commit, provider,
libtorch, PyTorch, JAX, numpy, Python); the per-suite tables follow.

The Python reference driver (bench/ref_python/refs.py) writes the same JSON format; its rows have
the modes pytorch and jax (large_ad, jvp_vjp, mlp) or pytorch_<mode> and jax_<mode> (overhead).

Exit status: 0, or 3 when a row reported an error (a failed correctness check), 1 on no rows.

The large_ad and jvp_vjp suites get a table each (see summarise_ad_table): their rows
<suite>/<case>/f64/<n>x<n>/<mode> with mode eager, trace, floor (the bare provider calls), libtorch,
pytorch and jax (and primal, large_ad) are put side by side per case and size, with the ratios of
the tenax rows to the floor and to each reference. The mlp and ops suites likewise (summarise_mlp,
summarise_ops).

Rows are named <suite>/<case>/<dtype>/<shape>/<mode>. A row whose mode is <ref>_<mode> (ref one of
REFERENCES) is the reference of the row <suite>/<case>/<dtype>/<shape>/<mode>: the table puts them
side by side with the ratio ours / reference (lower is better). Every repetition of every input
file (several processes, run interleaved by scripts/bench.sh) is pooled: medians and IQRs are over
the pooled repetition samples; "runs" shows the spread of the per-process medians.
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import statistics
import sys

REFERENCES = ["libtorch", "pytorch", "jax"]  # mode prefixes of reference rows, e.g. libtorch_recorded

# Targets from shared BENCHMARKS.md: (suite, case regex, mode) -> (quantity, limit, text).
# quantity "per_op" compares the median time per op (seconds); "ratio" the ratio to the reference.
TARGETS = [
    ("overhead", r"chain\d+", "recorded", "per_op", 0.5e-6, "<= 0.5 us per recorded op"),
]

# Suites with a table of their own (their rows are left out of the generic table).
LARGE_AD = "large_ad"
JVP_VJP = "jvp_vjp"
THREADS = "threads"
GPU = "gpu_linalg_ad"
PER_CASE = (LARGE_AD, JVP_VJP)  # suites with the per-case table of summarise_ad_table
MLP = "mlp"
OPS = "ops"
SUITE_ORDER = ["overhead", LARGE_AD, JVP_VJP, MLP, OPS, THREADS, GPU]  # the headline table's order
# mlp targets (BENCHMARKS.md): compiled / libtorch per shape, and eager / libtorch.
MLP_COMPILED_TARGET = {"8x16->8": 0.1, "64x256->64": 0.8}
MLP_EAGER_TARGET = 0.5
LARGE_AD_CASES = ["matmul", "solve", "qr", "eigh", "eigvalsh", "svdvals", "lu", "cholesky", "lstsq", "eigvals",
                  "matrix_exp"]
LARGE_AD_FLOOR_TARGET = 1.10  # BENCHMARKS.md: every AD row <= 1.10 x its provider floor, below the reference
JVP_VJP_CASES = [
    f"{c}_{m}" for c in ["qr", "eigh", "solve", "lu", "svd_s", "lstsq", "eigvals", "matrix_exp"] for m in ["jvp", "vjp"]
] + ["solve_map_jacrev", "solve_map_jacfwd", "mlp_loss_jacfwd", "mlp_loss_hessian"]
JAC_FLOOR_TARGET = 1.5  # Jacobian rows: eager and trace <= 1.5 x the floor of n single calls, <= torch.func
JVP_VJP_FLOOR_TARGET = 1.10  # at n >= 256: eager and trace <= 1.10 x floor, trace <= eager
# Provider routines counted per iteration by the large_ad rows (counters of the same names).
ROUTINES = ["getrf", "getrs", "potrf", "geqrf", "orgqr", "syevd", "gesdd", "geev", "gemm", "trsm"]

SUFFIX = re.compile(r"/(real_time|manual_time|repeats:\d+|min_time:[\d.]+s?|iterations:\d+|threads:\d+)$")
UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def base_name(run_name):
    prev = None
    while prev != run_name:
        prev, run_name = run_name, SUFFIX.sub("", run_name)
    return run_name


def fmt_time(sec):
    if sec is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(sec) >= scale or unit == "ns":
            v = sec / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return "-"


def quartiles(xs):
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")  # linear interpolation, like numpy
    return q[0], q[2]


class Row:
    def __init__(self, name):
        self.name = name
        parts = name.split("/")
        self.suite = parts[0]
        self.mode = parts[-1] if len(parts) >= 5 else ""
        self.key = "/".join(parts[1:-1]) if len(parts) >= 5 else "/".join(parts[1:])
        self.real = []  # wall-clock seconds per iteration, every repetition of every file
        self.cpu = []  # CPU seconds per iteration, likewise
        self.ops = None  # ops per iteration (counter `ops`), when the row counts them
        self.run_medians = []  # median wall-clock time per op (or iteration) of each file
        self.errors = set()
        self.calls = {}  # provider calls per iteration (counters named after ROUTINES), when counted
        self.label = ""  # the row's label (large_ad: the measured check errors)

    def ref_of(self):
        """(reference name, mode of the row it is the reference of) or None. A mode that is a
        reference's name alone (large_ad's libtorch, pytorch, jax) gives (name, "")."""
        for ref in REFERENCES:
            if self.mode == ref:
                return ref, ""
            if self.mode.startswith(ref + "_"):
                return ref, self.mode[len(ref) + 1 :]
        return None

    def unit(self):
        return "/op" if self.ops else "/iter"

    def stat(self, clock="real"):
        """Median and IQR of the time per op (per iteration when the row counts no ops)."""
        xs = [x / (self.ops or 1) for x in (self.real if clock == "real" else self.cpu)]
        if not xs:
            return None
        q1, q3 = quartiles(xs)
        return {"median": statistics.median(xs), "iqr": q3 - q1, "n": len(xs)}


def load(files):
    """(rows by name, [(path, context)], samples): samples are dicts, one per repetition entry
    (time per iteration in seconds), in file order."""
    rows, contexts, samples = {}, [], []
    for path in files:
        with open(path) as f:
            data = json.load(f)
        if not isinstance(data, dict) or "benchmarks" not in data:
            print(f"report.py: skipping {path}: not a Google Benchmark JSON output", file=sys.stderr)
            continue
        contexts.append((path, data.get("context", {})))
        per_file = {}
        for b in data.get("benchmarks", []):
            name = base_name(b.get("run_name", b["name"]))
            row = rows.setdefault(name, Row(name))
            if b.get("error_occurred"):
                row.errors.add(b.get("error_message", "error"))
                continue
            if b.get("run_type", "iteration") != "iteration":
                continue  # aggregates are recomputed from the pooled repetitions
            scale = UNIT[b.get("time_unit", "ns")]
            row.real.append(b["real_time"] * scale)
            row.cpu.append(b["cpu_time"] * scale)
            if b.get("ops"):
                row.ops = b["ops"]
            for r in ROUTINES:
                if r in b:
                    row.calls[r] = b[r]
            if b.get("label"):
                row.label = b["label"]
            per_file.setdefault(name, []).append(b["real_time"] * scale)
            samples.append({"file": os.path.basename(path), "name": name, "suite": row.suite, "key": row.key,
                            "mode": row.mode, "repetition_index": b.get("repetition_index", 0),
                            "iterations": b.get("iterations"), "real_time_s": b["real_time"] * scale,
                            "cpu_time_s": b["cpu_time"] * scale, "ops": b.get("ops")})
        for name, ts in per_file.items():
            rows[name].run_medians.append(statistics.median(ts) / (rows[name].ops or 1))
    return rows, contexts, samples


def write_samples(samples, out):
    """samples.csv and samples.json in out: every repetition of every row of every input file."""
    import csv

    fields = ["file", "name", "suite", "key", "mode", "repetition_index", "iterations", "real_time_s", "cpu_time_s",
              "ops"]
    with open(os.path.join(out, "samples.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(samples)
    with open(os.path.join(out, "samples.json"), "w") as f:
        json.dump(samples, f, indent=1)
        f.write("\n")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def target_for(row):
    for suite, case_re, mode, qty, limit, text in TARGETS:
        if row.suite == suite and row.mode == mode and re.fullmatch(case_re, row.key.split("/")[0]):
            return qty, limit, text
    return None


def cell(row, clock):
    if row is None:
        return "-"
    if row.errors:
        return "ERROR: " + "; ".join(sorted(row.errors)) if clock == "real" else "(error)"
    st = row.stat(clock)
    if not st:
        return "-"
    if clock == "cpu":
        return f"{fmt_time(st['median'])}{row.unit()}"
    return f"{fmt_time(st['median'])}{row.unit()} (IQR {fmt_time(st['iqr'])}, n={st['n']})"


def ratio(row, ref, clock):
    if row is None or ref is None or row.errors or ref.errors:
        return None
    a, b = row.stat(clock), ref.stat(clock)
    return a["median"] / b["median"] if a and b else None


def summarise(rows):
    """Table lines (markdown) and chart data. Times are per op where the row counts its ops
    (counter `ops`), else per iteration; wall-clock (median, IQR) and CPU time (median)."""
    lines, chart = [], []
    rows = {k: r for k, r in rows.items() if r.suite not in PER_CASE + (MLP, OPS, THREADS, GPU)}
    if not rows:
        return lines, chart
    ours = [r for r in rows.values() if r.ref_of() is None]
    refs = {}
    for r in rows.values():
        rm = r.ref_of()
        if rm:
            refs[(r.suite, r.key, rm[1], rm[0])] = r
    ref_names = [ref for ref in REFERENCES if any(k[3] == ref for k in refs)]
    head = ["row", "tenax wall", "tenax CPU"]
    for ref in ref_names:
        head += [f"{ref} wall", f"{ref} CPU", f"tenax/{ref} wall", f"tenax/{ref} CPU"]
    head += ["target", "per-run wall medians"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for r in sorted(ours, key=lambda r: (r.suite, r.key, r.mode)):
        cells = [f"`{r.name}`", cell(r, "real"), cell(r, "cpu")]
        s = r.stat("real") if not r.errors else None
        entry = {"name": r.name, "ours": s["median"] if s else None, "refs": {}}
        ratios = {}
        for ref in ref_names:
            rr = refs.get((r.suite, r.key, r.mode, ref))
            cells += [cell(rr, "real"), cell(rr, "cpu")]
            for clock in ("real", "cpu"):
                q = ratio(r, rr, clock)
                ratios[(ref, clock)] = q
                cells.append(f"**{q:.3f}**" if q is not None and clock == "real" else (f"{q:.3f}" if q else "-"))
            if rr and not rr.errors and rr.stat("real"):
                entry["refs"][ref] = rr.stat("real")["median"]
        tgt = target_for(r)
        if tgt and s:
            qty, limit, text = tgt
            parts = []
            for clock in ("real", "cpu"):
                if qty == "per_op":
                    val = r.stat(clock)["median"] if r.ops else None
                else:
                    val = ratios.get((ref_names[0], clock)) if ref_names else None
                if val is not None:
                    shown = fmt_time(val) if qty == "per_op" else f"{val:.3f}"
                    parts.append(f"{'wall' if clock == 'real' else 'CPU'} {'met' if val <= limit else 'NOT met'} ({shown})")
            cells.append(f"{text}: " + ", ".join(parts))
        else:
            cells.append("-")
        cells.append(", ".join(fmt_time(m) for m in r.run_medians) if r.run_medians else "-")
        lines.append("| " + " | ".join(cells) + " |")
        chart.append(entry)
    # Reference rows without a tenax counterpart still get listed.
    for (suite, key, mode, ref), rr in sorted(refs.items()):
        if f"{suite}/{key}/{mode}" not in rows:
            lines.append(f"| `{rr.name}` (no tenax row) | {cell(rr, 'real')} | {cell(rr, 'cpu')} |")
    return lines, chart


def median_cell(row):
    """'median (IQR x)' of the wall-clock time per iteration, or the error, or '-'."""
    if row is None:
        return "-"
    if row.errors:
        return "ERROR: " + "; ".join(sorted(row.errors))
    st = row.stat("real")
    return f"{fmt_time(st['median'])} (IQR {fmt_time(st['iqr'])})" if st else "-"


def ratio_cell(row, ref):
    q, qc = ratio(row, ref, "real"), ratio(row, ref, "cpu")
    if q is None:
        return "-"
    return f"**{q:.2f}** (CPU {qc:.2f})" if qc is not None else f"**{q:.2f}**"


def calls_text(row):
    if row is None or not row.calls:
        return "-"
    return " ".join(f"{r} {row.calls[r]:g}" for r in ROUTINES if row.calls.get(r))


def summarise_mlp(rows):
    """The mlp table: per shape, eager, compiled and libtorch training times and the ratios to
    libtorch, with the BENCHMARKS.md targets."""
    by_key = {}
    for r in rows.values():
        if r.suite == MLP:
            by_key.setdefault(r.key, {})[r.mode] = r
    if not by_key:
        return []
    head = ["row", "tenax eager", "tenax compiled", "floor", "libtorch", "pytorch", "jax", "eager/libtorch",
            "compiled/libtorch", "compiled/floor", "eager/pytorch", "compiled/jax", "target"]
    lines = [f"### {MLP}", "",
             "Whole training runs (1000 steps at 8x16->8, 100 at 64x256->64), wall-clock median (IQR); floor = "
             "the same training on raw buffers (2 gemm calls per step plus loops); pytorch = PyTorch eager "
             "from Python, jax = the step jitted, called from Python (bench/ref_python/refs.py); "
             "ratios wall (CPU), lower is better. Targets: compiled <= 0.1 x libtorch at 8x16->8 and "
             "<= 0.8 x at 64x256->64; eager <= 0.5 x libtorch.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(by_key):
        m = by_key[key]
        eager, comp, floor, torch, pyt, jx = (
            m.get(x) for x in ("eager", "compiled", "floor", "libtorch", "pytorch", "jax"))
        shape = key.split("/")[2] if len(key.split("/")) > 2 else ""
        qe, qc = ratio(eager, torch, "real"), ratio(comp, torch, "real")
        tgt = []
        if qc is not None and shape in MLP_COMPILED_TARGET:
            lim = MLP_COMPILED_TARGET[shape]
            tgt.append(f"compiled <= {lim} x {'met' if qc <= lim else 'NOT met'}")
        if qe is not None:
            tgt.append(f"eager <= {MLP_EAGER_TARGET} x {'met' if qe <= MLP_EAGER_TARGET else 'NOT met'}")
        lines.append("| " + " | ".join([f"`{MLP}/{key}`", median_cell(eager), median_cell(comp), median_cell(floor),
                                        median_cell(torch), median_cell(pyt), median_cell(jx),
                                        ratio_cell(eager, torch), ratio_cell(comp, torch), ratio_cell(comp, floor),
                                        ratio_cell(eager, pyt), ratio_cell(comp, jx),
                                        ", ".join(tgt) if tgt else "-"]) + " |")
    return lines


def summarise_ops(rows):
    """The ops table: per case and shape, tenax eager and compiled beside PyTorch (eager) and JAX
    (jitted), with the ratios eager/pytorch and compiled/jax."""
    by_key = {}
    for r in rows.values():
        if r.suite == OPS:
            by_key.setdefault(r.key, {})[r.mode] = r
    if not by_key:
        return []
    head = ["row", "tenax eager", "tenax compiled", "floor", "pytorch", "jax", "compiled/floor", "eager/pytorch",
            "compiled/pytorch", "compiled/jax"]
    lines = [f"### {OPS}", "",
             "Single ops (bench/ops.cpp), wall-clock median (IQR): einsum forward; softmax and logsumexp "
             "forward + backward of a sum loss; gelu and mse (mean((x - t)^2)) forward. floor = the bare "
             "provider calls of the same work (einsum_bmm: its 64 gemm calls) or one hand loop (gelu, mse), "
             "pytorch = PyTorch eager from Python, jax = jax.jit from Python "
             "(bench/ref_python/refs.py); ratios wall (CPU), lower is better.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(by_key):
        m = by_key[key]
        eager, comp, floor, pyt, jx = (m.get(x) for x in ("eager", "compiled", "floor", "pytorch", "jax"))
        lines.append("| " + " | ".join([f"`{OPS}/{key}`", median_cell(eager), median_cell(comp), median_cell(floor),
                                        median_cell(pyt), median_cell(jx), ratio_cell(comp, floor),
                                        ratio_cell(eager, pyt), ratio_cell(comp, pyt), ratio_cell(comp, jx)]) + " |")
    return lines


def summarise_threads(rows):
    """The threads table: per case and shape, the 1-thread and 2-thread rows (tenax's pool and the
    provider) and the speed-up t1/t2 (higher is better)."""
    by_key = {}
    for r in rows.values():
        if r.suite == THREADS:
            by_key.setdefault(r.key, {})[r.mode] = r
    if not by_key:
        return []
    lines = [f"### {THREADS}", "",
             "tenax::set_num_threads(k) outside the timing, run on two CPUs; wall-clock median (IQR). "
             "speed-up = t1 / t2 (higher is better).", "",
             "| row | t1 | t2 | speed-up t1/t2 |", "|---|---|---|---|"]
    for key in sorted(by_key):
        t1, t2 = by_key[key].get("t1"), by_key[key].get("t2")
        q = ratio(t1, t2, "real")
        lines.append(f"| `{THREADS}/{key}` | {median_cell(t1)} | {median_cell(t2)} | "
                     f"{'-' if q is None else f'**{q:.2f}**'} |")
    return lines


def summarise_gpu(rows):
    """The gpu_linalg_ad table: per case and size, tenax's eager and trace latency rows and its
    deferred (throughput, per run) row, PyTorch and JAX on the same GPU (latency rows and deferred
    rows), and tenax / the best reference of the same kind (issue target: every row at or below the
    best reference)."""
    by_key = {}
    for r in rows.values():
        if r.suite == GPU:
            by_key.setdefault(r.key, {})[r.mode] = r
    if not by_key:
        return []

    def size(key):
        m = re.search(r"/(\d+)x\d+$", key)
        return (key.split("/")[0], int(m.group(1)) if m else 0)

    lines = [f"### {GPU}", "",
             "The jvp_vjp cases on the GPU, inputs on the device, nothing downloaded in the timed region. "
             "eager and trace: one call and a device synchronisation (latency); deferred: K prepared runs "
             "queued, one barrier, time per run (throughput). PyTorch and JAX: bench/ref_python/refs.py on "
             "the same GPU, a synchronisation per step (latency) and, in the deferred columns, K steps queued "
             "and one barrier (PyTorch: torch.cuda.synchronize, though its solve, eigh and svdvals check their "
             "info on the host inside each step; JAX: block_until_ready on the last result). "
             "Wall-clock medians; the latency rows are compared with the best latency reference, the deferred "
             "row with the best deferred reference, never across (target: <= 1 on every row).", "",
             "| row | eager | trace | deferred | PyTorch | JAX | PyTorch deferred | JAX deferred | eager/best "
             "| trace/best | deferred/best deferred |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]

    def best(*rs):
        refs = [x for x in map(med, rs) if x is not None]
        return min(refs) if refs else None

    for key in sorted(by_key, key=size):
        m = by_key[key]
        latency = best(m.get("pytorch"), m.get("jax"))
        throughput = best(m.get("pytorch_deferred"), m.get("jax_deferred"))
        cells = [f"`{GPU}/{key}`"] + [median_cell(m.get(mode)) for mode in ("eager", "trace", "deferred", "pytorch",
                                                                            "jax", "pytorch_deferred",
                                                                            "jax_deferred")]
        for mode, ref in (("eager", latency), ("trace", latency), ("deferred", throughput)):
            v = med(m.get(mode))
            cells.append(f"**{v / ref:.2f}**" if v is not None and ref else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


AD_TABLE_INTRO = {
    LARGE_AD: "eager = forward + loss + backward with the tape; "
    "trace = the same traced and compiled outside the timing, one prepared run timed; "
    "floor = the bare provider calls of the same computation; primal = the op alone; pytorch, jax = "
    "the same from Python (bench/ref_python/refs.py: autograd; jit(value_and_grad) compiled outside "
    "the timing). "
    "Targets (BENCHMARKS.md): eager <= 1.10 x floor and < libtorch; at n <= 8 eager <= 0.2 x and "
    "trace <= 0.1 x libtorch; at n >= 256 trace <= eager and <= 1.05 x floor.",
    JVP_VJP: "eager = tenax::jvp (forward mode) or tenax::vjp + pullback of the cotangent 1 (reverse mode); "
    "trace = the same traced and compiled outside the timing, one prepared run timed; "
    "floor = the bare provider calls of the same computation (factorization + the rule's calls); "
    "libtorch = forward-mode dual tensors (jvp) or autograd::grad (vjp); pytorch, jax = the same from "
    "Python (bench/ref_python/refs.py: forward-mode duals / autograd; jit(jvp), jit(vjp)). "
    "Targets: at n <= 8 eager <= 0.2 x and trace <= 0.1 x libtorch; at n >= 256 trace <= eager, "
    f"eager and trace <= {JVP_VJP_FLOOR_TARGET:.2f} x floor. "
    "Jacobian rows (*_jacrev, *_jacfwd, *_hessian: bench/jvp_vjp_jacobian.cpp): floor = n single VJP, JVP or "
    "HVP calls at their floors; pytorch = torch.func (functorch on 1.13), jax = jit(jacrev/jacfwd/hessian); "
    f"targets eager and trace <= {JAC_FLOOR_TARGET:.1f} x floor and eager <= pytorch.",
}


def ad_targets(suite, n, eager_floor, eager_torch, trace_floor, trace_torch, trace_eager, case="", eager_pyt=None):
    """The BENCHMARKS.md targets of a large_ad / jvp_vjp row at size n, as 'what met|NOT met' texts."""
    tgt = []

    def met(ok):
        return "met" if ok else "NOT met"

    if case.endswith(("_jacrev", "_jacfwd", "_hessian")):
        if eager_floor is not None:
            tgt.append(f"eager <= {JAC_FLOOR_TARGET:.1f} x floor {met(eager_floor <= JAC_FLOOR_TARGET)}")
        if trace_floor is not None:
            tgt.append(f"trace <= {JAC_FLOOR_TARGET:.1f} x floor {met(trace_floor <= JAC_FLOOR_TARGET)}")
        if eager_pyt is not None:
            tgt.append(f"eager <= pytorch {met(eager_pyt <= 1)}")
        return tgt
    if n <= 8:
        if eager_torch is not None:
            tgt.append(f"eager <= 0.2 x libtorch {met(eager_torch <= 0.2)}")
        if trace_torch is not None:
            tgt.append(f"trace <= 0.1 x libtorch {met(trace_torch <= 0.1)}")
    elif suite == JVP_VJP:
        if n >= 256 and trace_eager is not None:
            tgt.append(f"trace <= eager {met(trace_eager <= 1)}")
        if eager_floor is not None:
            tgt.append(f"eager <= {JVP_VJP_FLOOR_TARGET:.2f} x floor {met(eager_floor <= JVP_VJP_FLOOR_TARGET)}")
        if trace_floor is not None:
            tgt.append(f"trace <= {JVP_VJP_FLOOR_TARGET:.2f} x floor {met(trace_floor <= JVP_VJP_FLOOR_TARGET)}")
    else:
        if eager_floor is not None:
            tgt.append(f"eager <= {LARGE_AD_FLOOR_TARGET:.2f} x floor {met(eager_floor <= LARGE_AD_FLOOR_TARGET)}")
        if eager_torch is not None:
            tgt.append(f"eager < libtorch {met(eager_torch < 1)}")
        if n >= 256 and trace_eager is not None:
            tgt.append(f"trace <= eager {met(trace_eager <= 1)}")
        if n >= 256 and trace_floor is not None:
            tgt.append(f"trace <= 1.05 x floor {met(trace_floor <= 1.05)}")
    return tgt


def summarise_ad_table(rows, suite):
    """The table of an AD suite (large_ad, jvp_vjp; markdown lines): per case and size, the eager
    row, the trace row, the provider floor, the libtorch reference and the ratios to floor and
    libtorch, the PyTorch and JAX rows and eager/pytorch, eager/jax, trace/jax (wall-clock medians;
    CPU-time ratios in parentheses), then the primal row (large_ad),
    the provider calls per iteration of the eager row and of the floor (they should be equal), the
    targets and the eager row's check."""
    by_key = {}
    for r in rows.values():
        if r.suite == suite:
            by_key.setdefault(r.key, {})[r.mode] = r
    if not by_key:
        return []
    cases = LARGE_AD_CASES if suite == LARGE_AD else JVP_VJP_CASES
    with_primal = suite == LARGE_AD

    def order(key):
        parts = key.split("/")
        case = parts[0]
        try:
            n = int(parts[2].split("x")[0]) if len(parts) > 2 else 0
        except ValueError:
            n = 0
        return (cases.index(case) if case in cases else len(cases), case, n, key)

    head = ["row", "tenax eager", "tenax trace", "floor", "libtorch", "eager/floor", "eager/libtorch", "trace/floor",
            "trace/libtorch", "pytorch", "jax", "eager/pytorch", "eager/jax", "trace/jax"]
    if suite == JVP_VJP:
        head.append("trace/eager")
    if with_primal:
        head.append("tenax primal")
    head += ["provider calls (eager; floor)", "target", "check (eager)"]
    lines = [f"### {suite}", "",
             "Times per iteration, wall-clock median (IQR) over the pooled repetitions; ratios: wall "
             "(CPU in parentheses), lower is better. " + AD_TABLE_INTRO[suite], "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(by_key, key=order):
        m = by_key[key]
        eager, trace, floor, torch, primal, pyt, jx = (
            m.get(x) for x in ("eager", "trace", "floor", "libtorch", "primal", "pytorch", "jax"))
        try:
            n = int(key.split("/")[2].split("x")[0])
        except (IndexError, ValueError):
            n = 0
        qf, qt = ratio(eager, floor, "real"), ratio(eager, torch, "real")
        tf, tt, te = ratio(trace, floor, "real"), ratio(trace, torch, "real"), ratio(trace, eager, "real")
        tgt = ad_targets(suite, n, qf, qt, tf, tt, te, key.split("/")[0], ratio(eager, pyt, "real"))
        calls = f"{calls_text(eager)}; {calls_text(floor)}"
        check = eager.label if eager is not None and eager.label and not eager.errors else "-"
        cells = [f"`{suite}/{key}`", median_cell(eager), median_cell(trace), median_cell(floor), median_cell(torch),
                 ratio_cell(eager, floor), ratio_cell(eager, torch), ratio_cell(trace, floor), ratio_cell(trace, torch),
                 median_cell(pyt), median_cell(jx), ratio_cell(eager, pyt), ratio_cell(eager, jx), ratio_cell(trace, jx)]
        if suite == JVP_VJP:
            cells.append(ratio_cell(trace, eager))
        if with_primal:
            cells.append(median_cell(primal))
        cells += [calls, ", ".join(tgt) if tgt else "-", check]
        lines.append("| " + " | ".join(cells) + " |")
    shown = {"eager", "trace", "floor", "libtorch", "primal", "pytorch", "jax"}
    other = sorted({mode for m in by_key.values() for mode in m} - shown)
    if other:
        lines += ["", f"(rows with other modes not shown: {', '.join(other)})"]
    return lines


# The headline: per suite and tenax mode, tenax / the best reference of each row (the fastest of
# libtorch, PyTorch and JAX on that row) and tenax / the provider floor.
HEADLINE_MODES = ["eager", "trace", "compiled", "deferred"]  # listed first, the others after them


def med(row):
    """The row's wall-clock median, or None (no row, an error, no samples)."""
    st = row.stat("real") if row is not None and not row.errors else None
    return st["median"] if st else None


def row_order(suite, key):
    """Rows in the order of the suite's table: case (LARGE_AD_CASES / JVP_VJP_CASES), then size."""
    parts = key.split("/")
    cases = LARGE_AD_CASES if suite == LARGE_AD else JVP_VJP_CASES
    m = re.match(r"\d+", parts[2]) if len(parts) > 2 else None  # the shape's first number
    return (cases.index(parts[0]) if parts[0] in cases else len(cases), parts[0], int(m.group()) if m else 0, key)


def headline_data(rows):
    """{suite: [entry]}, one entry per tenax row that has a reference or a floor: {mode, key,
    best (tenax / best reference), best_ref, floor (tenax / floor)}. A tenax row's references
    are the rows <ref>_<mode> of its key where there are such (overhead, the GPU deferred rows),
    else the rows named after the reference alone. threads: best = t2 / t1, best_ref "t1"."""
    groups = {}
    for r in rows.values():
        groups.setdefault((r.suite, r.key), {})[r.mode] = r
    data = {}
    for (suite, key), m in sorted(groups.items(), key=lambda kv: (kv[0][0], row_order(*kv[0]))):
        if suite == THREADS:
            t1, t2 = med(m.get("t1")), med(m.get("t2"))
            if t1 and t2:
                data.setdefault(suite, []).append({"mode": "t2", "key": key, "best": t2 / t1, "best_ref": "t1",
                                                   "floor": None})
            continue
        floor = med(m.get("floor"))
        for mode, row in m.items():
            ours = med(row)
            if row.ref_of() or mode in ("floor", "primal") or ours is None:
                continue
            refs = {x.ref_of()[0]: med(x) for x in m.values() if x.ref_of() and x.ref_of()[1] == mode}
            if not refs:
                refs = {x.ref_of()[0]: med(x) for x in m.values() if x.ref_of() and x.ref_of()[1] == ""}
            refs = {k: v for k, v in refs.items() if v}
            best_ref = min(refs, key=refs.get) if refs else None
            if best_ref is None and floor is None:
                continue
            data.setdefault(suite, []).append({"mode": mode, "key": key, "best_ref": best_ref,
                                               "best": ours / refs[best_ref] if best_ref else None,
                                               "floor": ours / floor if floor else None})
    return data


def mode_order(mode):
    return (HEADLINE_MODES.index(mode) if mode in HEADLINE_MODES else len(HEADLINE_MODES), mode)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def summarise_headline(data):
    """The headline table (markdown lines): per suite and tenax mode, the geometric mean and the
    worst row of tenax / best reference and of tenax / floor, how many rows are at or below the
    best reference, and which reference was the fastest how often; threads in a line below."""
    lines = ["| suite, tenax rows | rows | tenax / best reference: geomean | worst (row) | <= 1 | "
             "tenax / floor: geomean | worst (row) | fastest reference (rows) |", "|---|---|---|---|---|---|---|---|"]
    threads = []
    for suite in SUITE_ORDER + sorted(set(data) - set(SUITE_ORDER)):
        entries = data.get(suite, [])
        if suite == THREADS and entries:
            qs = [e["best"] for e in entries]
            worst = max(entries, key=lambda e: e["best"])
            threads.append(f"threads (2 threads / 1 thread, {len(qs)} rows): geomean **{geomean(qs):.2f}**, worst "
                           f"{worst['best']:.2f} (`{worst['key']}`); below 1: the second thread helps")
            continue
        for mode in sorted({e["mode"] for e in entries}, key=mode_order):
            es = [e for e in entries if e["mode"] == mode]
            cells = [f"{suite} {mode}", str(len(es))]
            for field in ("best", "floor"):
                xs = [e for e in es if e[field] is not None]
                if xs:
                    worst = max(xs, key=lambda e: e[field])
                    cells += [f"**{geomean([e[field] for e in xs]):.2f}**", f"{worst[field]:.2f} (`{worst['key']}`)"]
                else:
                    cells += ["-", "-"]
                if field == "best":
                    cells.append(f"{sum(e['best'] <= 1 for e in xs)}/{len(xs)}" if xs else "-")
            counts = {}
            for e in es:
                if e["best_ref"]:
                    counts[e["best_ref"]] = counts.get(e["best_ref"], 0) + 1
            cells.append(", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])) or "-")
            lines.append("| " + " | ".join(cells) + " |")
    if len(lines) == 2 and not threads:
        return ["(no row has a reference or a floor)"]
    return lines + ([""] + threads if threads else [])


def versions_line(ctx, py, commit):
    """'tenax <commit>, <provider> <version>, libtorch x, PyTorch x, JAX x, numpy x, Python x'."""
    parts = [f"tenax {commit or '(commit not given)'}"]
    m = re.search(r"provider: (\w+) \(([^)]*)\)", ctx.get("tenax_config", ""))
    if m:
        parts.append(" ".join(m.group(2).split()[:2]) + (f" (provider {m.group(1)})" if m.group(1).lower() not in
                                                           m.group(2).lower() else ""))
    lt = ctx.get("libtorch", "")
    parts.append(lt.split(",")[0] if lt.startswith("libtorch ") else "libtorch: not built")
    # refs.py's context: pytorch "2.15.0+cu132 (1 intra-op thread(s))", jax "0.10.2 (jaxlib 0.10.2, cpu)".
    if py.get("pytorch"):
        parts.append("PyTorch " + py["pytorch"].split(" (")[0])
    if py.get("jax"):
        parts.append("JAX " + re.sub(r", \w+\)$", ")", py["jax"]))
    if not py.get("pytorch") and not py.get("jax"):
        parts.append("no PyTorch or JAX rows")
    for k, name in (("numpy", "numpy"), ("python", "Python")):
        if py.get(k):
            parts.append(f"{name} {py[k]}")
    return ", ".join(parts)


def draw_ratio_charts(data, out):
    """One PNG per suite (chart_ratio_<suite>.png): a panel per tenax mode, a horizontal pair of
    bars per row, tenax / best reference (coloured after that reference) and tenax / floor (grey),
    on a linear axis with a line at 1: left of it tenax is faster. Bars past 4 are cut at 4 and
    labelled with their value. Returns the paths written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except Exception:  # noqa: BLE001 - any import problem means no chart
        return []
    clip = 4.0
    written = []
    for suite, entries in sorted(data.items()):
        modes = sorted({e["mode"] for e in entries}, key=mode_order)
        keys = [e["key"] for e in entries if e["mode"] == modes[0]]
        for e in entries:
            if e["key"] not in keys:
                keys.append(e["key"])
        keys.sort(key=lambda k: row_order(suite, k))
        top = max([v for e in entries for v in (e["best"], e["floor"]) if v is not None] + [1.0])
        xmax = min(clip, top * 1.08)
        fig, axes = plt.subplots(1, len(modes), squeeze=False, sharey=True,
                                 figsize=(3.6 * len(modes) + 2.2, max(2.4, 0.8 + 0.24 * len(keys))))
        h = 0.4
        for ax, mode in zip(axes[0], modes):
            by_key = {e["key"]: e for e in entries if e["mode"] == mode}
            for i, key in enumerate(keys):
                e = by_key.get(key)
                if e is None:
                    continue
                for off, field, colour in ((-h / 2, "best", CHART_COLOURS.get(e["best_ref"], "tab:purple")),
                                           (h / 2, "floor", "0.6")):
                    v = e[field]
                    if v is None:
                        continue
                    ax.barh(i + off, min(v, xmax), h, color=colour)
                    if v > xmax:
                        ax.text(xmax, i + off, f"{v:.1f} ", va="center", ha="right", fontsize=6, color="k")
            ax.axvline(1.0, color="k", linewidth=1)
            ax.set_xlim(0, xmax)
            ax.set_title("2 threads / 1 thread" if suite == THREADS else f"tenax {mode}", fontsize=9)
            ax.tick_params(axis="x", labelsize=7)
            ax.grid(axis="x", linestyle=":", linewidth=0.5)
        ax0 = axes[0][0]
        ax0.set_yticks(range(len(keys)))
        ax0.set_yticklabels([re.sub(r"/f(32|64)/", " ", k) for k in keys], fontsize=7)
        ax0.invert_yaxis()
        refs = sorted({e["best_ref"] for e in entries if e["best_ref"]}, key=lambda r: (r not in REFERENCES, r))
        handles = [Patch(color=CHART_COLOURS.get(r, "tab:purple"), label="t2 / t1" if suite == THREADS else
                         f"/ best reference, here {r}") for r in refs]
        if any(e["floor"] is not None for e in entries):
            handles.append(Patch(color="0.6", label="/ floor (provider calls)"))
        fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(4, len(handles)),
                   fontsize=8)
        fig.suptitle(f"{suite}: " + ("2 threads / 1 thread, linear axis; below 1 (left of the line): the second "
                                     "thread helps" if suite == THREADS else
                                     "tenax / reference, linear axis; below 1 (left of the line): tenax is faster"),
                     fontsize=10)
        fig.tight_layout()
        path = os.path.join(out, f"chart_ratio_{suite}.png")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    return written


# Bars of the charts, in this order (tenax modes first, then the references), with fixed colours.
CHART_IMPLS = [("eager", "tenax eager"), ("trace", "tenax trace"), ("compiled", "tenax compiled"),
               ("tenax", "tenax"), ("libtorch", "libtorch"), ("pytorch", "pytorch"), ("jax", "jax")]
CHART_COLOURS = {"eager": "tab:blue", "trace": "tab:cyan", "compiled": "tab:cyan", "tenax": "tab:blue",
                 "libtorch": "tab:red", "pytorch": "tab:orange", "jax": "tab:green"}


def chart_data(rows, suite):
    """The bars of a suite's chart: ({case: {group: {impl: median seconds}}}, {case: {group: floor
    seconds}}). case is the row key's first part (a subplot), group the rest (with the mode the row
    is the reference of, for <ref>_<mode> rows and the generic suites' tenax rows); impl one of
    CHART_IMPLS. Rows with errors and primal rows are left out; floors become markers."""
    bars, floors = {}, {}
    for r in rows.values():
        st = r.stat("real") if r.suite == suite and not r.errors else None
        if not st or r.mode == "primal":
            continue
        parts = r.key.split("/")
        case, group = parts[0], "/".join(parts[1:])
        rm = r.ref_of()
        if rm:
            impl, sub = rm
        elif r.mode == "floor":
            floors.setdefault(case, {})[group] = st["median"]
            continue
        elif r.mode in ("eager", "trace", "compiled"):
            impl, sub = r.mode, ""
        else:
            impl, sub = "tenax", r.mode
        if sub:
            group = f"{group}/{sub}" if group else sub
        bars.setdefault(case, {}).setdefault(group, {})[impl] = st["median"]
    return bars, floors


def group_order(group):
    """Groups sorted by their size (the first NxN or leading number), then by name."""
    m = re.search(r"(\d+)x\d+|^(\d+)", group)
    return (int(m.group(1) or m.group(2)) if m else 0, group)


def draw_charts(rows, out):
    """One PNG per suite (chart_<suite>.png): a subplot per case, a group of bars per size or
    mode, one bar per implementation (tenax eager/trace/compiled, libtorch, pytorch, jax), the
    provider floor as a black dashed marker over its group; log time axis, wall-clock medians.
    Returns the line for the summary."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import NullFormatter
    except Exception:  # noqa: BLE001 - any import problem means no chart
        return ("charts skipped: matplotlib is not importable (optional; it is in the venv that "
                "scripts/bench.sh makes, or `pip install matplotlib`)")
    written = []
    for suite in sorted({r.suite for r in rows.values()}):
        bars, floors = chart_data(rows, suite)
        if not bars:
            continue
        cases = sorted(bars, key=lambda c: (LARGE_AD_CASES.index(c) if c in LARGE_AD_CASES else len(LARGE_AD_CASES), c))
        impls = [(k, label) for k, label in CHART_IMPLS if any(k in g for b in bars.values() for g in b.values())]
        ncols = min(4, len(cases))
        nrows = (len(cases) + ncols - 1) // ncols
        most = max(len(b) for b in bars.values())
        fig, axes = plt.subplots(nrows, ncols, squeeze=False,
                                 figsize=(max(4.0, 0.5 + most * (0.3 + 0.22 * len(impls))) * ncols, 3.4 * nrows))
        width = 0.8 / len(impls)
        per_op = any(r.ops for r in rows.values() if r.suite == suite)
        for ax, case in zip(axes.flat, cases):
            groups = sorted(bars[case], key=group_order)
            for i, (impl, label) in enumerate(impls):
                xs = [g + i * width for g in range(len(groups)) if impl in bars[case][groups[g]]]
                ys = [bars[case][g][impl] for g in groups if impl in bars[case][g]]
                if xs:
                    ax.bar(xs, ys, width, label=label, color=CHART_COLOURS[impl])
            for g, group in enumerate(groups):
                fl = floors.get(case, {}).get(group)
                if fl is not None:
                    ax.hlines(fl, g - width / 2, g + (len(impls) - 0.5) * width, colors="k", linestyles="--",
                              linewidth=1.5, label="floor (provider calls)" if g == 0 else None)
            ax.set_xticks([g + width * (len(impls) - 1) / 2 for g in range(len(groups))])
            ax.set_xticklabels([re.sub(r"^f(32|64)/", "", g) for g in groups], rotation=25, ha="right", fontsize=7)
            ax.set_yscale("log")
            vals = [v for g in bars[case].values() for v in g.values()] + list(floors.get(case, {}).values())
            # At least one decade under the lowest bar, some room over the highest bar or floor.
            ax.set_ylim(10 ** math.floor(math.log10(min(vals) / 2)), max(vals) * 1.6)
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_title(case, fontsize=9)
            ax.tick_params(axis="y", labelsize=7)
        for ax in list(axes.flat)[len(cases):]:
            ax.set_visible(False)
        handles = {}
        for ax in axes.flat:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
        # Below the plots, in as many rows as needed, and saved with a tight box, so that no label
        # is cut off however narrow the figure is.
        fig.legend(list(handles.values()), list(handles.keys()), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=min(len(handles), max(2, int(fig.get_figwidth() // 1.6))), fontsize=8)
        fig.supylabel(f"seconds per {'op' if per_op else 'iteration'} (wall-clock median, log)", fontsize=9)
        fig.suptitle(f"{suite}: lower is better", fontsize=10)
        fig.tight_layout()
        path = os.path.join(out, f"chart_{suite}.png")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    return "charts: " + ", ".join(written) if written else "charts skipped: no rows"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="Google Benchmark JSON outputs (--benchmark_out)")
    ap.add_argument("--out", required=True,
                    help="directory for summary.md, samples.csv, samples.json (and the charts)")
    ap.add_argument("--command", default="", help="the command that produced the files, quoted in the summary")
    ap.add_argument("--cpu", default="", help="the CPU list the benchmarks were pinned to (taskset -c)")
    ap.add_argument("--tenax-commit", default="", help="the tenax commit the binaries were built from")
    ap.add_argument("--note", action="append", default=[], help="extra line for the summary header (repeatable)")
    ap.add_argument("--print", choices=["all", "headline"], default="all", dest="show",
                    help="what goes to stdout: the whole summary (default) or its header, headline table and "
                    "chart paths")
    args = ap.parse_args()
    started = datetime.datetime.now().timestamp() - 1

    rows, contexts, samples = load(args.files)
    if not rows:
        print("report.py: no benchmark rows in the inputs", file=sys.stderr)
        return 1
    # The header's tenax/libtorch facts come from the first C++ binary's context.
    cpp = [c for _, c in contexts if not c.get("executable", "").endswith("refs.py")]
    ctx = cpp[0] if cpp else (contexts[0][1] if contexts else {})
    loads = [c.get("load_avg", [None])[0] for _, c in contexts if c.get("load_avg")]
    lines, _ = summarise(rows)
    for extra in (summarise_ad_table(rows, LARGE_AD), summarise_ad_table(rows, JVP_VJP), summarise_mlp(rows),
                  summarise_ops(rows), summarise_threads(rows), summarise_gpu(rows)):
        if extra:
            lines += ([""] if lines else []) + extra

    os.makedirs(args.out, exist_ok=True)
    write_samples(samples, args.out)
    chart_msg = draw_charts(rows, args.out)
    data = headline_data(rows)
    ratio_charts = draw_ratio_charts(data, args.out)
    if ratio_charts:
        chart_msg += "; ratio charts: " + ", ".join(ratio_charts)
    py = {}
    for _, c in contexts:
        for k in ("pytorch", "jax", "numpy", "python"):
            if c.get(k) and c.get("executable", "").endswith("refs.py"):
                py.setdefault(k, c[k])
        for k in ("pytorch_skipped", "jax_skipped"):
            if c.get(k):
                py.setdefault(k, c[k])
    title = [f"# tenax benchmark summary ({datetime.date.today().isoformat()})", ""]
    headline = [
        "## Headline",
        "",
        "Per suite and tenax mode, over the suite's rows: tenax / the best reference of each row (the "
        "fastest of libtorch, PyTorch and JAX there) and tenax / the provider floor (the bare provider calls "
        "of the same work), wall-clock medians; geometric mean and the worst row. Below 1: tenax is faster.",
        "",
    ] + summarise_headline(data) + [
        "",
        f"Versions: {versions_line(ctx, py, args.tenax_commit)}.",
        "",
    ]
    head = [
        f"- command: `{args.command}`" if args.command else "- command: (not given)",
        f"- machine: {cpu_model()}, {ctx.get('num_cpus', os.cpu_count())} logical CPUs, "
        f"{ctx.get('mhz_per_cpu', '?')} MHz, host {ctx.get('host_name', platform.node())}",
        f"- pinned to CPU: {args.cpu or 'not pinned'}; load average (1 min) at the start of each run: "
        + (", ".join(f"{x:.2f}" for x in loads) if loads else "?"),
        f"- tenax: {ctx.get('tenax_config', '?')}" + (f"; commit {args.tenax_commit}" if args.tenax_commit else ""),
        f"- threads: {ctx.get('tenax_threads', '?')}",
        f"- libtorch: {ctx.get('libtorch', '?')}",
        "- Python references (bench/ref_python/refs.py): "
        + (", ".join(f"{k} {v}" for k, v in py.items()) if py else "none in the inputs"),
        f"- inputs: {len(args.files)} JSON files; Google Benchmark library build type: "
        f"{ctx.get('library_build_type', '?')} (the harness library's own build, not tenax's)",
        "- statistics: median and IQR over all repetitions of all runs (pooled). Times are per op "
        "(time per iteration / ops in the timed region) where a row counts ops, else per iteration. "
        "'wall' = wall-clock time (the primary figure), 'CPU' = CPU time of the process (median; "
        "when wall >> CPU the pinned core was shared with other work). Ratios: tenax median / "
        "reference median, lower is better",
    ]
    notes = [f"- {n}" for n in args.note]
    text = "\n".join(title + headline + head + [f"- {chart_msg}; every sample: samples.csv, samples.json"] + notes
                     + [""] + lines) + "\n"
    summary = os.path.join(args.out, "summary.md")
    with open(summary, "w") as f:
        f.write(text)
    if args.show == "all":
        print(text)
    else:
        charts = sorted(os.path.join(args.out, f) for f in os.listdir(args.out) if re.fullmatch(r"chart_.*\.png", f)
                        and os.path.getmtime(os.path.join(args.out, f)) >= started)
        print("\n".join(title + head + notes + [""] + headline
                        + ["Charts (bars of times per suite, and ratios to the best reference and the floor):"]
                        + [f"  {c}" for c in charts or ["(none: " + chart_msg + ")"]] + [f"Every table: {summary}"]))
    failed = sorted(r.name for r in rows.values() if r.errors)
    if failed:
        print("report.py: rows with errors (failed checks): " + ", ".join(failed), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
