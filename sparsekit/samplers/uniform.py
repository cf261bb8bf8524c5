"""Data-independent and diagonal samplers.

- ``uniform``: landmarks drawn uniformly, without replacement (default) or with replacement
  (Williams & Seeger 2000; Cherfaoui 2022, PhD thesis, §3.1.2). With replacement, an index can
  repeat.
- ``diagonal``: Drineas & Mahoney (2005), p_i = K_ii / Σ_j K_jj (Cherfaoui 2022, PhD thesis,
  §3.1.2); for kernels with a constant diagonal (RBF, Laplacian) this is uniform sampling.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._typing import RandomStateLike
from .._validation import check_random_state
from .base import Landmarks, Sampler, ScoreSampler, check_n_landmarks
from .chunked import ChunkedData


class UniformSampler(Sampler):
    """Uniform landmarks.

    Parameters
    ----------
    replace : bool, default False
        Draw with replacement (indices may repeat).
    """

    name = "uniform"

    def __init__(self, replace: bool = False) -> None:
        self.replace = replace

    def sample(
        self, X: Any, kernel: Any, n_landmarks: int, random_state: RandomStateLike = None
    ) -> Landmarks:
        self._check_replace()
        Xp = self.prepare_input(X, kernel)
        idx, weights = self._draw(kernel.n_samples(Xp), n_landmarks, random_state)
        return self.make_landmarks(Xp, kernel, idx, weights)

    def sample_chunked(
        self, data: ChunkedData, kernel: Any, n_landmarks: int, random_state: RandomStateLike = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw uniform landmarks of data held in row chunks (:mod:`sparsekit.samplers.chunked`).

        They are drawn from n alone, as :meth:`sample` draws them for the same seed; no chunk
        is read.

        Parameters
        ----------
        data : ChunkedData
            The rows of X, in chunks held elsewhere.
        kernel : kernel object
            The kernel the landmarks are chosen for.
        n_landmarks : int
            The number of landmarks.
        random_state : None, int or numpy.random.Generator
            Seeds the draw.

        Returns
        -------
        indices : int64 ndarray of shape (n_landmarks,)
            The landmark positions, sorted.
        weights : float64 ndarray of shape (n_landmarks,)
            Ones.
        """
        self._check_replace()
        return self._draw(data.n_samples, n_landmarks, random_state)

    def _check_replace(self):
        if not isinstance(self.replace, (bool, np.bool_)):
            raise TypeError(f"replace must be True or False, got {self.replace!r}")

    def _draw(self, n, n_landmarks, random_state):
        s = check_n_landmarks(n_landmarks, n)
        rng = check_random_state(random_state)
        if self.replace:
            idx = np.sort(rng.integers(0, n, size=s))
        else:
            idx = np.sort(rng.choice(n, s, replace=False))
        return idx.astype(np.int64, copy=False), np.ones(s)


class DiagonalSampler(ScoreSampler):
    """Landmarks ∝ the kernel diagonal k(x_i, x_i) (Drineas & Mahoney 2005).

    Parameters
    ----------
    mode : {"fixed", "bernoulli"}, default "fixed"
        ``"fixed"`` draws without replacement ∝ K_ii. ``"bernoulli"`` is refused: Algorithm 3
        needs over-estimates of the ridge leverage scores, and K_ii is one only when
        K_ii + λ ≥ 1 (l_i ≤ K_ii / (K_ii + λ)), which this λ-free sampler cannot check.
    rho : float in (0, 1), default 0.1
        Kept for a uniform interface; unused.
    """

    name = "diagonal"
    uses_lam = False
    overestimates = False

    def __init__(self, mode: str = "fixed", rho: float = 0.1) -> None:
        self.mode = mode
        self.rho = rho
        self._check_common()

    def _scores(self, Xp, kernel, lam, rng, n_landmarks=None):
        d = np.asarray(kernel.diag(Xp))
        if d.size and d.min() < 0:
            raise ValueError(
                f"the kernel diagonal has negative values (min {d.min():g}); diagonal sampling "
                "needs a positive semi-definite kernel"
            )
        return d


__all__ = ["UniformSampler", "DiagonalSampler"]
