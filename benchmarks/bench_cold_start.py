"""Cold start: the first call of every public entry point on an empty Numba cache.

For each entry point (kernel Grams, samplers, Nyström, random features, solvers, the
shortest-path graph kernel) a fresh Python process with an empty temporary ``NUMBA_CACHE_DIR``
times, in this order: the first float64 call (Numba compiles), a second float64 call, the first
float32 call (compiles the float32 specializations, if any) and a second float32 call. A second
fresh process on the now-filled cache then times the first float64 call again ("cached": what a
user pays after ``sparsekit warmup``). The data are small, so the second calls show the compute
and the first calls the compile. First calls are reported as wall time and, in parentheses, the
CPU time of the process: compiling is single-threaded, so on a loaded shared machine the CPU
time is the better estimate of the wall time on an idle one.

Run ``python benchmarks/bench_cold_start.py`` (``--only omp,mp`` for some rows, ``--no-cached``
to skip the second process, ``--baseline DIR`` to time another checkout of sparsekit row by row
in the same run, so that both see the same machine load). Prints a Markdown table; exits non-zero
when a first call exceeds ``--limit`` CPU seconds (default 2.0, the per-dtype budget) only if
``--strict`` is given.

``--warm`` times start-up on a filled cache instead (issue 18, item 5): per entry point, one
process fills an empty ``NUMBA_CACHE_DIR``, then ``--repeat`` (3) fresh processes each time
the seconds from their spawn to the end of the first float64 call, the CPU seconds of the
whole process then (``getrusage``: on a shared machine the figure to trust), the same up to
the end of ``import sparsekit`` (NumPy and the data included), and the second call. Best of
the runs, the 1-minute load average of every run (range); with ``--baseline`` the two trees
alternate run by run. The children may write bytecode (an installed package has it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _timing import machine

ROOT = Path(__file__).resolve().parents[1]

#: data shared by the snippets; ``DT`` is the dtype of the run
SETUP = """
import numpy as np
rng = np.random.default_rng(0)
X = rng.random((600, 16)).astype(DT)
D = rng.standard_normal((64, 256)).astype(DT)
D /= np.linalg.norm(D, axis=0)
Y = (D[:, :8] @ rng.random((8, 200))).astype(DT)
"""

#: entry point -> code run once per call (after SETUP); uses only public names
ENTRY_POINTS = {
    "kernel linear": "sparsekit.get_kernel('linear')(X)",
    "kernel polynomial": "sparsekit.get_kernel('polynomial')(X)",
    "kernel rbf": "sparsekit.get_kernel('rbf', gamma=0.5)(X)",
    "kernel laplacian": "sparsekit.get_kernel('laplacian')(X)",
    "kernel chi2": "sparsekit.get_kernel('chi2')(X)",
    "kernel additive-chi2": "sparsekit.get_kernel('additive-chi2')(X)",
    "kernel shortest-path": (
        "A = [(rng.random((n, n)) < 0.3).astype(float) for n in (5, 8, 12, 7, 9)]\n"
        "G = [(np.triu(a, 1) + np.triu(a, 1).T, rng.integers(0, 3, a.shape[0])) for a in A]\n"
        "sparsekit.get_kernel('shortest-path')(G)"
    ),
    "sampler uniform": (
        "sparsekit.get_sampler('uniform').sample(X, sparsekit.get_kernel('rbf'), 40, 0)"
    ),
    "sampler diagonal": (
        "sparsekit.get_sampler('diagonal').sample(X, sparsekit.get_kernel('rbf'), 40, 0)"
    ),
    "sampler rls": "sparsekit.get_sampler('rls').sample(X, sparsekit.get_kernel('rbf'), 40, 0)",
    "sampler two-pass-rls": (
        "sparsekit.get_sampler('two-pass-rls').sample(X, sparsekit.get_kernel('rbf'), 40, 0)"
    ),
    "sampler recursive-rls": (
        "sparsekit.get_sampler('recursive-rls').sample(X, sparsekit.get_kernel('rbf'), 40, 0)"
    ),
    "sampler dac-rls": (
        "sparsekit.get_sampler('dac-rls').sample(X, sparsekit.get_kernel('rbf'), 40, 0)"
    ),
    "sampler greedy-trace": (
        "sparsekit.get_sampler('greedy-trace').sample(X, sparsekit.get_kernel('rbf'), 40, 0)"
    ),
    "sampler greedy-trace approx.": (
        "sparsekit.get_sampler('greedy-trace', approximate=True)"
        ".sample(X, sparsekit.get_kernel('rbf'), 40, 0)"
    ),
    "Nystroem greedy-trace": (
        "sparsekit.Nystroem('rbf', sampler='greedy-trace', n_components=40, random_state=0)"
        ".fit_transform(X)"
    ),
    "Nystroem uniform": (
        "sparsekit.Nystroem('rbf', n_components=40, random_state=0).fit_transform(X)"
    ),
    "RandomFourierFeatures": (
        "sparsekit.RandomFourierFeatures(n_components=64, random_state=0).fit_transform(X)"
    ),
    "Fastfood": "sparsekit.Fastfood(n_components=64, random_state=0).fit_transform(X)",
    "solver mp": "sparsekit.get_solver('mp', max_iter=8).solve(D, Y)",
    "solver omp": "sparsekit.get_solver('omp', n_nonzero_coefs=8).solve(D, Y)",
    "solver omp (no Gram)": (
        "sparsekit.get_solver('omp', n_nonzero_coefs=8, precompute=False).solve(D, Y)"
    ),
    "solver nn-omp": "sparsekit.get_solver('nn-omp', n_nonzero_coefs=8).solve(D, Y)",
    "solver frank-wolfe": (
        "sparsekit.get_solver('frank-wolfe', beta=20.0, max_iter=50).solve(D, Y)"
    ),
    "solver palm4msa": (
        "M = rng.standard_normal((32, 32)).astype(X.dtype)\n"
        "cons = [sparsekit.get_projection('splincol', shape=(32, 32), k=4) for _ in range(3)]\n"
        "sparsekit.get_factorizer('palm4msa', n_iter=20).factorize(M, cons)"
    ),
    "KernelKMeans": "sparsekit.KernelKMeans(n_clusters=3, random_state=0).fit(X)",
    "QuicKMeans": (
        "sparsekit.QuicKMeans(n_clusters=4, max_iter=5, palm_iter=20, random_state=0).fit(X)"
    ),
    "SparseCoder": (
        "sparsekit.SparseCoder(D.T, solver_params={'n_nonzero_coefs': 8}).fit_transform(Y.T)"
    ),
}

#: the rows of ``--warm`` (issue 18: kernels, samplers, solvers, Nystroem, estimators)
WARM_DEFAULT = (
    "kernel rbf",
    "kernel chi2",
    "kernel laplacian",
    "sampler uniform",
    "sampler rls",
    "sampler dac-rls",
    "solver omp",
    "solver mp",
    "Nystroem uniform",
    "KernelKMeans",
    "QuicKMeans",
    "SparseCoder",
)

CHILD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import sparsekit
out = {}
for dt in DTYPES:
    DT = dt
    exec(SETUP)
    for call in ("first", "second"):
        t0, c0 = time.perf_counter(), time.process_time()
        exec(CODE)
        out[f"{dt}_{call}"] = time.perf_counter() - t0
        out[f"{dt}_{call}_cpu"] = time.process_time() - c0
print("RESULT " + json.dumps(out))
"""


#: ``--warm``: a fresh interpreter on a filled cache; the clock starts before the interpreter
#: does (``T_SPAWN``, set by the parent) and the CPU time is the whole process's (getrusage)
WARM_CHILD = """
import time
T_START = time.time()
import json, os, resource, warnings
warnings.simplefilter("ignore")
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
exec(SETUP)
out = {"setup_cpu": cpu()}
import sparsekit
out["import"], out["import_cpu"] = time.time() - T_SPAWN, cpu()
if CODE:
    exec(CODE)
    out["first"], out["first_cpu"] = time.time() - T_SPAWN, cpu()
    t0, c0 = time.perf_counter(), cpu()
    exec(CODE)
    out["second"], out["second_cpu"] = time.perf_counter() - t0, cpu() - c0
out["modules"] = len(__import__("sys").modules)
print("RESULT " + json.dumps(out))
"""


#: ``--warm``'s reference row: one trivial cached ``@njit`` function, called once. Its first call
#: is Numba's own start-up (typing and target registries, which import ``scipy.linalg`` for
#: BLAS, and the first cache load): the floor of any sparsekit entry point
FLOOR_MODULE = """
import numba

@numba.njit(cache=True, nogil=True)
def total(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s
"""
FLOOR = "(Numba floor)"
FLOOR_CODE = (
    "import os, sys\nsys.path.insert(0, os.environ['NUMBA_CACHE_DIR'])\n"
    "import sparsekit_floor\nsparsekit_floor.total(X[0])"
)


def run_warm_child(code, cache_dir, root=ROOT):
    """One fresh process on the filled cache ``cache_dir``: seconds from spawn to the end of
    the first call (and of ``import sparsekit``), the process CPU time then, the second call."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(root))
    # an installed package has its bytecode: without it every process recompiles sparsekit's
    # sources (~0.09 s of CPU), which is not start-up cost a user pays
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t_spawn = time.time()
    prog = (
        f"T_SPAWN = {t_spawn!r}\nSETUP = {SETUP.replace('DT', repr('float64'))!r}\n"
        f"CODE = {textwrap.dedent(code)!r}\n" + WARM_CHILD
    )
    proc = subprocess.run(
        [sys.executable, "-c", prog], env=env, capture_output=True, text=True, cwd=root
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"child failed:\n{proc.stdout}\n{proc.stderr}")


def warm(names, trees, repeat):
    """``--warm``: per entry point and tree, one process fills an empty cache, then ``repeat``
    fresh processes time the first call on it (best of ``repeat``, wall and CPU separately);
    the trees alternate run by run so that they see the same load."""
    cols = [
        "entry point",
        "first call: wall",
        "CPU",
        "import: wall",
        "CPU",
        "second call",
        "load avg.",
    ]
    rows = {label: [] for label, _ in trees}
    names = ["(import only)", FLOOR] + list(names)
    for name in names:
        code = FLOOR_CODE if name == FLOOR else ENTRY_POINTS.get(name, "")
        with tempfile.TemporaryDirectory(prefix="sparsekit-warm-") as cache:
            best = {}
            for label, root in trees:
                (Path(cache) / (label or "tree")).mkdir()
                (Path(cache) / (label or "tree") / "sparsekit_floor.py").write_text(FLOOR_MODULE)
                run_warm_child(code, Path(cache) / (label or "tree"), root)  # fills the cache
                best[label] = []
            loads = []
            for _ in range(repeat):
                for label, root in trees:
                    loads.append(os.getloadavg()[0])
                    best[label].append(run_warm_child(code, Path(cache) / (label or "tree"), root))
        load = f"{min(loads):.1f}–{max(loads):.1f}"
        for label, _ in trees:
            runs = best[label]
            key = "first" if code else "import"
            wall = min(r[key] for r in runs)
            cpu_ = min(r[key + "_cpu"] for r in runs)
            imp = min(r["import"] for r in runs)
            imp_cpu = min(r["import_cpu"] for r in runs)
            second = f"{min(r['second'] for r in runs):.3f}" if code else "-"
            row = (
                f"| {name} | {wall:.2f} | {cpu_:.2f} | {imp:.2f} | {imp_cpu:.2f} | {second} | "
                f"{load} |"
            )
            rows[label].append(row)
            print(f"{label or 'this tree'}: {row}", file=sys.stderr, flush=True)
    for label, root in trees:
        print(
            f"\n{label or 'this tree'} ({root}), warm cache, best of {repeat} fresh "
            "processes, seconds from interpreter start:\n"
        )
        print("| " + " | ".join(cols) + " |")
        print("|" + "|".join("---" for _ in cols) + "|")
        print("\n".join(rows[label]))


def run_child(code, cache_dir, dtypes, root=ROOT):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(root))
    prog = f"SETUP = {SETUP!r}\nCODE = {textwrap.dedent(code)!r}\nDTYPES = {dtypes!r}\n" + CHILD
    proc = subprocess.run(
        [sys.executable, "-c", prog], env=env, capture_output=True, text=True, cwd=root
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"child failed:\n{proc.stdout}\n{proc.stderr}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated entry points (substring match)")
    parser.add_argument("--no-cached", action="store_true", help="skip the filled-cache process")
    parser.add_argument("--limit", type=float, default=2.0, help="per-dtype budget, seconds")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a first call > limit")
    parser.add_argument("--baseline", help="another sparsekit checkout, timed row by row too")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="time the first call in fresh processes on a filled cache instead",
    )
    parser.add_argument("--repeat", type=int, default=3, help="--warm: fresh processes per row")
    args = parser.parse_args()
    names = list(WARM_DEFAULT) if args.warm else list(ENTRY_POINTS)
    if args.only:
        keys = [k.strip() for k in args.only.split(",")]
        names = [n for n in ENTRY_POINTS if any(k in n for k in keys)]
    print(machine())
    print(
        f"Numba threads: {os.environ.get('NUMBA_NUM_THREADS', 'default (all cores)')}; "
        "times in seconds, one run each; load average at start "
        f"{os.getloadavg()[0]:.1f}\n"
    )
    trees = [("", ROOT)] + ([("baseline ", Path(args.baseline).resolve())] if args.baseline else [])
    if args.warm:
        warm(names, trees, args.repeat)
        return
    cols = [
        "entry point",
        "f64 first (CPU)",
        "f64 second",
        "f32 first (CPU)",
        "f32 second",
        "f64 first, cached",
    ]
    rows = {label: [] for label, _ in trees}
    over = []
    total = {label: {"f64": 0.0, "f32": 0.0} for label, _ in trees}
    for name in names:
        for label, root in trees:
            with tempfile.TemporaryDirectory(prefix="sparsekit-cold-") as cache:
                t = run_child(ENTRY_POINTS[name], cache, ["float64", "float32"], root)
                if args.no_cached:
                    cached = "-"
                else:
                    again = run_child(ENTRY_POINTS[name], cache, ["float64"], root)
                    cached = f"{again['float64_first']:.2f}"
            total[label]["f64"] += t["float64_first_cpu"]
            total[label]["f32"] += t["float32_first_cpu"]
            if not label:
                for dt in ("float64", "float32"):
                    if t[f"{dt}_first_cpu"] > args.limit:
                        over.append(f"{name} ({dt}: {t[dt + '_first_cpu']:.2f} s CPU)")
            row = (
                f"| {name} | {t['float64_first']:.2f} ({t['float64_first_cpu']:.2f}) | "
                f"{t['float64_second']:.3f} | {t['float32_first']:.2f} "
                f"({t['float32_first_cpu']:.2f}) | {t['float32_second']:.3f} | {cached} |"
            )
            rows[label].append(row)
            print(f"{label or 'this tree'}: {row}", file=sys.stderr, flush=True)
    for label, root in trees:
        print(f"\n{label or 'this tree'} ({root}):\n")
        print("| " + " | ".join(cols) + " |")
        print("|" + "|".join("---" for _ in cols) + "|")
        print("\n".join(rows[label]))
        print(
            f"\nsum of first calls (CPU time): float64 {total[label]['f64']:.1f} s, "
            f"float32 {total[label]['f32']:.1f} s"
        )
    if over:
        print(f"\nover the {args.limit:g} s budget: " + "; ".join(over))
        if args.strict:
            sys.exit(1)
    else:
        print(f"\nevery first call within {args.limit:g} s per dtype")


if __name__ == "__main__":
    main()
