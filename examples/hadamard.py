"""Hierarchical Palm4MSA recovers the Hadamard transform as k butterfly-like factors.
==================================================================================

The 2^k x 2^k Hadamard matrix is a product of k factors with 2 non-zeros per row and column
(Giffon 2020, PhD thesis, §3.2.1; Le Magoarou & Gribonval 2016, Fig. 3.2). Hierarchical
Palm4MSA with that budget (residuals halved per level, 30 iterations per Palm4MSA call)
factorizes it for k = 5..10; the table gives the relative error, the non-zeros against the
dense 4^k and the time, beside pyfaust's ``hierarchical(H, 'hadamard')`` when pyfaust is
installed (same thread count).

Writes ``hadamard.png`` (time and error against the size) and ``hadamard.md`` to ``--out``
(default ``examples/output/``); ``--quick`` runs k = 3..5.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from sparsekit.run import data, run_task


def pyfaust_hierarchical():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pyfaust.fact
    except ImportError:
        return None
    return lambda H: pyfaust.fact.hierarchical(H, "hadamard").toarray()


def run(ks):
    """One ``palm4msa`` task run per k (``examples/specs/palm4msa.toml`` as a spec)."""
    faust = pyfaust_hierarchical()
    solver = {"solver": {"name": "hierarchical-palm4msa", "n_iter": 30}}
    run_task("palm4msa", {"n_factors": 2, "sparsity": 2}, data.hadamard(n=4), solver)  # compile
    rows = []
    for k in ks:
        points = data.hadamard(n=2**k)
        H = points["X"]
        res = run_task("palm4msa", {"n_factors": k, "sparsity": 2}, points, solver)
        row = dict(
            size=f"{2**k}",
            factors=k,
            nnz=f"{res['nnz']:,}",
            dense=f"{4**k:,}",
            err=f"{res['rel_error']:.2e}",
            time_s=f"{res['time']:.2f}",
            faust_err="—",
            faust_s="—",
        )
        if faust is not None:
            t0 = time.perf_counter()
            F = faust(H)
            row["faust_s"] = f"{time.perf_counter() - t0:.2f}"
            row["faust_err"] = f"{np.linalg.norm(F - H) / np.linalg.norm(H):.2e}"
        print("  " + ", ".join(f"{c}={row[c]}" for c in COLUMNS), flush=True)
        rows.append(row)
    return rows


COLUMNS = ["size", "factors", "nnz", "dense", "err", "time_s", "faust_err", "faust_s"]


def markdown(rows):
    head = "| " + " | ".join(COLUMNS) + " |"
    sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
    return "\n".join(
        [head, sep] + ["| " + " | ".join(str(r[c]) for c in COLUMNS) + " |" for r in rows]
    )


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [int(r["size"]) for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3.2))
    a.plot(sizes, [float(r["time_s"]) for r in rows], "o-", label="sparsekit")
    b.plot(sizes, [max(float(r["err"]), 1e-17) for r in rows], "o-", label="sparsekit")
    if rows[0]["faust_s"] != "—":
        a.plot(sizes, [float(r["faust_s"]) for r in rows], "s--", label="pyfaust")
        b.plot(sizes, [max(float(r["faust_err"]), 1e-17) for r in rows], "s--", label="pyfaust")
    for ax, lab in ((a, "time (s)"), (b, "relative error")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("size 2^k")
        ax.set_ylabel(lab)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=(__doc__ or " ").splitlines()[0])
    # the gallery of the docs runs this file without __file__; sys.argv[0] is the file there
    ap.add_argument(
        "--out",
        default=str(Path(globals().get("__file__", sys.argv[0])).resolve().parent / "output"),
        help="directory for the PNG figure and the table",
    )
    ap.add_argument("--quick", action="store_true", help="k = 3..5 only")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = run(range(3, 6) if args.quick else range(5, 11))
    table = markdown(rows)
    print(table)
    (out / "hadamard.md").write_text(table + "\n")
    plot(rows, out / "hadamard.png")
    print(f"wrote {out / 'hadamard.md'}\nwrote {out / 'hadamard.png'}")
    return rows


if __name__ == "__main__":
    main()
