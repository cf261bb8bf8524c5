"""Random features: sparsekit against scikit-learn's ``RBFSampler`` and scikit-learn-extra's
``Fastfood``, in one process.

Run: ``python benchmarks/bench_features.py`` (``--quick`` for small sizes). Each row times
``fit_transform`` of both libraries on the same float64 data (n = 20,000, d = 64, 2,048
output features; quick: n = 2,000, 512 features), best of 3 after one warm-up run, first with
every library's default threads and then with everything limited to one thread
(``sparsekit.thread_limit(1)``, which limits BLAS for the anchor too).

The two libraries draw different random features (scikit-learn: one cosine with a random phase
per feature; sparsekit: a cosine and a sine per frequency), so their outputs cannot be compared
entry by entry. The value check compares what both estimate: the mean absolute error of
Z Zᵀ against the exact Gaussian Gram matrix on 1,000 points. sparsekit's error must not exceed
1.5× the anchor's (the cos/sin pair has the lower variance); the script exits 1 otherwise.
"""

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, blas_threads, check, finish, machine, print_table, threads  # noqa: E402

import sparsekit  # noqa: E402

COLUMNS = [
    "case",
    "threads (sparsekit / anchor)",
    "sparsekit (s)",
    "anchor (s)",
    "anchor",
    "speed-up",
    "Gram error sparsekit / anchor",
]


def _gram_error(Z, K):
    return float(np.mean(np.abs(Z @ Z.T - K)))


def fastfood_anchor():
    """scikit-learn-extra's ``Fastfood`` class, or ``(None, reason)`` when it does not import."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from sklearn_extra.kernel_approximation import Fastfood
        return Fastfood, None
    except Exception as exc:  # ImportError, or a binary built for another NumPy (ValueError)
        return None, f"{type(exc).__name__}: {exc}"


def bench(quick):
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.metrics.pairwise import rbf_kernel

    n, d, D = (2000, 64, 512) if quick else (20_000, 64, 2048)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    gamma = 0.5
    Xe = X[:1000]
    K = rbf_kernel(Xe, gamma=gamma)
    FastfoodAnchor, why = fastfood_anchor()
    cases = [
        (
            "random Fourier features",
            "sklearn RBFSampler",
            lambda: sparsekit.RandomFourierFeatures(
                "rbf", gamma=gamma, n_components=D, random_state=0
            ),
            lambda: RBFSampler(gamma=gamma, n_components=D, random_state=0),
        )
    ]
    if FastfoodAnchor is not None:
        cases.append(
            (
                "Fastfood",
                "sklearn_extra Fastfood",
                lambda: sparsekit.Fastfood(gamma=gamma, n_components=D, random_state=0),
                lambda: FastfoodAnchor(
                    sigma=np.sqrt(1.0 / (2 * gamma)), n_components=D, random_state=0
                ),
            )
        )
    else:
        print(
            f"Note: scikit-learn-extra's Fastfood is not importable here ({why}); its row "
            "is skipped and sparsekit's Fastfood is checked against the exact Gram only.\n"
        )
    rows = []
    for name, anchor, ours, theirs in cases:
        err_ours = _gram_error(ours().fit(X).transform(Xe), K)
        err_anchor = _gram_error(theirs().fit(X).transform(Xe), K)
        check(
            err_ours <= 1.5 * err_anchor,
            f"{name}: Gram error {err_ours:.3g} > 1.5 x the anchor's {err_anchor:.3g}",
        )
        for limit in (None, 1):

            def run():
                t_ours = best_time(lambda: ours().fit_transform(X))
                t_anchor = best_time(lambda: theirs().fit_transform(X))
                return t_ours, t_anchor, f"{threads()} / {blas_threads()} (BLAS)"

            if limit is None:
                t_ours, t_anchor, used = run()
            else:
                with sparsekit.thread_limit(limit):
                    t_ours, t_anchor, used = run()
            rows.append(
                {
                    "case": f"{name} fit+transform, n={n}, d={d}, {D} features, f64",
                    "threads (sparsekit / anchor)": used,
                    "sparsekit (s)": f"{t_ours:.3f}",
                    "anchor (s)": f"{t_anchor:.3f}",
                    "anchor": anchor,
                    "speed-up": f"{t_anchor / t_ours:.2f}x",
                    "Gram error sparsekit / anchor": f"{err_ours:.2e} / {err_anchor:.2e}",
                }
            )
    if FastfoodAnchor is None:
        err = _gram_error(
            sparsekit.Fastfood(gamma=gamma, n_components=D, random_state=0).fit(X).transform(Xe), K
        )
        err_rff = _gram_error(cases[0][2]().fit(X).transform(Xe), K)
        check(err <= 1.5 * err_rff, f"Fastfood: Gram error {err:.3g} > 1.5 x RFF's {err_rff:.3g}")
        t = best_time(
            lambda: sparsekit.Fastfood(gamma=gamma, n_components=D, random_state=0).fit_transform(X)
        )
        rows.append(
            {
                "case": f"Fastfood fit+transform, n={n}, d={d}, {D} features, f64",
                "threads (sparsekit / anchor)": f"{threads()} / -",
                "sparsekit (s)": f"{t:.3f}",
                "anchor (s)": "-",
                "anchor": "sklearn_extra Fastfood: not importable",
                "speed-up": "-",
                "Gram error sparsekit / anchor": f"{err:.2e} / - (RFF: {err_rff:.2e})",
            }
        )
    return rows


def main(quick=False):
    print(f"Machine: {machine()}\n")
    print_table(bench(quick), COLUMNS)
    finish()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    main(parser.parse_args().quick)
