"""Landmark sampler protocol.

A sampler chooses ``n_landmarks`` samples of ``X`` for a Nyström approximation::

    lm = sampler.sample(X, kernel, n_landmarks, random_state=0)
    lm.indices, lm.points, lm.weights

``X`` is whatever ``kernel.prepare`` accepts (vectors or graphs); samplers only touch the data
through the kernel (``kernel(A, B)``, ``kernel.diag(A)``, ``kernel.take``, ``kernel.n_samples``),
so every sampler that needs nothing else works with graph kernels too. A sampler's ``accepts``
attribute says which inputs it works with (``("vectors", "graphs")`` or ``("vectors",)``); it
may depend on the sampler's parameters (a λ rule or a random-feature approximation that reads the
raw vectors).

Optional capability: ``sample_chunked(data, kernel, n_landmarks, random_state=None) ->
(indices, weights)`` chooses landmarks of data held in row chunks elsewhere (a Dask cluster),
running per-chunk functions where the chunks are (see :mod:`sparsekit.samplers.chunked`). The
Dask backend uses it when a sampler has it (``uniform`` and ``dac-rls`` do, and so can a
plugin's), and otherwise runs ``sample`` on one worker with all the rows.

Score-based samplers (:class:`ScoreSampler`) also expose ``scores(X, kernel, lam=None)`` and draw
landmarks from their scores in one of two modes (see :mod:`sparsekit.samplers._draw`):

- ``mode="fixed"``: exactly ``n_landmarks`` landmarks, drawn ∝ scores without replacement (the
  experiments of Cherfaoui 2022, PhD thesis, §3.3, which draw this way rather than with
  Algorithm 3 of §3.2, so Theorem 1 does not cover them);
- ``mode="bernoulli"``: Algorithm 3 / Theorem 1 (Musco & Musco 2017): each point is kept
  independently with probability p_i = min(1, 16 l_i log(Σ_j l_j / ρ)); the number of landmarks
  is random and ``n_landmarks`` is only a cap.
"""

from __future__ import annotations

import numbers
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from .._base import ParamsMixin
from .._names import normalize_name
from .._typing import RandomStateLike
from .._validation import check_option, check_random_state, check_scalar
from . import _draw
from .lam import LAM_RULES, check_lam, resolve_lam

MODES = ("fixed", "bernoulli")


@dataclass(frozen=True)
class Landmarks:
    """The chosen landmarks.

    Parameters
    ----------
    indices : ndarray of int64, shape (k,)
        Positions of the landmarks in ``X``.
    points : array or prepared data
        The landmark samples themselves.
    weights : ndarray of float64, shape (k,)
        Importance weights of the landmarks.

    Attributes
    ----------
    indices : ndarray of int64, shape (k,)
        Positions of the landmarks in ``X``.
    points : array or prepared data
        ``kernel.take(X, indices)``: the landmark samples themselves.
    weights : ndarray of float64, shape (k,)
        Importance weights of the landmarks (1 for unweighted sampling).
    """

    indices: np.ndarray
    points: Any
    weights: np.ndarray

    def __len__(self) -> int:
        return len(self.indices)


def kernel_input_kind(kernel) -> str:
    """``"vectors"`` or ``"graphs"``: what ``kernel`` evaluates (its ``accepts`` attribute)."""
    kind = getattr(kernel, "accepts", "vectors")
    if kind not in ("vectors", "graphs"):
        raise TypeError(
            f"kernel {kernel!r} has accepts={kind!r}; a sampler needs a kernel with "
            "accepts='vectors' or 'graphs' (see sparsekit.kernels.base.Kernel)"
        )
    return kind


@overload
def check_n_landmarks(n_landmarks: Any, n: int, *, allow_none: Literal[False] = False) -> int: ...


@overload
def check_n_landmarks(n_landmarks: Any, n: int, *, allow_none: bool) -> int | None: ...


def check_n_landmarks(n_landmarks: Any, n: int, *, allow_none: bool = False) -> int | None:
    """Check ``n_landmarks``: an int in [1, n] (``None`` passes through when allowed).

    Parameters
    ----------
    n_landmarks : int or None
        The requested number of landmarks.
    n : int
        The number of samples.
    allow_none : bool, default False
        Let ``None`` (no cap) through.

    Returns
    -------
    int or None
        ``n_landmarks`` as an int.

    Raises
    ------
    TypeError
        ``n_landmarks`` is not an integer (or None when allowed).
    ValueError
        ``n_landmarks`` is outside [1, n].
    """
    if n_landmarks is None and allow_none:
        return None
    if isinstance(n_landmarks, bool) or not isinstance(n_landmarks, numbers.Integral):
        raise TypeError(
            f"n_landmarks must be an integer in [1, n_samples={n}], got {n_landmarks!r}"
        )
    n_landmarks = int(n_landmarks)
    if n_landmarks < 1 or n_landmarks > n:
        raise ValueError(
            f"n_landmarks must be in [1, n_samples={n}], got {n_landmarks}; "
            f"ask for at least one and at most {n} landmarks"
        )
    return n_landmarks


class Sampler(ParamsMixin, ABC):
    """Base class of landmark samplers.

    A subclass implements :meth:`sample`; it may also implement
    ``sample_chunked(data, kernel, n_landmarks, random_state=None) -> (indices, weights)``
    for data held in row chunks (:class:`sparsekit.samplers.chunked.ChunkedData`), which the
    Dask backend then uses instead of running :meth:`sample` on one worker (module docstring).
    """

    name = "sampler"
    #: input kinds this sampler works with: "vectors" and/or "graphs"
    accepts = ("vectors", "graphs")

    @abstractmethod
    def sample(
        self, X: Any, kernel: Any, n_landmarks: int, random_state: RandomStateLike = None
    ) -> Landmarks:
        """Choose ``n_landmarks`` landmarks of ``X`` for ``kernel``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The samples.
        kernel : Kernel
            The kernel the landmarks are chosen for (a sparsekit kernel object).
        n_landmarks : int
            Number of landmarks (a cap, or None for no cap, in ``"bernoulli"`` mode).
        random_state : None, int or numpy.random.Generator
            Seeds the draw.

        Returns
        -------
        Landmarks
            The positions, samples and importance weights of the landmarks.
        """

    # -- shared steps (subclasses and plugins call these in :meth:`sample`) ------------------
    def prepare_input(self, X: Any, kernel: Any) -> Any:
        """Check the kernel's input kind and return ``X`` prepared by the kernel.

        Call it first in :meth:`sample`, then touch the data only through ``kernel``. A kernel
        whose bandwidth rule is still unresolved is fitted on the whole ``X`` here: otherwise it
        would fit itself on the first block a sampler evaluates.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The samples.
        kernel : Kernel
            The kernel the landmarks are chosen for (a sparsekit kernel object).

        Returns
        -------
        object
            ``X`` prepared by the kernel (:meth:`~sparsekit.kernels.base.Kernel.prepare`).

        Raises
        ------
        TypeError
            ``kernel`` is not a sparsekit kernel object.
        ValueError
            This sampler does not take the kernel's input kind (vectors or graphs).
        """
        if not callable(kernel) or not hasattr(kernel, "prepare"):
            raise TypeError(
                f"kernel must be a sparsekit kernel object (with prepare/take/diag), got "
                f"{type(kernel).__name__}; build one with sparsekit.get_kernel(name, ...)"
            )
        kind = kernel_input_kind(kernel)
        if kind not in self.accepts:
            raise ValueError(
                f"sampler {self.name!r} with these parameters needs {' or '.join(self.accepts)} "
                f"but kernel {getattr(kernel, 'name', type(kernel).__name__)!r} takes {kind}; "
                f"{self._graph_hint()}"
            )
        Xp = kernel.prepare(X)
        if getattr(kernel, "bandwidth", None) is not None and getattr(kernel, "gamma_", 0) is None:
            kernel.fit(Xp)
        return Xp

    @staticmethod
    def make_landmarks(Xp: Any, kernel: Any, indices: ArrayLike, weights: ArrayLike) -> Landmarks:
        """Build the landmarks of positions ``indices`` of prepared ``Xp``.

        Parameters
        ----------
        Xp : object
            Data prepared by ``kernel``.
        kernel : Kernel
            The kernel that prepared ``Xp``.
        indices : array-like of int
            Positions of the landmarks.
        weights : array-like of float
            Their importance weights (ones if unweighted).

        Returns
        -------
        Landmarks
            What :meth:`sample` returns.
        """
        idx = np.asarray(indices, dtype=np.int64)
        return Landmarks(idx, kernel.take(Xp, idx), np.asarray(weights, dtype=np.float64))

    def _graph_hint(self) -> str:
        return (
            "use a sampler that accepts graphs (uniform, diagonal, rls, two-pass-rls, "
            "dac-rls, recursive-rls, bless, greedy-trace with approximate=False)"
        )


class _LamAccepts:
    """``accepts``: on the class, what the sampler takes with some λ; on an instance, with its λ.

    The λ rule ``"inverse-mean-norm"`` reads the raw vectors, so it rules out graphs.
    """

    def __get__(self, obj, cls):
        lam = getattr(obj, "lam", None) if obj is not None else None
        if (
            obj is not None
            and obj.uses_lam
            and isinstance(lam, str)
            and normalize_name(lam) == "inverse-mean-norm"
        ):
            return ("vectors",)
        return ("vectors", "graphs")


class ScoreSampler(Sampler):
    """A sampler that draws landmarks from per-point importance scores.

    Subclasses implement ``_scores(Xp, kernel, lam, rng)`` on prepared data and set
    ``uses_lam`` (False for scores without a ridge parameter). Every score sampler takes and
    stores the parameters below (``lam`` only where ``uses_lam``).

    Attributes
    ----------
    lam : float > 0 or "inverse-mean-norm"
        Ridge parameter λ of the leverage scores, or the rule λ = (mean_i ‖x_i‖₂)⁻¹ (thesis §3.3,
        after Brefeld et al. 2006; vectors only).
    mode : {"fixed", "bernoulli"}
        Drawing mode (module docstring).
    rho : float in (0, 1)
        Failure probability ρ of the Bernoulli rule.
    """

    uses_lam = True
    #: the parameters that every score sampler stores (``lam`` only where ``uses_lam``)
    lam: float | str
    mode: str
    rho: float
    #: whether the scores over-estimate the ridge leverage scores (Algorithm 3 needs that)
    overestimates = True

    def _check_common(self, lam=None):
        mode = check_option(self.mode, "mode", MODES)
        if mode == "bernoulli" and not self.overestimates:
            raise ValueError(
                f"mode='bernoulli' (Algorithm 3) needs over-estimates of the ridge leverage "
                f"scores, which {self.name!r} scores are not guaranteed to be (two-pass RLS "
                "scores are under-estimates, l̂_i <= l_i, with which the Bernoulli rule keeps "
                "too few points and loses the bound ||K - K̂||_2 <= λ; Algorithm 3 and "
                "Theorem 1 of Cherfaoui 2022, PhD thesis, §3.2, assume l̂_i >= l_i); use "
                "mode='fixed', or the 'rls', 'dac-rls' or 'recursive-rls' sampler"
            )
        check_scalar(self.rho, "rho", low=0.0, high=1.0, high_inclusive=False)
        if self.uses_lam:
            check_lam(self.lam if lam is None else lam, self._lam_rules())
        return mode

    def _lam_rules(self):
        return LAM_RULES

    accepts = _LamAccepts()

    def _graph_hint(self) -> str:
        if self.uses_lam and isinstance(self.lam, str):
            return f"lam={self.lam!r} reads the raw vectors; give lam as a number for graphs"
        return super()._graph_hint()

    def _resolve_lam(self, Xp, kernel, lam):
        return resolve_lam(self.lam if lam is None else lam, Xp, kernel, self._lam_rules())

    @abstractmethod
    def _scores(self, Xp, kernel, lam, rng, n_landmarks=None) -> np.ndarray:
        """Scores of every sample of prepared ``Xp`` (λ resolved).

        ``n_landmarks`` is the size asked of :meth:`sample` (``None`` from :meth:`scores`), for
        samplers whose score computation depends on it (recursive RLS).
        """

    def scores(
        self,
        X: Any,
        kernel: Any,
        lam: float | str | None = None,
        random_state: RandomStateLike = None,
    ) -> np.ndarray:
        """Compute the importance scores of every sample of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The samples.
        kernel : Kernel
            The kernel (a sparsekit kernel object).
        lam : float or str, optional
            Overrides the sampler's ``lam`` for this call.
        random_state : None, int or Generator
            For samplers whose scores are randomized (partitions, first-pass samples).

        Returns
        -------
        ndarray of shape (n_samples,)
            The scores, in the dtype of the kernel values.
        """
        self._check_common(lam)
        Xp = self.prepare_input(X, kernel)
        lam_value = self._resolve_lam(Xp, kernel, lam) if self.uses_lam else None
        return self._scores(Xp, kernel, lam_value, check_random_state(random_state))

    def sample(
        self, X: Any, kernel: Any, n_landmarks: int, random_state: RandomStateLike = None
    ) -> Landmarks:
        """Draw landmarks from the scores (``mode="fixed"`` or ``"bernoulli"``).

        In ``"bernoulli"`` mode ``n_landmarks`` caps the random number of landmarks (``None``:
        no cap). A draw above the cap keeps a uniformly random subset of ``n_landmarks`` of
        the drawn points and warns, since Theorem 1's guarantee then no longer holds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or sequence of graphs
            The samples.
        kernel : Kernel
            The kernel the landmarks are chosen for (a sparsekit kernel object).
        n_landmarks : int
            Number of landmarks (a cap, or None for no cap, in ``"bernoulli"`` mode).
        random_state : None, int or numpy.random.Generator
            Seeds the draw.

        Returns
        -------
        Landmarks
            The landmarks and their importance weights.
        """
        mode = self._check_common()
        Xp = self.prepare_input(X, kernel)
        n = kernel.n_samples(Xp)
        n_landmarks = check_n_landmarks(n_landmarks, n, allow_none=(mode == "bernoulli"))
        rng = check_random_state(random_state)
        lam_value = self._resolve_lam(Xp, kernel, None) if self.uses_lam else None
        scores = np.asarray(self._scores(Xp, kernel, lam_value, rng, n_landmarks), dtype=np.float64)
        if mode == "fixed":
            idx, weights = _draw.fixed_size(scores, n_landmarks, rng)
        else:
            idx, weights = _draw.bernoulli(scores, self.rho, rng)
            if n_landmarks is not None and len(idx) > n_landmarks:
                warnings.warn(
                    f"the Bernoulli rule drew {len(idx)} landmarks, more than "
                    f"n_landmarks={n_landmarks}; keeping a uniform random subset, so Theorem 1's "
                    "guarantee no longer holds (raise n_landmarks, ρ or λ)",
                    UserWarning,
                    stacklevel=2,
                )
                keep = np.sort(rng.choice(len(idx), n_landmarks, replace=False))
                idx, weights = idx[keep], weights[keep]
        return self.make_landmarks(Xp, kernel, idx, weights)


__all__ = ["Landmarks", "Sampler", "ScoreSampler"]
