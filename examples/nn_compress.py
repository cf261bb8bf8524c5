"""Compressing a network by products of sparse factors: Table 3.6 of Giffon's thesis (§3.4).
==========================================================================================

"PALMinize, then fine-tune": every dense and convolutional layer of a trained LeNet-style
network is replaced by a product of Q sparse factors (``splincol`` level K) found by
Palm4MSA, whose supports are then frozen while the network is fine-tuned. Two control variants
separate the roles of the values and of the supports: "reinit" keeps Palm4MSA's supports but
draws new values (He for the first factor, Xavier for the others, fan-in = non-zeros per
column), "random" draws random supports of the same levels too.

The thesis used MNIST (28 × 28) with LeNet; offline, this example uses scikit-learn's digits
(1,797 images of 8 × 8), so the network is scaled down (3 × 3 convolutions of 16 and 32
filters, dense layers of 64 and 32 units: 15,466 parameters) and trained for fewer epochs.
K = 14 is kept: as in the thesis' LeNet, the layers whose smaller side is at most K (here the
first convolution, 9 × 16, and the output layer, 32 × 10) cannot be made sparse at that level
and stay dense.

Each ``(Q, K)`` is one run of the ``compress`` experiment of the ``nn`` task
(:mod:`sparsekit.experiments.nn_compress`, which documents the protocol);
``examples/specs/nn_compress.toml`` is the same table as a spec. It writes
``nn_compress.png`` (accuracy after fine-tuning and against the number of parameters) and
``nn_compress.md`` (the table) to ``--out`` (default ``examples/output/``). The default sizes
are quick (a minute); ``--full`` runs Q ∈ {2, 3}, K ∈ {2, 14} with the thesis' settings
(Palm4MSA: 300 iterations; 100 epochs of training and of fine-tuning, the fine-tuning learning
rate chosen in {1e-3, 1e-4, 1e-5} after 10 epochs); ``--repeats N`` averages over seeds
0 … N − 1. The base network is trained at learning rate 1e-3 instead of the thesis' 1e-4: the
digits' 1,150 training images give 36 steps per epoch where MNIST's 40,000 give 1,250.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# Keras reads its backend once, when first imported: JAX unless the environment says otherwise
os.environ.setdefault("KERAS_BACKEND", "jax")

import numpy as np  # noqa: E402

from sparsekit.experiments.nn_compress import run_compress  # noqa: E402
from sparsekit.run import data as sources  # noqa: E402
from sparsekit.run.tasks import TaskContext  # noqa: E402

COLUMNS = [
    "Q",
    "K",
    "method",
    "accuracy",
    "before fine-tuning",
    "params",
    "compression",
    "layers replaced",
    "mean error",
    "max error",
    "lr",
]


def settings(full):
    """``(configurations, parameters)`` of the quick or the full run."""
    if full:
        configs = [(2, 2), (2, 14), (3, 2), (3, 14)]
        params = {"epochs": 100, "select_lr": True, "select_epochs": 10, "palm_iter": 300}
    else:
        configs = [(2, 2), (2, 14)]
        params = {"epochs": 4, "select_lr": False, "palm_iter": 30}
    return configs, params


def run(data, configs, params, seeds):
    """The rows of every seed and ``(Q, K)``: one run of the experiment each (a seed's base
    network is trained by its first run and reused by the others), with a ``seed`` column."""
    rows = []
    for seed in seeds:
        for Q, K in configs:
            p = {**params, "n_factors": Q, "sparsity": K}
            print(f"seed {seed}: Q={Q} K={K} ...", file=sys.stderr, flush=True)
            rows += [{**r, "seed": seed} for r in run_compress(TaskContext(data, {}, p, seed))]
    return rows


def mean_rows(rows):
    """One row per ``(Q, K, method)`` (the base network once): the mean over the seeds of each
    number, and the standard deviation of the accuracy (``accuracy_std``)."""
    groups, base_seeds = {}, set()
    for r in rows:
        if r["method"] == "base":
            if r["seed"] in base_seeds:  # every run of a seed repeats its base network's row
                continue
            base_seeds.add(r["seed"])
            key = ("-", "-", "base")
        else:
            key = (r["n_factors"], r["sparsity"], r["method"])
        groups.setdefault(key, []).append(r)
    out = []
    for (Q, K, method), rs in groups.items():
        mean = {
            k: float(np.mean([r[k] for r in rs]))
            for k in rs[0]
            if k not in ("method", "seed", "lr")
        }
        lrs = sorted({r["lr"] for r in rs})
        out.append(
            {
                **mean,
                "n_factors": Q,
                "sparsity": K,
                "method": method,
                "accuracy_std": float(np.std([r["accuracy"] for r in rs])),
                "lr": "/".join(f"{v:g}" for v in lrs),
                "n_seeds": len(rs),
            }
        )
    return out


def table_rows(means):
    """The mean rows formatted for the table."""
    base = means[0]
    out = []
    for r in means:
        acc = f"{r['accuracy']:.3f}" + (f" ± {r['accuracy_std']:.3f}" if r["n_seeds"] > 1 else "")
        is_base = r["method"] == "base"
        out.append(
            dict(
                zip(
                    COLUMNS,
                    [
                        r["n_factors"],
                        r["sparsity"],
                        r["method"],
                        acc,
                        "-" if is_base else f"{r['accuracy_before']:.3f}",
                        f"{r['params']:,.0f}",
                        f"{base['params'] / r['params']:.1f}",
                        "-" if is_base else f"{r['n_replaced']:.0f}",
                        "-" if is_base else f"{r['mean_error']:.3f}",
                        "-" if is_base else f"{r['max_error']:.3f}",
                        r["lr"],
                    ],
                )
            )
        )
    return out


def markdown(rows):
    head = "| " + " | ".join(COLUMNS) + " |"
    sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
    body = ["| " + " | ".join(str(r[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def plot(means, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = means
    base = rows[0]
    methods = ["palm", "reinit", "random"]
    labels = {"palm": "Palm4MSA init", "reinit": "re-init", "random": "random support"}
    configs = sorted({(r["n_factors"], r["sparsity"]) for r in rows if r["method"] != "base"})
    acc = {(r["n_factors"], r["sparsity"], r["method"]): r for r in rows}
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        vals = [acc[(q, k, m)]["accuracy"] for q, k in configs]
        errs = [acc[(q, k, m)]["accuracy_std"] for q, k in configs]
        ax.bar(np.arange(len(configs)) + (i - 1) * width, vals, width, yerr=errs, label=labels[m])
        pts = [acc[(q, k, m)] for q, k in configs if (q, k, m) in acc]
        ax2.plot([r["params"] for r in pts], [r["accuracy"] for r in pts], "o", label=labels[m])
    for a in (ax, ax2):
        a.axhline(base["accuracy"], color="k", ls="--", lw=1, label="base")
        a.set_ylabel("test accuracy after fine-tuning")
    ax.set_xticks(np.arange(len(configs)), [f"Q={q} K={k}" for q, k in configs])
    ax.set_ylim(0, 1.05)
    ax2.plot([base["params"]], [base["accuracy"]], "k*", ms=10)
    ax2.legend(fontsize=8, loc="lower right")
    ax2.set_xscale("log")
    ax2.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax2.set_xlabel("parameters (non-zeros of the factors + the dense layers)")
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
    ap.add_argument(
        "--full",
        action="store_true",
        help="Q in {2, 3}, K in {2, 14}, the thesis' settings, 40 epochs (minutes)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="the default quick sizes (accepted for the docs' gallery)",
    )
    ap.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="seeds 0 .. repeats-1 (split, initial weights, supports); the table "
        "and the figure show the mean (and the standard deviation)",
    )
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    configs, params = settings(args.full and not args.quick)
    if args.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {args.repeats}")
    rows = run(sources.SOURCES["digits"](), configs, params, range(args.repeats))
    means = mean_rows(rows)
    table = markdown(table_rows(means))
    print(table)
    (out / "nn_compress.md").write_text(table + "\n")
    plot(means, out / "nn_compress.png")
    for f in ("nn_compress.md", "nn_compress.png"):
        print(f"wrote {out / f}")
    return rows


if __name__ == "__main__":
    main()
