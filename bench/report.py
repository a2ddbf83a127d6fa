#!/usr/bin/env python3
"""Summarise Google Benchmark JSON outputs of the tenax bench drivers into a markdown table.

Standard library only (json, statistics), so it runs without pip installs; a PNG chart is drawn
only when matplotlib happens to be importable.

    python3 bench/report.py --out results/DATE [--command CMD] FILE.json [FILE.json ...]

Exit status: 0, or 3 when a row reported an error (a failed correctness check), 1 on no rows.

The large_ad and jvp_vjp suites get a table each (see summarise_ad_table): their rows
<suite>/<case>/f64/<n>x<n>/<mode> with mode eager, trace, floor (the bare provider calls), libtorch
(and primal, large_ad) are put side by side per case and size, with the ratios to floor and libtorch.

Rows are named <suite>/<case>/<dtype>/<shape>/<mode>. A row whose mode is <ref>_<mode> (ref one of
REFERENCES) is the reference of the row <suite>/<case>/<dtype>/<shape>/<mode>: the table puts them
side by side with the ratio ours / reference (lower is better). Every repetition of every input
file (several processes, run interleaved by scripts/bench.sh) is pooled: medians and IQRs are over
the pooled repetition samples; "runs" shows the spread of the per-process medians.
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys

REFERENCES = ["libtorch"]  # mode prefixes of reference rows, e.g. libtorch_recorded

# Targets from shared BENCHMARKS.md: (suite, case regex, mode) -> (quantity, limit, text).
# quantity "per_op" compares the median time per op (seconds); "ratio" the ratio to the reference.
TARGETS = [
    ("overhead", r"chain\d+", "recorded", "per_op", 0.5e-6, "<= 0.5 us per recorded op"),
]

# Suites with a table of their own (their rows are left out of the generic table).
LARGE_AD = "large_ad"
JVP_VJP = "jvp_vjp"
MLP = "mlp"
# mlp targets (BENCHMARKS.md): compiled / libtorch per shape, and eager / libtorch.
MLP_COMPILED_TARGET = {"8x16->8": 0.1, "64x256->64": 0.8}
MLP_EAGER_TARGET = 0.5
LARGE_AD_CASES = ["matmul", "solve", "qr", "eigh", "eigvalsh", "svdvals", "lu", "cholesky"]
LARGE_AD_FLOOR_TARGET = 1.10  # BENCHMARKS.md: every AD row <= 1.10 x its provider floor, below the reference
JVP_VJP_CASES = [f"{c}_{m}" for c in ["qr", "eigh", "solve", "lu", "svd_s"] for m in ["jvp", "vjp"]]
JVP_VJP_FLOOR_TARGET = 1.10  # at n >= 256: eager and trace <= 1.10 x floor, trace <= eager
# Provider routines counted per iteration by the large_ad rows (counters of the same names).
ROUTINES = ["getrf", "getrs", "potrf", "geqrf", "orgqr", "syevd", "gesdd", "gemm", "trsm"]

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
        """(reference name, mode of the row it is the reference of) or None."""
        for ref in REFERENCES:
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
    rows, contexts = {}, []
    for path in files:
        with open(path) as f:
            data = json.load(f)
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
        for name, ts in per_file.items():
            rows[name].run_medians.append(statistics.median(ts) / (rows[name].ops or 1))
    return rows, contexts


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
    rows = {k: r for k, r in rows.items() if r.suite not in (LARGE_AD, JVP_VJP, MLP)}
    if not rows:
        return lines, chart
    ours = [r for r in rows.values() if r.ref_of() is None]
    refs = {}
    for r in rows.values():
        rm = r.ref_of()
        if rm:
            refs[(r.suite, r.key, rm[1], rm[0])] = r
    ref_names = sorted({k[3] for k in refs})
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
    head = ["row", "tenax eager", "tenax compiled", "floor", "libtorch", "eager/libtorch", "compiled/libtorch",
            "compiled/floor", "target"]
    lines = [f"### {MLP}", "",
             "Whole training runs (1000 steps at 8x16->8, 100 at 64x256->64), wall-clock median (IQR); floor = "
             "the same training on raw buffers (2 gemm calls per step plus loops); "
             "ratios wall (CPU), lower is better. Targets: compiled <= 0.1 x libtorch at 8x16->8 and "
             "<= 0.8 x at 64x256->64; eager <= 0.5 x libtorch.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(by_key):
        m = by_key[key]
        eager, comp, floor, torch = (m.get(x) for x in ("eager", "compiled", "floor", "libtorch"))
        shape = key.split("/")[2] if len(key.split("/")) > 2 else ""
        qe, qc = ratio(eager, torch, "real"), ratio(comp, torch, "real")
        tgt = []
        if qc is not None and shape in MLP_COMPILED_TARGET:
            lim = MLP_COMPILED_TARGET[shape]
            tgt.append(f"compiled <= {lim} x {'met' if qc <= lim else 'NOT met'}")
        if qe is not None:
            tgt.append(f"eager <= {MLP_EAGER_TARGET} x {'met' if qe <= MLP_EAGER_TARGET else 'NOT met'}")
        lines.append("| " + " | ".join([f"`{MLP}/{key}`", median_cell(eager), median_cell(comp), median_cell(floor),
                                        median_cell(torch), ratio_cell(eager, torch), ratio_cell(comp, torch),
                                        ratio_cell(comp, floor), ", ".join(tgt) if tgt else "-"]) + " |")
    return lines


AD_TABLE_INTRO = {
    LARGE_AD: "eager = forward + loss + backward with the tape; "
    "trace = the same traced and compiled outside the timing, one prepared run timed; "
    "floor = the bare provider calls of the same computation; primal = the op alone. "
    "Targets (BENCHMARKS.md): eager <= 1.10 x floor and < libtorch; at n <= 8 eager <= 0.2 x and "
    "trace <= 0.1 x libtorch; at n >= 256 trace <= eager and <= 1.05 x floor.",
    JVP_VJP: "eager = tenax::jvp (forward mode) or tenax::vjp + pullback of the cotangent 1 (reverse mode); "
    "trace = the same traced and compiled outside the timing, one prepared run timed; "
    "floor = the bare provider calls of the same computation (factorization + the rule's calls); "
    "libtorch = forward-mode dual tensors (jvp) or autograd::grad (vjp). "
    "Targets: at n <= 8 eager <= 0.2 x and trace <= 0.1 x libtorch; at n >= 256 trace <= eager, "
    f"eager and trace <= {JVP_VJP_FLOOR_TARGET:.2f} x floor.",
}


def ad_targets(suite, n, eager_floor, eager_torch, trace_floor, trace_torch, trace_eager):
    """The BENCHMARKS.md targets of a large_ad / jvp_vjp row at size n, as 'what met|NOT met' texts."""
    tgt = []

    def met(ok):
        return "met" if ok else "NOT met"

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
    libtorch (wall-clock medians; CPU-time ratios in parentheses), then the primal row (large_ad),
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
            "trace/libtorch"]
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
        eager, trace, floor, torch, primal = (m.get(x) for x in ("eager", "trace", "floor", "libtorch", "primal"))
        try:
            n = int(key.split("/")[2].split("x")[0])
        except (IndexError, ValueError):
            n = 0
        qf, qt = ratio(eager, floor, "real"), ratio(eager, torch, "real")
        tf, tt, te = ratio(trace, floor, "real"), ratio(trace, torch, "real"), ratio(trace, eager, "real")
        tgt = ad_targets(suite, n, qf, qt, tf, tt, te)
        calls = f"{calls_text(eager)}; {calls_text(floor)}"
        check = eager.label if eager is not None and eager.label and not eager.errors else "-"
        cells = [f"`{suite}/{key}`", median_cell(eager), median_cell(trace), median_cell(floor), median_cell(torch),
                 ratio_cell(eager, floor), ratio_cell(eager, torch), ratio_cell(trace, floor), ratio_cell(trace, torch)]
        if suite == JVP_VJP:
            cells.append(ratio_cell(trace, eager))
        if with_primal:
            cells.append(median_cell(primal))
        cells += [calls, ", ".join(tgt) if tgt else "-", check]
        lines.append("| " + " | ".join(cells) + " |")
    other = sorted({mode for m in by_key.values() for mode in m} - {"eager", "trace", "floor", "libtorch", "primal"})
    if other:
        lines += ["", f"(rows with other modes not shown: {', '.join(other)})"]
    return lines


def draw_chart(chart, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # noqa: BLE001 - any import problem means no chart
        return "chart skipped: matplotlib is not importable (optional; `pip install matplotlib` to get one)"
    entries = [e for e in chart if e["ours"] is not None]
    if not entries:
        return "chart skipped: no rows"
    refs = sorted({r for e in entries for r in e["refs"]})
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(entries)), 4))
    width = 0.8 / (1 + len(refs))
    xs = range(len(entries))
    ax.bar([x for x in xs], [e["ours"] * 1e9 for e in entries], width, label="tenax")
    for i, ref in enumerate(refs, 1):
        ax.bar([x + i * width for x in xs], [e["refs"].get(ref, 0) * 1e9 for e in entries], width, label=ref)
    ax.set_xticks([x + width * len(refs) / 2 for x in xs])
    ax.set_xticklabels([e["name"].split("/", 1)[1] for e in entries], rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("ns per op (or per iteration), wall-clock median")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return f"chart: {path}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="Google Benchmark JSON outputs (--benchmark_out)")
    ap.add_argument("--out", required=True, help="directory for summary.md (and chart.png)")
    ap.add_argument("--command", default="", help="the command that produced the files, quoted in the summary")
    ap.add_argument("--cpu", default="", help="the CPU list the benchmarks were pinned to (taskset -c)")
    ap.add_argument("--note", action="append", default=[], help="extra line for the summary header (repeatable)")
    args = ap.parse_args()

    rows, contexts = load(args.files)
    if not rows:
        print("report.py: no benchmark rows in the inputs", file=sys.stderr)
        return 1
    ctx = contexts[0][1] if contexts else {}
    loads = [c.get("load_avg", [None])[0] for _, c in contexts if c.get("load_avg")]
    lines, chart = summarise(rows)
    for extra in (summarise_ad_table(rows, LARGE_AD), summarise_ad_table(rows, JVP_VJP), summarise_mlp(rows)):
        if extra:
            lines += ([""] if lines else []) + extra

    os.makedirs(args.out, exist_ok=True)
    chart_msg = draw_chart(chart, os.path.join(args.out, "chart.png"))
    head = [
        f"# tenax benchmark summary ({datetime.date.today().isoformat()})",
        "",
        f"- command: `{args.command}`" if args.command else "- command: (not given)",
        f"- machine: {cpu_model()}, {ctx.get('num_cpus', os.cpu_count())} logical CPUs, "
        f"{ctx.get('mhz_per_cpu', '?')} MHz, host {ctx.get('host_name', platform.node())}",
        f"- pinned to CPU: {args.cpu or 'not pinned'}; load average (1 min) at the start of each run: "
        + (", ".join(f"{x:.2f}" for x in loads) if loads else "?"),
        f"- tenax: {ctx.get('tenax_config', '?')}",
        f"- threads: {ctx.get('tenax_threads', '?')}",
        f"- libtorch: {ctx.get('libtorch', '?')}",
        f"- inputs: {len(args.files)} JSON files; Google Benchmark library build type: "
        f"{ctx.get('library_build_type', '?')} (the harness library's own build, not tenax's)",
        "- statistics: median and IQR over all repetitions of all runs (pooled). Times are per op "
        "(time per iteration / ops in the timed region) where a row counts ops, else per iteration. "
        "'wall' = wall-clock time (the primary figure), 'CPU' = CPU time of the process (median; "
        "when wall >> CPU the pinned core was shared with other work). Ratios: tenax median / "
        "reference median, lower is better",
        f"- {chart_msg}",
    ]
    head += [f"- {n}" for n in args.note]
    text = "\n".join(head + [""] + lines) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    failed = sorted(r.name for r in rows.values() if r.errors)
    if failed:
        print("report.py: rows with errors (failed checks): " + ", ".join(failed), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
