"""Label cost with leverage-score sampling, and Nyström classifiers on centroid landmarks.
=======================================================================================

1. Cherfaoui 2022 (PhD thesis), §3.3, Exp. 3.C (Fig. 3.5): the points to label are drawn ∝
   the scores of each sampler (DAC, recursive, two-pass "uniform" RLS, uniform sampling, exact
   RLS), kernel ridge is trained on them alone, and its test score is measured against the
   label budget (5 % to 70 % of the training split), over 20 repetitions (70/30 split with
   ``random_state = j``). Houses and KC1 do not ship offline: scikit-learn's ``diabetes``
   (regression, test MSE) and ``breast_cancer`` (binary classification, test accuracy) take
   their places, with :class:`~sparsekit.NystromRidge` and
   :class:`~sparsekit.NystromRidgeClassifier` in place of the thesis' KRR and SVM.
2. Giffon 2020 (PhD thesis), Table 3.3, "Nyström + SVM": :class:`~sparsekit.NystromRidgeClassifier`
   with K = 64 landmarks, uniform training points or the centroids of K-means and QuicK-means,
   on digits and breast cancer.

Each repetition is one run of the ``label-cost`` task, each data set of part 2 one run of the
``nystrom-classifier`` task (:mod:`sparsekit.experiments.label_cost`, which documents the
protocols); ``examples/specs/label_cost.toml`` and ``examples/specs/nystrom_classifier.toml``
run the same as specs.

It writes ``label_cost.png`` (score against the budget, mean ± standard deviation over the
repetitions) and ``label_cost.md`` (the tables) to ``--out`` (default ``examples/output/``).
``--quick`` runs tiny sizes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from sparsekit.experiments import label_cost as exp
from sparsekit.run import data as sources, run_task
from sparsekit.run.tables import format_table


def label_cost_tables(quick):
    """The two tables of part 1 (``--quick``: 150 points, 2 samplers, 2 budgets, 2 repetitions)."""
    tables = []
    for name in ("diabetes", "breast-cancer"):
        data = sources.SOURCES[name](n_samples=150 if quick else None)
        tables.append(
            exp.label_cost_table(
                data["X"],
                data["y"],
                samplers=("uniform", "dac-rls") if quick else exp.SAMPLERS,
                budgets=(0.1, 0.3) if quick else exp.BUDGETS,
                repetitions=2 if quick else 20,
                dataset=name,
            )
        )
    return tables


def landmark_table(quick, seeds):
    """Part 2: accuracy per landmark choice, mean ± std over ``seeds`` runs per data set."""
    rows = []
    for name in ("digits", "breast-cancer"):
        data = sources.SOURCES[name](n_samples=200 if quick else None)
        runs = [
            run_task(
                "nystrom-classifier",
                {"n_components": 8 if quick else 64},
                data,
                {"kernel": exp.KERNEL},
                seed=s,
            )
            for s in range(seeds)
        ]
        for k, choice in enumerate(exp.LANDMARKS):
            acc = [r[k]["accuracy"] for r in runs]
            rows.append([name, choice, f"{np.mean(acc):.4f} ± {np.std(acc):.4f}"])
    return format_table(
        ["data set", "landmarks", "test accuracy"],
        rows,
        title=f"Nyström ridge classifier, K landmarks, {seeds} split(s)",
    )


def plot(tables, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(tables), figsize=(5 * len(tables), 3.6))
    for ax, table in zip(np.atleast_1d(axes), tables):
        x = 100 * np.asarray(table.budgets)
        for s in table.samplers:
            cells = [table.scores[(s, b)] for b in table.budgets]
            mean = np.array([np.mean(c) for c in cells])
            std = np.array([np.std(c) for c in cells])
            ax.plot(x, mean, "o-", ms=3, label=s)
            ax.fill_between(x, mean - std, mean + std, alpha=0.15)
        ax.set_title(table.dataset)
        ax.set_xlabel("labelled points (% of the training split)")
        ax.set_ylabel(f"test {table.metric}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=(__doc__ or " ").splitlines()[0])
    # the gallery of the docs runs this file without __file__; sys.argv[0] is the file there
    ap.add_argument(
        "--out",
        default=str(Path(globals().get("__file__", sys.argv[0])).resolve().parent / "output"),
        help="directory for the PNG figure and the tables",
    )
    ap.add_argument("--quick", action="store_true", help="tiny sizes (seconds)")
    ap.add_argument("--seeds", type=int, default=None, help="splits of part 2 (default 1 / 3)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables = label_cost_tables(args.quick)
    seeds = args.seeds or (1 if args.quick else 3)
    text = "\n\n".join([*(t.format() for t in tables), landmark_table(args.quick, seeds)])
    print(text)
    (out / "label_cost.md").write_text(text + "\n")
    plot(tables, out / "label_cost.png")
    for f in ("label_cost.md", "label_cost.png"):
        print(f"wrote {out / f}")
    return tables


if __name__ == "__main__":
    main()
