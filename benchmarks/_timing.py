"""Shared helpers for the benchmark scripts: best-of-k wall time, thread counts, value checks,
Markdown tables."""

import os
import platform
import sys
import time

import numpy as np

#: value checks that failed (the script exits non-zero at the end when this is not empty)
FAILURES = []


def best_time(fn, repeat=3, warmup=1):
    """Best wall time of ``fn()`` over ``repeat`` runs after ``warmup`` untimed runs."""
    for _ in range(warmup):
        fn()
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def threads():
    """Threads sparsekit would use now (its one setting: n_jobs / Numba / threadpoolctl)."""
    from sparsekit._runtime.threads import effective_n_jobs

    return effective_n_jobs()


def blas_threads():
    """BLAS threads an anchor library gets now (threadpoolctl's limit)."""
    from sparsekit._runtime.threads import blas_threads as blas

    return blas()


def check(ok, what):
    """Record a failed value check (printed at once; the script exits 1 in :func:`finish`)."""
    if not ok:
        FAILURES.append(what)
        print(f"VALUE CHECK FAILED: {what}", file=sys.stderr)
    return ok


def finish():
    """Exit non-zero when any value check failed."""
    if FAILURES:
        print(f"\n{len(FAILURES)} value check(s) failed:", *FAILURES, sep="\n- ", file=sys.stderr)
        sys.exit(1)


def machine():
    """One line describing this machine (CPU, cores, Python, NumPy, load average)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"NumPy {np.__version__}; load average {load}"
    )


def _cell(value):
    return str(value).replace("|", "\\|").replace("\n", " ")


def print_table(rows, columns):
    """Print ``rows`` (dicts) as a Markdown table with the given ``columns`` (``|`` escaped)."""
    cells = [[_cell(r.get(c, "")) for c in columns] for r in rows]
    heads = [_cell(c) for c in columns]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(heads)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(heads, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
