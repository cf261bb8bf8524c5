"""MMD estimators, tests and kernel k-means against hyppo, scikit-learn and tslearn.

Run: ``python benchmarks/bench_stats.py`` (``--quick`` for small sizes, ``--threads T`` to
run both sides with T threads; default: every usable CPU; ``--repeat N`` for best of N of the
MMD statistics and permutation tests). All in one process, best of N after a warm-up (Numba
compiled), both sides under the same ``thread_limit``:

1. Nyström MMD (RBF, 20 landmarks) between two samples of n = 100,000 points, d = 10;
   target < 1 s (aim 0.2 s).
2. n = 5,000 per sample: Nyström MMD against the exact MMD (target ≥ 50× faster) and
   against hyppo's ``MMD`` test; tests compared by their decisions at α = 0.05 on a null
   (same distribution) and an alternative (one coordinate scaled by 1.5); the check is that
   both decide alike, and that the alternative is detected. hyppo's statistic is not MMD², so
   only times and decisions are compared.
3. Exact MMD² at n = 20,000 per sample, d = 10, in row blocks, against the same statistic from
   scikit-learn's ``pairwise_kernels`` (three Gram matrices); values must agree to 1e-9;
   peak RSS after each side.
4. Kernel k-means: Nyström (500 landmarks, uniform and the poster's greedy-trace with its
   random-feature sketch) at n = 100,000, d = 20 (target < 20 s); exact at n = 5,000 against
   tslearn's ``KernelKMeans`` (same kernel, n_init = 1, three seeds), the objective of both
   recomputed from the labels (tslearn's ``inertia_`` leaves out the ‖μ_j‖² term); target: no
   slower at an equal or lower objective.

Exits non-zero when a check of agreement fails.
"""

import argparse
import os
import resource
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, machine, print_table  # noqa: E402

from sparsekit import KernelKMeans  # noqa: E402
from sparsekit._runtime.threads import effective_n_jobs, thread_limit  # noqa: E402
from sparsekit.stats import mmd2_biased, mmd2_nystrom, permutation_test  # noqa: E402

FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print(f"CHECK FAILED: {what}")


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def two_samples(n, d, rng, scale=1.0):
    X = rng.standard_normal((n, d))
    Y = rng.standard_normal((n, d))
    Y[:, 0] *= scale
    return X, Y


def bench_nystrom_large(quick, threads, repeat):
    n = 20_000 if quick else 100_000
    X, Y = two_samples(n, 10, np.random.default_rng(0), 1.01)
    kp = {"gamma": 0.05}
    t = best_time(
        lambda: mmd2_nystrom(X, Y, kernel_params=kp, n_landmarks=20, random_state=0), repeat=repeat
    )
    return [
        {
            "case": f"Nyström MMD² n={n:,}+{n:,}, d=10, s=20",
            "sparsekit (s)": f"{t:.3f}",
            "anchor (s)": "",
            "anchor": "",
            "ratio": "",
            "threads": threads,
            "agreement": "",
            "target": "< 1 s (aim 0.2 s)",
        }
    ]


def bench_mmd_5000(quick, threads, repeat, anchor_repeat):
    from hyppo.ksample import MMD

    n = 1000 if quick else 5000
    rng = np.random.default_rng(1)
    gamma = 0.05
    kp = {"gamma": gamma}
    rows = []
    X, Y = two_samples(n, 10, rng)
    t_ny = best_time(
        lambda: mmd2_nystrom(X, Y, kernel_params=kp, n_landmarks=20, random_state=0), repeat=repeat
    )
    t_ex = best_time(lambda: mmd2_biased(X, Y, kernel_params=kp), repeat=repeat)
    rows.append(
        {
            "case": f"MMD² n={n:,}+{n:,}, d=10: Nyström (s=20) vs exact",
            "sparsekit (s)": f"{t_ny:.4f}",
            "anchor (s)": f"{t_ex:.3f}",
            "anchor": "sparsekit exact (blocked)",
            "ratio": f"{t_ex / t_ny:.0f}x",
            "threads": threads,
            "agreement": "",
            "target": ">= 50x",
        }
    )
    decisions = []
    for label, scale in (("null", 1.0), ("alternative", 1.5)):
        X, Y = two_samples(n, 10, rng, scale)
        ours = permutation_test(
            X, Y, "nystrom", kernel_params=kp, n_landmarks=20, n_permutations=200, random_state=0
        )
        hy = MMD(compute_kernel="rbf", gamma=gamma).test(X, Y, auto=True, random_state=0)
        t_ours = best_time(
            lambda: permutation_test(
                X,
                Y,
                "nystrom",
                kernel_params=kp,
                n_landmarks=20,
                n_permutations=200,
                random_state=0,
            ),
            repeat=repeat,
        )
        t_stat = best_time(
            lambda: mmd2_nystrom(X, Y, kernel_params=kp, n_landmarks=20, random_state=0),
            repeat=repeat,
        )
        t_hy = best_time(
            lambda: MMD(compute_kernel="rbf", gamma=gamma).test(X, Y, auto=True, random_state=0),
            repeat=max(1, anchor_repeat - 1),
        )
        same = (ours.p_value < 0.05) == (hy.pvalue < 0.05)
        decisions.append(same)
        check(same, f"decision differs from hyppo on the {label}")
        if label == "alternative":  # (on the null a rejection is a 5% event, not a failure)
            check(ours.p_value < 0.05, "Nyström permutation test misses the alternative")
        rows.append(
            {
                "case": f"two-sample test, {label}, n={n:,}+{n:,}: Nyström permutation test "
                f"(200 perms) vs hyppo MMD (chi² approx.)",
                "sparsekit (s)": f"{t_ours:.4f}",
                "anchor (s)": f"{t_hy:.3f}",
                "anchor": "hyppo",
                "ratio": f"{t_hy / t_ours:.0f}x",
                "threads": f"{threads} / 1 worker + BLAS",
                "agreement": f"p = {ours.p_value:.3f} vs {hy.pvalue:.3g}, same decision: {same}",
                "target": "faster",
            }
        )
        rows.append(
            {
                "case": f"  statistic only ({label}): Nyström MMD² vs hyppo test",
                "sparsekit (s)": f"{t_stat:.4f}",
                "anchor (s)": f"{t_hy:.3f}",
                "anchor": "hyppo",
                "ratio": f"{t_hy / t_stat:.0f}x",
                "threads": threads,
                "agreement": "",
                "target": "faster",
            }
        )
    return rows


def bench_exact_20000(quick, threads):
    from sklearn.metrics.pairwise import pairwise_kernels

    n = 4000 if quick else 20_000
    X, Y = two_samples(n, 10, np.random.default_rng(2), 1.1)
    gamma = 0.05
    rss0 = peak_rss_mib()
    t0 = time.perf_counter()
    ours = mmd2_biased(X, Y, kernel_params={"gamma": gamma})
    t_ours = time.perf_counter() - t0
    rss_ours = peak_rss_mib()

    def sklearn_mmd():
        total = 0.0
        for A, B, w in ((X, X, 1.0), (Y, Y, 1.0), (X, Y, -2.0)):
            K = pairwise_kernels(A, B, metric="rbf", gamma=gamma)
            total += w * K.sum() / (len(A) * len(B))
            del K
        return total

    t0 = time.perf_counter()
    ref = sklearn_mmd()
    t_sk = time.perf_counter() - t0
    rss_sk = peak_rss_mib()
    rel = abs(ours - ref) / abs(ref)
    check(rel < 1e-9, f"exact MMD² differs from scikit-learn's by {rel:.1e}")
    return [
        {
            "case": f"exact MMD² n={n:,}+{n:,}, d=10 (one run each)",
            "sparsekit (s)": f"{t_ours:.2f}",
            "anchor (s)": f"{t_sk:.2f}",
            "anchor": "sklearn pairwise_kernels",
            "ratio": f"{t_sk / t_ours:.2f}x",
            "threads": threads,
            "agreement": f"rel. diff {rel:.1e}; peak RSS {rss_ours:.0f} MiB (from {rss0:.0f}) "
            f"vs {rss_sk:.0f} MiB",
            "target": ">= 1x, bounded memory",
        }
    ]


def kkm_objective(K, labels):
    total = 0.0
    for j in np.unique(labels):
        m = labels == j
        Kj = K[np.ix_(m, m)]
        total += np.trace(Kj) - Kj.sum() / m.sum()
    return total


def bench_kmeans(quick, threads, repeat):
    from sklearn.datasets import make_blobs
    from sklearn.metrics.pairwise import rbf_kernel
    from tslearn.clustering import KernelKMeans as TsKernelKMeans

    rows = []
    n = 20_000 if quick else 100_000
    X, _ = make_blobs(n, n_features=20, centers=10, cluster_std=3.0, random_state=0)
    gamma = 1.0 / (2 * 20 * 9.0)
    # the sketch spans at most n_features dimensions: f >= the 500 landmarks asked for
    for sampler, params in (
        ("uniform", None),
        ("greedy-trace", {"approximate": True, "n_features": 512}),
    ):
        est = KernelKMeans(
            10,
            sampler=sampler,
            sampler_params=params,
            n_landmarks=500,
            method="nystrom",
            n_init=1,
            kernel_params={"gamma": gamma},
            random_state=0,
        )
        t = best_time(lambda: est.fit(X), repeat=1, warmup=0)
        rows.append(
            {
                "case": f"kernel k-means, Nyström {sampler}, 500 landmarks, n={n:,}, d=20, k=10",
                "sparsekit (s)": f"{t:.2f}",
                "anchor (s)": "",
                "anchor": "",
                "ratio": "",
                "threads": threads,
                "agreement": f"{est.nystroem_.n_components_} landmarks kept, residual "
                f"trace {est.residual_trace_:.4g}, inertia {est.inertia_:.6g}",
                "target": "< 20 s",
            }
        )
    n = 1000 if quick else 5000
    X, _ = make_blobs(n, n_features=20, centers=10, cluster_std=3.0, random_state=1)
    K = rbf_kernel(X, gamma=gamma)
    t_ours = t_ts = 0.0
    obj_ours, obj_ts = [], []
    for seed in range(3):
        ours = KernelKMeans(
            10, method="exact", n_init=1, kernel_params={"gamma": gamma}, random_state=seed
        )
        ts = TsKernelKMeans(
            10,
            kernel="rbf",
            kernel_params={"gamma": gamma},
            n_init=1,
            max_iter=300,
            tol=1e-6,
            random_state=seed,
        )
        t_ours += best_time(lambda: ours.fit(X), repeat=repeat, warmup=1 if seed == 0 else 0)
        t_ts += best_time(lambda: ts.fit(X), repeat=repeat, warmup=1 if seed == 0 else 0)
        obj_ours.append(kkm_objective(K, ours.labels_))
        obj_ts.append(kkm_objective(K, ts.labels_))
        check(
            abs(obj_ours[-1] - ours.inertia_) <= 1e-8 * obj_ours[-1],
            "KernelKMeans.inertia_ differs from the recomputed objective",
        )
    mo, mt = np.mean(obj_ours), np.mean(obj_ts)
    check(mo <= mt * (1 + 1e-9), f"kernel k-means objective {mo:.6g} above tslearn's {mt:.6g}")
    rows.append(
        {
            "case": f"exact kernel k-means n={n:,}, d=20, k=10 (3 seeds, total)",
            "sparsekit (s)": f"{t_ours:.2f}",
            "anchor (s)": f"{t_ts:.2f}",
            "anchor": "tslearn KernelKMeans",
            "ratio": f"{t_ts / t_ours:.2f}x",
            "threads": threads,
            "agreement": f"mean objective {mo:.6g} vs {mt:.6g}",
            "target": ">= 1x at <= objective",
        }
    )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--threads", type=int, default=-1, help="threads for both sides")
    parser.add_argument(
        "--only", default="", help="comma-separated sections: large,5000,exact,kmeans"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="best of N for the MMD statistics and the permutation tests (default "
        "3, 2 with --quick; hyppo and tslearn keep the default)",
    )
    args = parser.parse_args()
    threads = effective_n_jobs(args.threads)
    repeat = 2 if args.quick else 3
    fast_repeat = repeat if args.repeat is None else max(1, args.repeat)
    print(f"Machine: {machine()}; {threads} thread(s) for both sides")
    sections = {  # exact first: its peak RSS is read before anything else grows the process
        "exact": lambda: bench_exact_20000(args.quick, threads),
        "large": lambda: bench_nystrom_large(args.quick, threads, fast_repeat),
        "5000": lambda: bench_mmd_5000(args.quick, threads, fast_repeat, repeat),
        "kmeans": lambda: bench_kmeans(args.quick, threads, repeat),
    }
    wanted = [s for s in args.only.split(",") if s] or list(sections)
    rows = []
    warnings.filterwarnings("ignore", message="2-Dimensional data passed")  # tslearn on vectors
    with thread_limit(threads):
        for name in wanted:
            rows += sections[name]()
    print()
    print_table(
        rows,
        [
            "case",
            "sparsekit (s)",
            "anchor (s)",
            "anchor",
            "ratio",
            "threads",
            "agreement",
            "target",
        ],
    )
    if FAILURES:
        print("\nFAILED:", *FAILURES, sep="\n  ")
        sys.exit(1)


if __name__ == "__main__":
    main()
