"""Shared helpers for the benchmark scripts: best-of-k wall time and table printing."""
import platform
import time

import numpy as np


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


def machine():
    """One line describing this machine (CPU, cores, Python, NumPy BLAS threads)."""
    import os

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}"


def print_table(rows, columns):
    """Print ``rows`` (dicts) as a Markdown table with the given ``columns``."""
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns]
    line = "| " + " | ".join(c.ljust(w) for c, w in zip(columns, widths)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(r.get(c, "")).ljust(w) for c, w in zip(columns, widths)) + " |")
