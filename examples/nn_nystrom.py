"""The adaptive Nyström layer: accuracy against parameters, and few-shot learning.
===============================================================================

Giffon's thesis (2020, Ch. 2; IJCNN 2019) puts a Nyström layer on top of frozen
convolutional features: the kernel vector of an input against L landmarks, times an L × L
matrix W initialised to K_LL^{-1/2} and trained by back-propagation (adaptive) or kept fixed
(:class:`sparsekit.nn.NystromLayer`). This example reproduces the shape of

- Fig. 2.2: test accuracy against the number of learned parameters, for a dense hidden layer
  of several widths and for adaptive and fixed Nyström layers with the linear, RBF and chi2
  kernels and several numbers of landmarks (mean ± std over repeats);
- Table 2.2: few-shot accuracy of the dense and adaptive Nyström models trained on 5 and 20
  labelled points per class (mean (std) over replicates).

The thesis' MNIST/SVHN/CIFAR cannot be downloaded here: the data are scikit-learn's digits
(8 × 8 grey levels) and 16 × 16 colour patches of scikit-learn's two sample photographs, with
the region of the photograph as the class (the ``sample-image-patches`` data source). Each
data set is one run of the ``nn`` task of ``sparsekit run``
(:mod:`sparsekit.experiments.nn_nystrom` documents the protocol);
``examples/specs/nn_nystrom_parameters.toml`` and ``examples/specs/nn_few_shot.toml`` run the
same experiments as specs. Needs the ``nn`` extra (``pip install "sparsekit[nn]"``).

It writes ``nn_nystrom_parameters.png`` (the figure) and ``nn_nystrom.md`` (both tables) to
``--out`` (default ``examples/output/``). The default sizes are small but train every model
properly: every point of both data sets, the convolutional part pretrained for 15 epochs, one
repeat of widths and L of 16 and 64, two few-shot replicates of 5 points per class (about two
minutes of CPU time). On digits the RBF and chi2 Nyström layers reach about 92–96 % with
L = 64 (the dense layer of width 64: about 97 %), as in the full run; the linear kernel's
layers trail, there too.
``--full`` runs the thesis' grid (10 repeats, 30 replicates: hours on a laptop's CPU);
``--repeats``, ``--few-shot-repeats``, ``--widths``, ``--landmarks`` and ``--n-samples`` change
one size. The full-size tables this example reproduces, with their command and their
comparison with the thesis' Fig. 2.2 and Table 2.2, are the section "Adaptive Nyström layer" of
the benchmark tables (``benchmarks/README.md``; on this site, :doc:`/guide/benchmarks`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from sparsekit.run import data as sources, run_task

DEFAULT_OUT = str(Path(globals().get("__file__", sys.argv[0])).resolve().parent / "output")

#: (title, data source, source parameters)
DATASETS = [("digits", "digits", {}), ("image patches", "sample-image-patches", {})]

KERNELS = ["linear", "rbf", "additive-chi2"]


def sizes(args):
    """The experiments' parameters at the chosen size."""
    if args.full:
        par = {
            "n_repeats": 10,
            "pretrain_epochs": 20,
            "epochs": 50,
            "widths": [2, 4, 8, 16, 32, 64, 128, 1024],
            "n_landmarks": [2, 4, 8, 16, 32, 64, 128],
        }
        few = {"n_repeats": 30, "pretrain_epochs": 20, "epochs": 200, "n_per_class": [5, 20]}
        n_samples = None
    else:
        par = {
            "n_repeats": 1,
            "pretrain_epochs": 15,
            "epochs": 30,
            "widths": [16, 64],
            "n_landmarks": [16, 64],
        }
        few = {"n_repeats": 2, "pretrain_epochs": 15, "epochs": 100, "n_per_class": [5]}
        n_samples = None
    for key, value in (
        ("n_repeats", args.repeats),
        ("widths", args.widths),
        ("n_landmarks", args.landmarks),
    ):
        if value is not None:
            par[key] = value
    if args.few_shot_repeats is not None:
        few["n_repeats"] = args.few_shot_repeats
    if args.n_samples is not None:
        n_samples = args.n_samples or None
    par.update(experiment="parameters", kernels=KERNELS, adaptive=[True, False])
    few.update(experiment="few-shot", kernels=KERNELS, width=64, n_landmarks=32)
    return par, few, n_samples


def load(source, params, n_samples):
    """The data set, or ``n_samples`` of its points drawn at random (seed 0)."""
    d = sources.SOURCES[source](**params)
    if n_samples is not None and n_samples < len(d["y"]):
        idx = np.sort(np.random.default_rng(0).choice(len(d["y"]), n_samples, replace=False))
        d = {k: v[idx] for k, v in d.items()}
    return d


def summarize(rows, keys):
    """Mean and std of ``accuracy`` (and the mean of ``n_params``) over the repeats of each
    distinct value of ``keys``, in first-seen order."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    return [
        dict(
            zip(keys, key),
            accuracy=float(np.mean([r["accuracy"] for r in g])),
            std=float(np.std([r["accuracy"] for r in g])),
            n_params=int(np.mean([r["n_params"] for r in g])),
            n=len(g),
        )
        for key, g in groups.items()
    ]


def plot_parameters(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 4), squeeze=False)
    colours = {"dense": "k", "linear": "C0", "rbf": "C1", "additive-chi2": "C2"}
    for ax, (title, rows) in zip(axes[0], results):
        summary = summarize(rows, ["label", "size"])
        for lab in dict.fromkeys(s["label"] for s in summary):
            pts = sorted(
                (s["n_params"], s["accuracy"], s["std"]) for s in summary if s["label"] == lab
            )
            x, m, sd = (np.array(v) for v in zip(*pts))
            kernel = "dense" if lab == "dense" else lab.split()[1]
            style = "--" if lab.endswith("fixed") else "-"
            ax.plot(x, m, style, marker="o", ms=3, color=colours.get(kernel), label=lab)
            ax.fill_between(x, m - sd, m + sd, color=colours.get(kernel), alpha=0.12)
        ax.set_xscale("log")
        ax.set_xlabel("learned parameters (top layers)")
        ax.set_ylabel("test accuracy")
        ax.set_title(title)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parameters_table(results):
    lines = [
        "| data | model | size | learned parameters | accuracy (std) |",
        "|---|---|---|---|---|",
    ]
    for title, rows in results:
        for s in summarize(rows, ["label", "size"]):
            lines.append(
                f"| {title} | {s['label']} | {s['size']} | {s['n_params']:,} | "
                f"{100 * s['accuracy']:.1f} ({100 * s['std']:.1f}) |"
            )
    return "\n".join(lines)


def few_shot_table(results):
    sizes_ = sorted({r["n_per_class"] for _, rows in results for r in rows})
    head = [f"{title} {k}" for title, _ in results for k in sizes_]
    lines = ["| model | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    labels = list(dict.fromkeys(r["label"] for _, rows in results for r in rows))
    for lab in labels:
        cells = []
        for _, rows in results:
            for k in sizes_:
                acc = [r["accuracy"] for r in rows if r["label"] == lab and r["n_per_class"] == k]
                cells.append(f"{100 * np.mean(acc):.1f} ({100 * np.std(acc):.1f})")
        lines.append(f"| {lab} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=(__doc__ or " ").splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="directory for the figure and the tables")
    ap.add_argument(
        "--full",
        action="store_true",
        help="the thesis' sizes (10 repeats, 30 replicates, every point)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="the small default sizes (for the documentation's gallery, which passes it)",
    )
    ap.add_argument("--repeats", type=int, help="repeats of the parameters experiment")
    ap.add_argument("--few-shot-repeats", type=int, help="replicates of the few-shot table")
    ap.add_argument("--widths", type=int, nargs="+", help="dense widths")
    ap.add_argument("--landmarks", type=int, nargs="+", help="numbers of landmarks L")
    ap.add_argument(
        "--n-samples", type=int, help="points drawn from each data set (0: all of them)"
    )
    args = ap.parse_args(argv)
    par, few, n_samples = sizes(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    par_results, few_results = [], []
    for title, source, params in DATASETS:
        d = load(source, params, n_samples)
        print(f"{title}: {len(d['y'])} points, parameters experiment", file=sys.stderr)
        par_results.append((title, run_task("nn", par, d, seed=0)))
        print(f"{title}: few-shot experiment", file=sys.stderr)
        few_results.append((title, run_task("nn", few, d, seed=0)))
    plot_parameters(par_results, out / "nn_nystrom_parameters.png")
    # bold titles, not headings: the gallery includes this file inside the example's page
    text = (
        "**Accuracy against learned parameters (Fig. 2.2)**\n\n"
        + parameters_table(par_results)
        + "\n\n**Few-shot accuracy, % (Table 2.2)**\n\n"
        + few_shot_table(few_results)
        + "\n"
    )
    (out / "nn_nystrom.md").write_text(text)
    print(text)
    print(f"files written to {out}")
    return par_results, few_results


if __name__ == "__main__":
    main()
