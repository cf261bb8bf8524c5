"""QuicK-means against K-means: the rows of Table 3.3 of Giffon's thesis (§3.3.5).
===============================================================================

For each dataset (scikit-learn's breast cancer and digits, and a generated Gaussian mixture
with N >= 100,000 points), K-means (scikit-learn, Lloyd) and QuicK-means start from the same
K-means++ centroids and report:

- the final K-means objective;
- the non-zeros and FLOPs (2 · nnz) of the centroid operator and the compression rate
  (K-means' K·D over QuicK-means' nnz);
- 1-NN accuracy with cluster-partitioned search: a test point goes to its nearest centroid
  (through the operator), then to its nearest training point of that cluster;
- the Nyström relative Frobenius error ``‖K − K̃‖_F / ‖K‖_F`` of the RBF kernel
  (γ = 1 / mean squared distance) with the K centroids as landmarks, on 5,000 training points.

Each data set is one run of the ``quickmeans`` task of ``sparsekit run``
(:mod:`sparsekit.experiments.quickmeans`, which documents the protocol);
``examples/specs/quickmeans.toml`` runs the same table as a spec. Each run draws its train/test
split from its own seed (0), so a data set's rows do not depend on the data sets before it.

It writes ``quickmeans_objective.png`` (objective against iteration), ``quickmeans_flops.png``
(FLOPs against K) and ``quickmeans.md`` (the table) to ``--out`` (default
``examples/output/``). ``--quick`` runs tiny sizes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from sparsekit.run import data as sources, run_task


def datasets(quick):
    """(name, data, K): the data sources ``breast-cancer``, ``digits`` and
    ``isotropic-mixture`` of ``sparsekit run``; ``--quick`` keeps their first 300 points."""
    n_gen = 3_000 if quick else 120_000
    out = [
        ("breast cancer", sources.SOURCES["breast-cancer"](), 64),
        ("digits", sources.SOURCES["digits"](), 64),
        (f"mixture N={n_gen:,}", sources.isotropic_mixture(n_gen), 64),
    ]
    if quick:
        out = [(name, {k: v[:300] for k, v in d.items()}, 8) for name, d, _ in out]
    return out


def run_dataset(name, data, K, args):
    """The two rows (K-means, QuicK-means) of one data set: one run of the ``quickmeans`` task
    (:mod:`sparsekit.experiments.quickmeans`), formatted for the table."""
    km, qk = run_task(
        "quickmeans",
        {
            "n_clusters": K,
            "sparsity": args.sparsity,
            "max_iter": args.max_iter,
            "palm_iter": args.palm_iter,
            "n_eval": 500 if args.quick else 5_000,
            "return_history": True,
        },
        data,
        seed=0,
    )
    rows = [
        dict(
            dataset=name,
            algorithm=r["algorithm"],
            objective=f"{r['objective']:.4e}",
            nnz=f"{r['nnz']:,}",
            flops=f"{r['flops']:,}",
            compression=f"{r['compression']:.1f}",
            nn1=f"{r['nn1_accuracy']:.4f}",
            nystrom=f"{r['nystrom_error']:.2e}",
            fit_s=f"{r['fit_time']:.2f}",
        )
        for r in (km, qk)
    ]
    return rows, qk, km


COLUMNS = [
    "dataset",
    "algorithm",
    "objective",
    "nnz",
    "flops",
    "compression",
    "nn1",
    "nystrom",
    "fit_s",
]


def markdown(rows):
    head = "| " + " | ".join(COLUMNS) + " |"
    sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
    body = ["| " + " | ".join(str(r[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def plot_objective(curves, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(4 * len(curves), 3.2))
    for ax, (name, hist, km_obj) in zip(np.atleast_1d(axes), curves):
        ax.plot(np.arange(1, len(hist) + 1), hist, "o-", ms=3, label="QuicK-means")
        ax.axhline(km_obj, color="k", ls="--", lw=1, label="K-means (final)")
        ax.set_title(name)
        ax.set_xlabel("iteration")
        ax.set_ylabel("objective")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_flops(ks, qk_flops, d, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    ax.plot(ks, [2 * k * d for k in ks], "s-", label="K-means (2KD)")
    ax.plot(ks, qk_flops, "o-", label="QuicK-means (2 nnz)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("K")
    ax.set_ylabel("FLOPs per point")
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
        help="directory for the PNG figures and the table",
    )
    ap.add_argument("--quick", action="store_true", help="tiny sizes (seconds)")
    args = ap.parse_args(argv)
    args.sparsity = 3
    args.max_iter = 3 if args.quick else 50
    args.palm_iter = 10 if args.quick else 300
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, curves = [], []
    data = datasets(args.quick)
    for name, points, K in data:
        r, qk, km = run_dataset(name, points, K, args)
        rows += r
        curves.append((name, qk["objective_history"], km["objective"]))
    table = markdown(rows)
    print(table)
    (out / "quickmeans.md").write_text(table + "\n")
    plot_objective(curves, out / "quickmeans_objective.png")
    # FLOPs against K on the generated mixture: QuicK-means alone, no Nyström error
    name, points, _ = data[-1]
    ks = [2, 4, 8] if args.quick else [8, 16, 32, 64, 128, 256]
    n_sub = 300 if args.quick else 20_000
    sub = {k: v[:n_sub] for k, v in points.items()}
    flops = [
        run_task(
            "quickmeans",
            {
                "n_clusters": k,
                "sparsity": args.sparsity,
                "max_iter": min(args.max_iter, 10),
                "palm_iter": args.palm_iter,
                "n_eval": 0,
                "compare": False,
            },
            sub,
            seed=0,
        )[0]["flops"]
        for k in ks
    ]
    plot_flops(ks, flops, points["X"].shape[1], out / "quickmeans_flops.png")
    for f in ("quickmeans.md", "quickmeans_objective.png", "quickmeans_flops.png"):
        print(f"wrote {out / f}")
    return rows


if __name__ == "__main__":
    main()
