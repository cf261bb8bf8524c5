"""The Chapter 3 experiment of the Cherfaoui thesis as tables: Nyström error and score time
per sampler, computed by the ``nystrom`` and ``sampler`` tasks of ``sparsekit run``.

Protocol (Cherfaoui thesis §3.3, Exp. 3.A and 3.B):

- kernel: Gaussian exp(-‖x − z‖² / (2 σ²)) with σ² the mean pairwise squared distance
  (``RBFKernel(bandwidth="mean-sq-dist")``); ridge λ = (mean ‖x_i‖)⁻¹
  (``lam="inverse-mean-norm"``) for the samplers that take a λ, except recursive RLS
  (:func:`sparsekit.run.tasks.make_sampler`);
- landmarks: a fixed number ``|S|`` drawn ∝ scores without replacement (``mode="fixed"``);
- error: ‖K_E − K̂_E‖_F (absolute Frobenius norm) on a random evaluation subset E of 10,000
  points (all points when fewer), the same E for every sampler and draw; mean ± std over
  ``n_draws`` draws — one ``nystrom`` task run per draw;
- time: seconds to compute the scores (``sampler.scores``) on the first n points, for
  increasing n (uniform sampling has no scores and is left out) — one ``sampler`` task run
  (``n_landmarks = 0``: scores only) per sampler and n.

``sparsekit demo nystrom`` prints a small version on generated data; the example
``examples/nystrom_samplers.py`` runs the full one and draws the figures;
``examples/specs/nystrom_samplers.toml`` runs the same task as a spec.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._runtime.progress import iterate
from .._validation import check_array, check_random_state
from ..registry import default_registry
from ..run.tasks import make_sampler, run_task

if TYPE_CHECKING:
    from .._typing import DataLike, RandomStateLike
    from ..kernels.base import Kernel

#: The samplers of the experiment, in the order of the tables.
SAMPLERS = (
    "uniform",
    "diagonal",
    "two-pass-rls",
    "dac-rls",
    "recursive-rls",
    "greedy-trace",
    "rls",
)

#: Exact RLS is O(n^3) time and O(n^2) memory: skipped above this many points.
EXACT_RLS_MAX_N = 5000

#: The kernel section of the experiment (Gaussian, bandwidth rule ``mean-sq-dist``).
KERNEL = {"name": "rbf", "bandwidth": "mean-sq-dist"}

#: λ of the RLS samplers (thesis §3.3).
LAM = "inverse-mean-norm"


def experiment_kernel() -> Kernel:
    """Build the Gaussian kernel of the thesis experiments (bandwidth rule ``mean-sq-dist``).

    Returns
    -------
    Kernel
        The kernel built from :data:`KERNEL`.
    """
    params = dict(KERNEL)
    return default_registry().get("kernel", params.pop("name"), **params)


def available_samplers(names: Sequence[str] = SAMPLERS) -> tuple[list[str], list[str]]:
    """Split ``names`` into registered and missing samplers.

    Parameters
    ----------
    names : sequence of str, default SAMPLERS
        Sampler names.

    Returns
    -------
    present : list of str
        The registered names.
    missing : list of str
        The others.
    """
    registered = set(default_registry().names("sampler"))
    present = [s for s in names if s in registered]
    return present, [s for s in names if s not in registered]


@dataclass
class ErrorTable:
    """Hold the Frobenius errors: ``errors[(sampler, n_landmarks)]`` is the array over draws.

    Parameters
    ----------
    dataset : str
        The data set's name, for the title.
    n_samples : int
        Its number of points.
    n_eval : int
        The size of the evaluation subset.
    landmark_counts : list of int
        The numbers of landmarks (the columns).
    samplers : list of str
        The samplers (the rows).
    errors : dict, optional
        ``{(sampler, n_landmarks): array of errors over draws}``.
    skipped : dict, optional
        ``{sampler: reason}`` for the samplers left out.
    """

    dataset: str
    n_samples: int
    n_eval: int
    landmark_counts: list
    samplers: list
    errors: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)

    def mean_std(self, sampler: str, count: int) -> tuple[float, float]:
        """Return the mean and standard deviation of one cell.

        Parameters
        ----------
        sampler : str
            A sampler of the table.
        count : int
            A number of landmarks.

        Returns
        -------
        mean : float
            The mean over the draws.
        std : float
            The standard deviation over the draws.
        """
        e = self.errors[(sampler, count)]
        return float(np.mean(e)), float(np.std(e))

    def format(self) -> str:
        """Format the table as text.

        Returns
        -------
        str
            One row per sampler, one column per ``|S|``, ``mean ± std``.
        """
        head = (
            f"Frobenius error ‖K − K̂‖_F on {self.n_eval} points — {self.dataset} "
            f"(n = {self.n_samples})"
        )
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


def frobenius_error_table(
    X: DataLike,
    samplers: Sequence[str] = SAMPLERS,
    landmark_counts: Sequence[int] = (20, 50),
    n_draws: int = 10,
    n_eval: int = 10_000,
    kernel: Mapping[str, Any] | Kernel | None = None,
    dataset: str = "data",
    random_state: RandomStateLike = 0,
    sampler_params: Mapping[str, Mapping[str, Any]] | None = None,
    max_landmarks: Mapping[str, int] | None = None,
) -> ErrorTable:
    """Tabulate ‖K_E − K̂_E‖_F over Nyström approximations per sampler and ``|S|``.

    Each cell is the mean ± std over ``n_draws`` approximations.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The data.
    samplers : sequence of registered sampler names
        Exact ``"rls"`` is skipped when n > ``EXACT_RLS_MAX_N``; unregistered names are
        skipped (both are listed in ``ErrorTable.skipped``).
    landmark_counts : sequence of int, default (20, 50)
        The numbers of landmarks ``|S|``.
    n_draws : int, default 10
        Approximations per sampler and ``|S|``.
    n_eval : int
        Size of the evaluation subset E (drawn once, shared by all runs).
    kernel : dict or kernel object, optional
        A kernel section ``{"name": ..., **params}`` or a kernel; default :data:`KERNEL`.
    dataset : str, default "data"
        The data set's name, for the title.
    random_state : int, numpy.random.Generator or None, default 0
        Seeds the evaluation subset and every draw.
    sampler_params : dict, optional
        ``{name: {param: value}}``: the sampler's section (λ defaults to :data:`LAM`).
    max_landmarks : dict, optional
        ``{name: k}``: run sampler ``name`` only for ``|S| <= k`` (its cells above are shown as
        "—" and the reason is listed), for samplers whose cost grows too fast with ``|S|``.

    Returns
    -------
    ErrorTable
        The errors of every sampler and number of landmarks.
    """
    X = check_array(X, "X")
    n = X.shape[0]
    kernel = dict(KERNEL) if kernel is None else kernel
    table = ErrorTable(dataset, n, min(n, n_eval), list(landmark_counts), [])
    present, missing = available_samplers(samplers)
    for s in missing:
        table.skipped[s] = "not registered"
    rng = check_random_state(random_state)
    eval_seed = int(rng.integers(2**31))
    data = {"X": X}
    for name in iterate(present, "Nyström errors", unit="sampler"):
        if name == "rls" and n > EXACT_RLS_MAX_N:
            table.skipped[name] = f"exact RLS not computed for n > {EXACT_RLS_MAX_N}"
            continue
        table.samplers.append(name)
        section = {"name": name, **(sampler_params or {}).get(name, {})}
        cap = (max_landmarks or {}).get(name)
        if cap is not None and any(c > cap for c in landmark_counts):
            table.skipped[name] = f"run only for |S| <= {cap} (cost)"
        for count in landmark_counts:
            if cap is not None and count > cap:
                continue
            errs = []
            for _ in range(n_draws):
                # the nystrom task returns one row (a dict)
                row = cast(
                    "dict[str, Any]",
                    run_task(
                        "nystrom",
                        {
                            "n_components": count,
                            "n_eval": n_eval,
                            "lam": LAM,
                            "eval_seed": eval_seed,
                            "relative_error": False,
                            "ridge_alpha": None,
                        },
                        data,
                        {"kernel": kernel, "sampler": section},
                        seed=int(rng.integers(2**31)),
                    ),
                )
                errs.append(row["error_fro"])
            table.errors[(name, count)] = np.array(errs)
    return table


@dataclass
class TimingTable:
    """Hold the seconds to compute the scores: ``seconds[(sampler, n)]``.

    Parameters
    ----------
    dataset : str
        The data set's name, for the title.
    sizes : list of int
        The numbers of points (the columns).
    samplers : list of str
        The samplers (the rows).
    seconds : dict, optional
        ``{(sampler, n): seconds}``.
    skipped : dict, optional
        ``{sampler: reason}`` for the samplers left out.
    """

    dataset: str
    sizes: list
    samplers: list
    seconds: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)

    def format(self) -> str:
        """Format the table as text.

        Returns
        -------
        str
            One row per sampler, one column per n.
        """
        lines = [
            f"Score computation time (s) — {self.dataset}",
            f"{'sampler':<14}" + "".join(f"{'n=' + str(n):>12}" for n in self.sizes),
        ]
        for s in self.samplers:
            cells = [
                f"{self.seconds[(s, n)]:.3g}" if (s, n) in self.seconds else "—" for n in self.sizes
            ]
            lines.append(f"{s:<14}" + "".join(f"{c:>12}" for c in cells))
        for s, why in self.skipped.items():
            lines.append(f"  ({s}: {why})")
        return "\n".join(lines)


def score_timing_table(
    X: DataLike,
    samplers: Sequence[str] = SAMPLERS,
    sizes: Sequence[int] = (1000, 2000),
    kernel: Mapping[str, Any] | Kernel | None = None,
    dataset: str = "data",
    random_state: RandomStateLike = 0,
    sampler_params: Mapping[str, Mapping[str, Any]] | None = None,
) -> TimingTable:
    """Time ``sampler.scores`` on the first n points of ``X`` for each n in ``sizes``.

    One ``sampler`` task run per sampler and n, which computes the scores on the first 200
    points first so that Numba compilation is not timed, with the kernel resolved on the n
    points. Samplers without ``scores`` (uniform) are skipped; exact RLS stops at
    ``EXACT_RLS_MAX_N``.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The data.
    samplers : sequence of str, default SAMPLERS
        Registered sampler names.
    sizes : sequence of int, default (1000, 2000)
        The numbers of points n.
    kernel : dict or kernel object, optional
        A kernel section ``{"name": ..., **params}`` or a kernel; default :data:`KERNEL`.
    dataset : str, default "data"
        The data set's name, for the title.
    random_state : int, numpy.random.Generator or None, default 0
        Seeds the runs.
    sampler_params : dict, optional
        ``{name: {param: value}}``: the sampler's section (λ defaults to :data:`LAM`).

    Returns
    -------
    TimingTable
        The seconds of every sampler and n.
    """
    X = check_array(X, "X")
    kernel = dict(KERNEL) if kernel is None else kernel
    sizes = [int(s) for s in sizes if s <= X.shape[0]]
    table = TimingTable(dataset, sizes, [])
    rng = check_random_state(random_state)
    present, missing = available_samplers(samplers)
    for s in missing:
        table.skipped[s] = "not registered"
    for name in present:
        params = dict((sampler_params or {}).get(name, {}))
        if not hasattr(make_sampler(name, **params), "scores"):
            table.skipped[name] = "no scores() method: nothing to time"
            continue
        table.samplers.append(name)
        for n in sizes:
            if name == "rls" and n > EXACT_RLS_MAX_N:
                continue
            # the sampler task returns one row (a dict); run_task takes an integer seed
            row = cast(
                "dict[str, Any]",
                run_task(
                    "sampler",
                    {"n_landmarks": 0, "lam": LAM, "warm_up": True},
                    {"X": X[:n]},
                    {"kernel": kernel, "sampler": {"name": name, **params}},
                    seed=int(rng.integers(2**31)),
                ),
            )
            table.seconds[(name, n)] = row["score_time"]
    return table


__all__ = [
    "frobenius_error_table",
    "score_timing_table",
    "ErrorTable",
    "TimingTable",
    "experiment_kernel",
    "available_samplers",
    "KERNEL",
    "LAM",
]
