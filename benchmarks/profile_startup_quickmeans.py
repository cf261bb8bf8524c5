"""Where QuicKMeans' first call on a filled Numba cache goes, stage by stage.

Fresh processes on a filled ``NUMBA_CACHE_DIR`` (the data and estimator of
``bench_cold_start.py --warm``: 600 × 16 points, ``QuicKMeans(n_clusters=4, max_iter=5,
palm_iter=20)``) time, in this order: ``import sparsekit``; one trivial cached ``@njit``
function (Numba's import and first-call initialisation: the floor of every entry point); the
registry's lookup of ``"palm4msa"``; ``effective_n_jobs()`` (threadpoolctl's scan and the start
of Numba's thread pool); the QuicKMeans module (SciPy's sparse package) and the
``SparseFactors`` module (``scipy.sparse.linalg``); the first fit; a second fit (the fit's own
work). Prints the median and minimum of ``--repeat`` processes per tree, the trees (this one
and ``--baseline DIR``) alternating, with each tree's Numba and BLAS thread counts; exits 1 if
the trees' fitted centroids differ.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import time
T0 = time.perf_counter()
import hashlib, json, os, sys
import numpy as np
X = np.random.default_rng(0).random((600, 16))
import sparsekit
stamps = [("import sparsekit", time.perf_counter())]
sys.path.insert(0, os.environ["NUMBA_CACHE_DIR"])
import sparsekit_floor
sparsekit_floor.total(X[0])
stamps.append(("Numba floor (one cached function)", time.perf_counter()))
sparsekit.get_factorizer("palm4msa"); stamps.append(("registry lookup", time.perf_counter()))
from sparsekit._runtime.threads import blas_threads, effective_n_jobs
n_jobs = effective_n_jobs(None); stamps.append(("effective_n_jobs", time.perf_counter()))
Q = sparsekit.QuicKMeans; stamps.append(("QuicKMeans module", time.perf_counter()))
import sparsekit.linalg.sparse_factors; stamps.append(("SparseFactors module", time.perf_counter()))
km = Q(n_clusters=4, max_iter=5, palm_iter=20, random_state=0).fit(X)
stamps.append(("first fit", time.perf_counter()))
Q(n_clusters=4, max_iter=5, palm_iter=20, random_state=0).fit(X)
stamps.append(("second fit", time.perf_counter()))
import numba
out, prev = {}, T0
for name, t in stamps:
    out[name] = 1000 * (t - prev)
    prev = t
out["to the end of the first fit"] = 1000 * (stamps[-2][1] - T0)
out["threads"] = f"Numba {numba.get_num_threads()}, BLAS {blas_threads()}, n_jobs {n_jobs}"
out["threads"] += f" (sparsekit from {os.path.dirname(sparsekit.__file__)})"
out["centres"] = hashlib.sha256(km.cluster_centers_.toarray().tobytes()).hexdigest()
print("RESULT " + json.dumps(out))
"""

FLOOR = """
import numba

@numba.njit(cache=True, nogil=True)
def total(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s
"""


def run(root, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(root))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # cwd: ``python -c`` puts it first on sys.path, before PYTHONPATH
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, cwd=root
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"child failed:\n{proc.stdout}\n{proc.stderr}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="another sparsekit checkout, timed alternately")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    trees = [("this tree", ROOT)]
    if args.baseline:
        trees.append(("baseline", Path(args.baseline).resolve()))
    print(f"load average at start {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="sparsekit-qkstart-") as tmp:
        caches = {}
        for label, root in trees:
            caches[label] = Path(tmp) / label.replace(" ", "_")
            caches[label].mkdir()
            (caches[label] / "sparsekit_floor.py").write_text(FLOOR)
            run(root, caches[label])  # fills the cache
        runs = {label: [] for label, _ in trees}
        for _ in range(args.repeat):
            for label, root in trees:
                runs[label].append(run(root, caches[label]))
    print(f"load average at the end {os.getloadavg()[0]:.1f}; milliseconds, {args.repeat} runs")
    stages = [k for k in runs["this tree"][0] if k not in ("threads", "centres")]
    header = "| stage | " + " | ".join(f"{lab}: median | min" for lab, _ in trees) + " |"
    print(f"\n{header}\n|---|" + "---|---|" * len(trees))
    for stage in stages:
        cells = []
        for label, _ in trees:
            vals = [r[stage] for r in runs[label]]
            cells.append(f"{statistics.median(vals):.1f} | {min(vals):.1f}")
        print(f"| {stage} | " + " | ".join(cells) + " |")
    for label, root in trees:
        print(f"{label} ({root}): threads {runs[label][0]['threads']}")
    hashes = {r["centres"] for label, _ in trees for r in runs[label]}
    print("fitted centroids identical across trees and runs" if len(hashes) == 1 else "DIFFER")
    sys.exit(0 if len(hashes) == 1 else 1)


if __name__ == "__main__":
    main()
