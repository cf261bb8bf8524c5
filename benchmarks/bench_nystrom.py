"""Nyström: sparsekit ``Nystroem`` against scikit-learn's, and landmark quality per sampler.

Run: ``python benchmarks/bench_nystrom.py`` (``--quick`` for small sizes). In one process:

1. Speed: ``Nystroem`` fit + transform with the uniform sampler, RBF kernel, n = 50,000,
   d = 54, 1,000 components (quick: n = 5,000, 200 components), against
   ``sklearn.kernel_approximation.Nystroem`` on the same data; target: no slower. The values are
   checked equal on the same landmarks first.
2. Quality: mean Frobenius error ‖K_E − K̂_E‖_F (E = 10,000 random points, or all) at 2% and 5%
   of n landmarks for uniform, DAC-RLS and recursive RLS, on scikit-learn's digits (200 draws)
   and on the generated 50,000-point mixture of :mod:`sparsekit.experiments.nystrom` (10
   draws), the Chapter 3 protocol; target: DAC-RLS and recursive RLS below uniform on both.
   Each difference to uniform is printed with its standard error and called below / above /
   tie at two standard errors.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, machine, print_table  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit.experiments import nystrom as exp  # noqa: E402
from sparsekit.samplers.base import Landmarks  # noqa: E402


class _GivenLandmarks:
    accepts = ("vectors",)

    def __init__(self, indices):
        self.indices = np.asarray(indices)

    def sample(self, X, kernel, n_landmarks, random_state=None):
        return Landmarks(self.indices, X[self.indices], np.ones(len(self.indices)))


def bench_speed(quick):
    from sklearn.kernel_approximation import Nystroem as SkNystroem

    n, m = (5000, 200) if quick else (50_000, 1000)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 54))
    gamma = 1.0 / 54

    # same landmarks -> same features (checked on a slice to keep it short)
    sk = SkNystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=0).fit(X)
    ours = sparsekit.Nystroem("rbf", sampler=_GivenLandmarks(sk.component_indices_),
                              n_components=m, kernel_params={"gamma": gamma}).fit(X)
    diff = np.abs(ours.transform(X[:2000]) - sk.transform(X[:2000])).max()

    rows = []
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)

        def run_ours():
            return sparsekit.Nystroem("rbf", sampler="uniform", n_components=m,
                                      kernel_params={"gamma": gamma},
                                      random_state=0).fit_transform(Xd)

        def run_sklearn():
            return SkNystroem(kernel="rbf", gamma=gamma, n_components=m,
                              random_state=0).fit_transform(Xd)

        t_ours = best_time(run_ours, repeat=2 if quick else 3)
        t_sk = best_time(run_sklearn, repeat=2 if quick else 3)
        rows.append({
            "case": f"fit+transform n={n}, d=54, m={m}, {np.dtype(dtype).name}",
            "sparsekit (s)": f"{t_ours:.3f}", "sklearn (s)": f"{t_sk:.3f}",
            "speed-up": f"{t_sk / t_ours:.2f}x",
            "max |diff|, same landmarks": f"{diff:.1e}" if dtype == np.float64 else "",
            "target": ">= 1x",
        })
    print_table(rows, list(rows[0]))
    return rows


def _versus_uniform(table, sampler, count):
    """``(mean difference to uniform, its standard error)`` over the independent draws."""
    e, u = table.errors[(sampler, count)], table.errors[("uniform", count)]
    se = np.sqrt(e.var(ddof=1) / len(e) + u.var(ddof=1) / len(u))
    return float(e.mean() - u.mean()), float(se)


def _verdict(diff, se):
    """below / above uniform when the difference is beyond two standard errors, else a tie."""
    if diff + 2 * se < 0:
        return "below"
    if diff - 2 * se > 0:
        return "above"
    return "tie"


def bench_quality(quick):
    from sklearn.datasets import load_digits

    digits = load_digits().data / 16.0
    n_gen = 5000 if quick else 50_000
    # digits is small (exact Gram on every point), so it gets many draws: its differences are
    # small and 10 draws cannot tell them from noise
    datasets = [("digits", digits, 5 if quick else 200),
                (f"generated mixture n={n_gen}, d=54",
                 exp.generated_dataset(n=n_gen, d=54, random_state=0), 3 if quick else 10)]
    n_eval = 2000 if quick else 10_000
    samplers = ("uniform", "dac-rls", "recursive-rls")
    rows = []
    for name, X, n_draws in datasets:
        n = X.shape[0]
        counts = [max(1, round(0.02 * n)), max(1, round(0.05 * n))]
        table = exp.frobenius_error_table(X, samplers=samplers, landmark_counts=counts,
                                          n_draws=n_draws, n_eval=n_eval, dataset=name,
                                          random_state=0)
        print(f"{n_draws} draws")
        print(table.format())
        print()
        for c, pct in zip(counts, ("2%", "5%")):
            uni = table.mean_std("uniform", c)[0]
            row = {"dataset": name, "draws": n_draws, "|S|": f"{c} ({pct})",
                   "uniform": f"{uni:.4g}"}
            below = True
            for s in ("dac-rls", "recursive-rls"):
                diff, se = _versus_uniform(table, s, c)
                row[s] = f"{uni + diff:.4g}"
                row[f"{s} - uniform (± s.e.)"] = f"{diff:+.3g} ± {se:.2g} ({_verdict(diff, se)})"
                below &= diff < 0
            row["target met (means)"] = "yes" if below else "NO"
            rows.append(row)
    print_table(rows, list(rows[0]))
    return rows


def main(quick=False):
    print(f"# bench_nystrom ({'quick' if quick else 'full'}) — {machine()}\n")
    print("## Nystroem fit + transform, uniform landmarks, RBF\n")
    bench_speed(quick)
    print("\n## Mean Frobenius error, 2% and 5% of n landmarks\n")
    bench_quality(quick)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    main(quick=parser.parse_args().quick)
