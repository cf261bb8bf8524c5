"""The Chapter 3 experiment of the Cherfaoui thesis: Nyström error and score time per sampler.

Protocol (Cherfaoui thesis §3.3, Exp. 3.A and 3.B):

- kernel: Gaussian exp(-‖x − z‖² / (2 σ²)) with σ² the mean pairwise squared distance
  (``RBFKernel(bandwidth="mean-sq-dist")``); ridge λ = (mean ‖x_i‖)⁻¹
  (``lam="inverse-mean-norm"``) for the samplers that take a λ. Recursive RLS keeps its adaptive
  λ, as the authors' code that the thesis used as baseline does (thesis §3.1.2; Musco & Musco 2017);
- landmarks: a fixed number |S| drawn ∝ scores without replacement (``mode="fixed"``);
- error: ‖K_E − K̂_E‖_F (absolute Frobenius norm) on a random evaluation subset E of 10,000
  points (all points when fewer), the same E for every sampler and draw; mean ± std over
  ``n_draws`` draws;
- time: seconds to compute the scores (``sampler.scores``) on the first n points, for
  increasing n (uniform sampling has no scores and is left out).

:func:`demo_table` runs a small version on generated data (no scikit-learn needed); the example
``examples/nystrom_samplers.py`` runs the full one and draws the figures.
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field

import numpy as np

from .._progress import iterate
from .._validation import check_array, check_random_state
from ..features.nystrom import Nystroem
from ..registry import default_registry

#: The samplers of the experiment, in the order of the tables.
SAMPLERS = ("uniform", "diagonal", "two-pass-rls", "dac-rls", "recursive-rls", "greedy-trace",
            "rls")

#: Exact RLS is O(n^3) time and O(n^2) memory: skipped above this many points.
EXACT_RLS_MAX_N = 5000


def generated_dataset(n=50_000, d=54, n_clusters=40, random_state=0, dtype=np.float64):
    """A deterministic, unbalanced Gaussian mixture (Covertype's dimension by default).

    Cluster sizes follow a Zipf law (size ∝ 1 / rank), cluster spreads vary over a decade and
    the centers are drawn at random, so the density is very uneven: uniform landmarks
    under-represent the small, spread-out clusters that ridge leverage scores favour.

    Returns
    -------
    X : ndarray of shape (n, d)
    """
    rng = np.random.default_rng(random_state)
    weights = 1.0 / np.arange(1, n_clusters + 1)
    weights /= weights.sum()
    labels = rng.choice(n_clusters, size=n, p=weights)
    centers = rng.normal(0.0, 1.0, size=(n_clusters, d))
    spreads = 10.0 ** rng.uniform(-1.3, -0.3, size=n_clusters)
    X = centers[labels] + spreads[labels, None] * rng.standard_normal((n, d))
    return np.ascontiguousarray(X, dtype=dtype)


def experiment_kernel():
    """The Gaussian kernel of the thesis experiments (bandwidth rule ``mean-sq-dist``)."""
    return default_registry().get("kernel", "rbf", bandwidth="mean-sq-dist")


def make_sampler(name, lam="inverse-mean-norm", **params):
    """A registered sampler; ``lam`` is passed to samplers that take one, except recursive RLS."""
    info = default_registry().lookup("sampler", name)
    factory = info.registration.factory
    try:
        accepted = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        accepted = {}
    if "lam" in accepted and info.name != "recursive-rls" and "lam" not in params:
        params["lam"] = lam
    return factory(**params)


def available_samplers(names=SAMPLERS):
    """``(present, missing)``: which of ``names`` are registered."""
    registered = set(default_registry().names("sampler"))
    present = [s for s in names if s in registered]
    return present, [s for s in names if s not in registered]


@dataclass
class ErrorTable:
    """Frobenius errors: ``errors[(sampler, n_landmarks)]`` is the array over draws."""

    dataset: str
    n_samples: int
    n_eval: int
    landmark_counts: list
    samplers: list
    errors: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)

    def mean_std(self, sampler, count):
        e = self.errors[(sampler, count)]
        return float(np.mean(e)), float(np.std(e))

    def format(self) -> str:
        """The table: one row per sampler, one column per |S|, ``mean ± std``."""
        head = f"Frobenius error ‖K − K̂‖_F on {self.n_eval} points — {self.dataset} (n = {self.n_samples})"
        cols = [f"|S|={c}" for c in self.landmark_counts]
        width = max(16, *(len(c) for c in cols))
        lines = [head, f"{'sampler':<14}" + "".join(f"{c:>{width + 2}}" for c in cols)]
        for s in self.samplers:
            cells = []
            for c in self.landmark_counts:
                if (s, c) in self.errors:
                    m, sd = self.mean_std(s, c)
                    cells.append(f"{m:.4g} ± {sd:.2g}")
                else:
                    cells.append("—")
            lines.append(f"{s:<14}" + "".join(f"{x:>{width + 2}}" for x in cells))
        for s, why in self.skipped.items():
            lines.append(f"  ({s}: {why})")
        return "\n".join(lines)


def frobenius_error_table(X, samplers=SAMPLERS, landmark_counts=(20, 50), n_draws=10,
                          n_eval=10_000, kernel=None, dataset="data", random_state=0,
                          sampler_params=None, max_landmarks=None):
    """Mean ± std of ‖K_E − K̂_E‖_F over ``n_draws`` Nyström approximations per sampler and |S|.

    Parameters
    ----------
    X : (n, d) array
    samplers : sequence of registered sampler names
        Exact ``"rls"`` is skipped when n > ``EXACT_RLS_MAX_N``; unregistered names are
        skipped (both are listed in ``ErrorTable.skipped``).
    landmark_counts : sequence of int
    n_draws : int
    n_eval : int
        Size of the evaluation subset E (drawn once, shared by all runs).
    kernel : kernel object, optional
        Default :func:`experiment_kernel`.
    sampler_params : dict, optional
        ``{name: {param: value}}`` passed to :func:`make_sampler`.
    max_landmarks : dict, optional
        ``{name: k}``: run sampler ``name`` only for |S| <= k (its cells above are shown as
        "—" and the reason is listed), for samplers whose cost grows too fast with |S|.
    """
    X = check_array(X, "X")
    n = X.shape[0]
    kernel = experiment_kernel() if kernel is None else kernel
    kernel = kernel.fit(X) if hasattr(kernel, "fit") else kernel
    table = ErrorTable(dataset, n, min(n, n_eval), list(landmark_counts), [])
    present, missing = available_samplers(samplers)
    for s in missing:
        table.skipped[s] = "not registered"
    rng = check_random_state(random_state)
    eval_seed = int(rng.integers(2**31))
    for name in iterate(present, "Nyström errors", unit="sampler"):
        if name == "rls" and n > EXACT_RLS_MAX_N:
            table.skipped[name] = f"exact RLS not computed for n > {EXACT_RLS_MAX_N}"
            continue
        table.samplers.append(name)
        params = dict((sampler_params or {}).get(name, {}))
        cap = (max_landmarks or {}).get(name)
        if cap is not None and any(c > cap for c in landmark_counts):
            table.skipped[name] = f"run only for |S| <= {cap} (cost)"
        for count in landmark_counts:
            if cap is not None and count > cap:
                continue
            errs = []
            for _ in range(n_draws):
                ny = Nystroem(kernel, sampler=make_sampler(name, **params), n_components=count,
                              random_state=int(rng.integers(2**31))).fit(X)
                errs.append(ny.approximation_error(X, norm="fro", n_eval=n_eval,
                                                   random_state=eval_seed))
            table.errors[(name, count)] = np.array(errs)
    return table


@dataclass
class TimingTable:
    """Seconds to compute the scores: ``seconds[(sampler, n)]``."""

    dataset: str
    sizes: list
    samplers: list
    seconds: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)

    def format(self) -> str:
        lines = [f"Score computation time (s) — {self.dataset}",
                 f"{'sampler':<14}" + "".join(f"{'n=' + str(n):>12}" for n in self.sizes)]
        for s in self.samplers:
            cells = [f"{self.seconds[(s, n)]:.3g}" if (s, n) in self.seconds else "—"
                     for n in self.sizes]
            lines.append(f"{s:<14}" + "".join(f"{c:>12}" for c in cells))
        for s, why in self.skipped.items():
            lines.append(f"  ({s}: {why})")
        return "\n".join(lines)


def score_timing_table(X, samplers=SAMPLERS, sizes=(1000, 2000), kernel=None, dataset="data",
                       random_state=0, sampler_params=None):
    """Wall time of ``sampler.scores`` on the first n points of ``X`` for each n in ``sizes``.

    Every sampler is run once on a small slice first so that Numba compilation is not timed.
    Samplers without ``scores`` (uniform) are skipped; exact RLS stops at ``EXACT_RLS_MAX_N``.
    """
    X = check_array(X, "X")
    kernel = experiment_kernel() if kernel is None else kernel
    kernel = kernel.fit(X) if hasattr(kernel, "fit") else kernel
    sizes = [int(s) for s in sizes if s <= X.shape[0]]
    table = TimingTable(dataset, sizes, [])
    present, missing = available_samplers(samplers)
    for s in missing:
        table.skipped[s] = "not registered"
    for name in present:
        params = dict((sampler_params or {}).get(name, {}))
        sampler = make_sampler(name, **params)
        if not hasattr(sampler, "scores"):
            table.skipped[name] = "no scores() method: nothing to time"
            continue
        table.samplers.append(name)
        sampler.scores(X[: min(200, X.shape[0])], kernel, random_state=random_state)  # warm-up
        for n in sizes:
            if name == "rls" and n > EXACT_RLS_MAX_N:
                continue
            t0 = time.perf_counter()
            sampler.scores(X[:n], kernel, random_state=random_state)
            table.seconds[(name, n)] = time.perf_counter() - t0
    return table


def demo_table(quick=True) -> str:
    """Run the experiment on generated data and return the printed tables.

    ``quick=True`` (``sparsekit demo``): n = 1,000 points in 20 dimensions, |S| at 2% and 5% of
    n, 3 draws, scores timed at n = 250, 500, 1,000 — about 10-20 seconds on two cores.
    ``quick=False``: n = 20,000 in 54 dimensions, |S| at 1%, 2%, 5%, 10 draws on 5,000
    evaluation points, timing up to n = 20,000.
    """
    if quick:
        n, d, counts, draws, n_eval, sizes = 1000, 20, (20, 50), 3, 1000, (250, 500, 1000)
    else:
        n, d, counts, draws, n_eval, sizes = 20_000, 54, (200, 400, 1000), 10, 5000, (
            1000, 2000, 5000, 10_000, 20_000)
    X = generated_dataset(n=n, d=d, random_state=0)
    name = f"generated Gaussian mixture, d = {d}"
    errors = frobenius_error_table(X, landmark_counts=counts, n_draws=draws, n_eval=n_eval,
                                   dataset=name, random_state=0)
    timing = score_timing_table(X, sizes=sizes, dataset=name, random_state=0)
    notes = "\n".join(f"- {line}" for line in [*reading_notes(errors, X), TIMING_NOTE])
    return errors.format() + "\n\n" + timing.format() + "\n" + notes


#: RLS samplers, whose guarantees need about d_eff log d_eff landmarks.
RLS_SAMPLERS = ("rls", "two-pass-rls", "dac-rls", "recursive-rls")

TIMING_NOTE = ("score time: seconds of sampler.scores on the first n points, compiled "
               "beforehand; exact rls forms the n x n Gram matrix and factors it (n^3), the "
               "others grow about linearly with n")


def reading_notes(errors: ErrorTable, X) -> list:
    """One line for each thing of the error table a newcomer may misread."""
    lines = [f"error: ‖K - K̂‖_F on {errors.n_eval} points, mean ± std over draws of the "
             "landmarks; lower is better"]
    if "greedy-trace" in errors.samplers:
        lines.append("greedy-trace: deterministic (std 0); it adds the point that lowers "
                     "tr(K - K̂) the most, which bounds ‖K - K̂‖_F")
    smallest = min(errors.landmark_counts)
    if ("uniform", smallest) not in errors.errors:
        return lines
    uniform = errors.mean_std("uniform", smallest)[0]
    losers = [s for s in RLS_SAMPLERS
              if (s, smallest) in errors.errors and errors.mean_std(s, smallest)[0] > uniform]
    if losers:
        d_eff = ""
        if errors.n_samples <= EXACT_RLS_MAX_N:
            sampler = make_sampler("rls")
            d_eff = f" (d_eff = {sampler.effective_dimension(X, experiment_kernel().fit(X)):.0f} here)"
        lines.append(
            f"{', '.join(losers)} lose to uniform at |S| = {smallest}: ridge leverage scores "
            f"carry guarantees from about d_eff log d_eff landmarks on{d_eff}; below that, "
            "drawing by score favours isolated points over the dense clusters that hold most "
            "of ‖K‖_F")
    return lines
