"""Nyström MMD with the λ-regularized kernel (Cherfaoui thesis, Ch. 4, §4.5).

With landmarks S drawn from the pooled samples, the Nyström map φ(x) = K(x, S)(K_S⁺)^{1/2}
and λ > 0, the regularized kernel (thesis Eq. 4.7)

    k̂(x, z) = ⟨φ(x), φ(z)⟩ + λ δ_x(z)

is λ-positive-definite, so MMD_k̂ is a distance between discrete distributions (Lemma 4). For
P̂ = Σ p_i δ_{x_i} and Q̂ = Σ q_i δ_{x_i} on their common support F and v = p − q (Lemma 5)::

    MMD²_k̂(P̂, Q̂) = vᵀ(K_{F,S} K_S⁺ K_{S,F} + λ I) v = ‖Φᵀv‖² + λ ‖v‖²

where Φᵀv = mean φ(A) − mean φ(B) for samples A, B. Θ((n_A + n_B) s + s³) time.

Decisions:

- The support F is the set of *distinct* points: a point that occurs several times, in one
  sample or in both, has its weights merged in v before ‖v‖² is taken (thesis, Algorithm
  NysMMD step 5). Points are identified by their prepared representation (see
  :func:`sparsekit.stats._data.support_ids`). With distinct points ‖v‖² = 1/n_A + 1/n_B.
- Landmarks come from any registered sampler applied to the pool of all the samples given to
  :meth:`NystromMMD.fit`, and are shared by every pair compared afterwards (for the
  three-sample test: drawn once from X ∪ Z ∪ W).
- s defaults to max(1, round(ln n)), n the largest sample (thesis §4.6; it states neither
  base nor rounding). λ has no value in the thesis; the default 1e-6 keeps the λ term below the
  Nyström error of kernels with values of order 1. It must be > 0 (otherwise no distance).
- The statistic is MMD² (``mmd2``); the thesis's Δ compares MMD = √MMD² (``mmd``).
- Only the means of φ enter MMD²: with φ(x) = K(x, S) M they are (mean_{x∈A} K(x, S)) M, so
  :meth:`NystromMMD.fit` sums K(x, S) over each sample in row blocks and never forms the
  n × s matrix Φ (``features_`` computes it when read). Each sample is validated once; the
  pool is prepared once and passed on as prepared data.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._base import ParamsMixin
from .._runtime.small_blas import is_skinny, one_blas_thread
from .._runtime.threads import n_jobs_limit
from .._typing import DataLike, RandomStateLike
from .._validation import check_random_state, check_scalar
from ..components import resolve
from ..registry import Registry
from ..samplers.lam import check_lam
from ._data import Pooled, merged_sq_norm, pooled_n_landmarks, support

#: Bytes of one row block of K(x, S) when summing it per sample: an eighth of K(x, S) of the
#: pool within these bounds. Blocks of one size reuse one buffer, K(x, S) of the whole pool is
#: never held; small blocks run on one thread, large ones on all.
SUM_BLOCK_BYTES = (2**18, 2**22)


def fit_nystroem(pool: Pooled, sampler, n_landmarks: int, random_state, registry=None):
    """The :class:`~sparsekit.Nystroem` map fitted on the pool (landmarks drawn from it)."""
    from ..features.nystrom import Nystroem

    ny = Nystroem(
        kernel=pool.kernel,
        sampler=sampler,
        n_components=n_landmarks,
        random_state=random_state,
        registry=registry,
    )
    ny._fit(pool.data, prepared=True)  # the pool is validated and prepared by this kernel
    return ny


def landmark_sums(ny, pool: Pooled) -> np.ndarray:
    """Σ_{x ∈ sample i} K(x, S) for every sample i of the pool: float64 (n_samples, |S|).

    K(x, S) is streamed in row blocks (``SUM_BLOCK_BYTES``; vector kernels: one validation and
    one per-call preparation for all the blocks).
    """
    kernel, S, data, off = ny.kernel_, ny.components_, pool.data, pool.offsets
    sums = np.zeros((len(pool.sizes), ny.normalization_.shape[0]))
    lo, hi = SUM_BLOCK_BYTES
    block_bytes = int(min(hi, max(lo, pool.n * sums.shape[1] * 8 // 8)))
    if isinstance(data, np.ndarray) and hasattr(kernel, "blocks"):
        blocks = kernel.blocks(data, S, max_memory=block_bytes)
    else:
        step = max(1, block_bytes // (8 * sums.shape[1]))
        blocks = (
            (
                slice(r0, min(pool.n, r0 + step)),
                np.asarray(kernel(pool.rows(r0, min(pool.n, r0 + step)), S)),
            )
            for r0 in range(0, pool.n, step)
        )
    ones = None
    # few landmarks: every product of the loop (the blocks' K(x, S) too) is skinny, so one
    # limit is taken around the loop instead of one per product
    with one_blas_thread(is_skinny(sums.shape[1])):
        for rows, Kb in blocks:
            if ones is None or len(ones) < len(Kb):
                ones = np.ones(len(Kb))
            Kb = np.asarray(Kb, dtype=np.float64)  # float32 blocks are summed in float64
            with one_blas_thread():  # the sums are matrix-vector products
                for i in range(len(pool.sizes)):
                    a, b = max(rows.start, int(off[i])), min(rows.stop, int(off[i + 1]))
                    if a < b:  # a matrix-vector product (BLAS), much faster than .sum(axis=0)
                        sums[i] += ones[: b - a] @ Kb[a - rows.start : b - rows.start]
    return sums


class NystromMMD(ParamsMixin):
    """Nyström MMD between samples that share one landmark set.

    Parameters
    ----------
    kernel : str, kernel object or function, default "rbf"
        Any registered kernel (graph kernels included), a kernel object (copied at ``fit``)
        or a function ``k(X, Y) -> Gram``.
    sampler : str or sampler object, default "uniform"
        Any registered landmark sampler (the thesis draws uniformly), or a sampler object
        (copied at ``fit``).
    n_landmarks : int, optional
        The number s of landmarks; default max(1, round(ln n)) with n the largest sample.
    lam : float > 0, default 1e-6
        The λ of the regularized kernel k̂ = ⟨φ, φ⟩ + λ δ.
    kernel_params, sampler_params : dict, optional
        Parameters of the named kernel / sampler.
    random_state : None, int or numpy.random.Generator
        Seeds the landmark sampler.
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where ``kernel`` and ``sampler`` names are resolved (default: the process-wide
        registry).

    Attributes
    ----------
    kernel_ : the kernel object used (bandwidth resolved on the pool)
    nystroem_ : the fitted :class:`sparsekit.Nystroem` (landmarks, normalization)
    features_ : list of float64 arrays (n_i, s): φ of each fitted sample (computed when
        first read: :meth:`fit` only needs the means)
    embeddings_ : float64 array (n_samples_sets, s): the mean φ of each sample, computed as
        (mean K(x, S)) M (``nystroem_.normalization_`` M) without forming φ
    n_landmarks_ : int
    support_ids_ : int64 array (n_total,): equal pooled points share an id (weights merged)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X, W = rng.normal(size=(200, 2)), rng.normal(size=(200, 2))
    >>> Z = rng.normal(loc=1.0, size=(200, 2))
    >>> est = NystromMMD("rbf", n_landmarks=20, random_state=0).fit(X, Z, W)
    >>> bool(est.mmd2(0, 2) <= est.mmd2(1, 2))   # three-sample decision: W ~ P_X
    True
    """

    def __init__(
        self,
        kernel: str | object = "rbf",
        sampler: str | object = "uniform",
        n_landmarks: int | None = None,
        lam: float = 1e-6,
        kernel_params: dict[str, Any] | None = None,
        sampler_params: dict[str, Any] | None = None,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.kernel = kernel
        self.sampler = sampler
        self.n_landmarks = n_landmarks
        self.lam = lam
        self.kernel_params = kernel_params
        self.sampler_params = sampler_params
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.registry = registry

    def fit(self, *samples: DataLike) -> NystromMMD:
        """Pool ``samples``, draw the landmarks on the pool and compute the mean φ of each.

        Parameters
        ----------
        *samples : array-like of shape (n_i, d), or sequences of graphs
            Two or more samples (sequences of graphs for a graph kernel).

        Returns
        -------
        self
            The fitted estimator.
        """
        if len(samples) < 1:
            raise TypeError("fit needs at least one sample")
        kernel = resolve("kernel", self.kernel, self.kernel_params, registry=self.registry)
        names = ["X", "Y"] if len(samples) == 2 else [f"samples[{i}]" for i in range(len(samples))]
        check_lam(self.lam, rules=())
        return self._fit_pool(Pooled(samples, kernel, names=names))

    def _fit_pool(self, pool: Pooled, random_state=None, features=False):
        """Fit on an already pooled set of samples (landmarks drawn on the whole pool).

        ``features=True`` computes φ of every pooled point now (for callers that use
        ``features_``) and the means from it; otherwise the means are (mean K(x, S)) M, from
        K(x, S) streamed in row blocks, and ``features_`` is computed when first read.
        """
        lam = check_lam(self.lam, rules=())
        sampler = resolve("sampler", self.sampler, self.sampler_params, registry=self.registry)
        s = pooled_n_landmarks(self.n_landmarks, max(pool.sizes), pool.n)
        seed = self.random_state if random_state is None else random_state
        off = pool.offsets
        with n_jobs_limit(self.n_jobs):
            ny = fit_nystroem(pool, sampler, s, check_random_state(seed), self.registry)
            if features:
                Phi = np.asarray(ny._features(pool.data), dtype=np.float64)
                means = np.stack(
                    [Phi[off[i] : off[i + 1]].mean(axis=0) for i in range(len(pool.sizes))]
                )
            else:
                Phi = None
                sizes = np.asarray(pool.sizes, dtype=np.float64)
                means = (landmark_sums(ny, pool) / sizes[:, None]) @ ny.normalization_.astype(
                    np.float64
                )
        self.kernel_ = pool.kernel
        self.nystroem_ = ny
        self.lam_ = lam
        self.n_landmarks_ = s
        self.sizes_ = pool.sizes
        self.embeddings_ = means
        self.support_ids_, self._distinct = support(pool.kernel, pool.data)
        self._offsets = off
        self._pool_data = pool.data
        self._phi = Phi
        return self

    def _feature_matrix(self) -> np.ndarray:
        """φ of every pooled point, float64 (n_total, s) (computed once, on first use)."""
        if "_pool_data" not in self.__dict__:
            from ..exceptions import not_fitted_error

            raise not_fitted_error(
                "features_: this NystromMMD is not fitted yet: call fit(*samples) first"
            )
        if self._phi is None:
            with n_jobs_limit(self.n_jobs):
                self._phi = np.asarray(self.nystroem_._features(self._pool_data), dtype=np.float64)
        return self._phi

    @property
    def features_(self) -> list[np.ndarray]:
        """Return φ of each fitted sample (computed on first use).

        Returns
        -------
        list of ndarray of float64, shape (n_i, s)
            One array per sample.
        """
        Phi, off = self._feature_matrix(), self._offsets
        return [Phi[off[i] : off[i + 1]] for i in range(len(self.sizes_))]

    def _check_index(self, i, name):
        if not hasattr(self, "embeddings_"):
            from ..exceptions import not_fitted_error

            raise not_fitted_error("this NystromMMD is not fitted yet: call fit(*samples) first")
        i = check_scalar(i, name, kind=numbers.Integral)
        if not 0 <= i < len(self.sizes_):
            raise ValueError(
                f"{name}={i} is not a fitted sample (0 <= {name} < {len(self.sizes_)})"
            )
        return i

    def sq_norm_v(self, i: int, j: int) -> float:
        """Compute ‖v‖², v = p − q over the distinct points of samples i and j.

        Parameters
        ----------
        i, j : int
            Indices of two fitted samples (in the order given to :meth:`fit`).

        Returns
        -------
        float
            ‖v‖².
        """
        i, j = self._check_index(i, "i"), self._check_index(j, "j")
        if i == j:
            return 0.0
        if self._distinct:  # no point repeats: v has 1/n_i and −1/n_j entries
            return 1.0 / self.sizes_[i] + 1.0 / self.sizes_[j]
        off = self._offsets
        ids = np.concatenate(
            [self.support_ids_[off[i] : off[i + 1]], self.support_ids_[off[j] : off[j + 1]]]
        )
        w = np.concatenate(
            [
                np.full(self.sizes_[i], 1.0 / self.sizes_[i]),
                np.full(self.sizes_[j], -1.0 / self.sizes_[j]),
            ]
        )
        return merged_sq_norm(ids, w, int(off[-1]))

    def mmd2(self, i: int = 0, j: int = 1) -> float:
        """Compute MMD²_k̂ between fitted samples i and j: ‖μ_i − μ_j‖² + λ‖v‖² (Lemma 5).

        Parameters
        ----------
        i, j : int, default 0 and 1
            Indices of two fitted samples (in the order given to :meth:`fit`).

        Returns
        -------
        float
            MMD²_k̂.
        """
        i, j = self._check_index(i, "i"), self._check_index(j, "j")
        diff = self.embeddings_[i] - self.embeddings_[j]
        return float(diff @ diff) + self.lam_ * self.sq_norm_v(i, j)

    def mmd(self, i: int = 0, j: int = 1) -> float:
        """Compute MMD_k̂ = √MMD²_k̂ between fitted samples i and j.

        Parameters
        ----------
        i, j : int, default 0 and 1
            Indices of two fitted samples (in the order given to :meth:`fit`).

        Returns
        -------
        float
            MMD_k̂.
        """
        return float(np.sqrt(self.mmd2(i, j)))


def mmd2_nystrom(
    X: DataLike,
    Y: DataLike,
    kernel: str | object = "rbf",
    *,
    sampler: str | object = "uniform",
    n_landmarks: int | None = None,
    lam: float = 1e-6,
    kernel_params: dict[str, Any] | None = None,
    sampler_params: dict[str, Any] | None = None,
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> float:
    """Compute the Nyström MMD² with the λ-regularized kernel between ``X`` and ``Y``.

    MMD²_k̂ = ‖mean φ(X) − mean φ(Y)‖² + λ‖v‖² (Cherfaoui thesis Lemma 5; see the module
    docstring), landmarks drawn by ``sampler`` from X ∪ Y. Parameters as :class:`NystromMMD`.

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d), or sequences of graphs
        The two samples (sequences of graphs for a graph kernel).
    kernel : str or kernel object, default "rbf"
        Any registered kernel (graph kernels included) or a kernel object.
    sampler : str or sampler object, default "uniform"
        Any registered landmark sampler; the landmarks are drawn from X ∪ Y.
    n_landmarks : int, optional
        The number s of landmarks; default max(1, round(ln n)) with n the larger sample.
    lam : float > 0, default 1e-6
        The λ of the regularized kernel k̂ = ⟨φ, φ⟩ + λ δ.
    kernel_params, sampler_params : dict, optional
        Parameters of the named kernel / sampler.
    random_state : None, int or numpy.random.Generator
        Seeds the landmark sampler.
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where kernel and sampler names are resolved (default: the process-wide registry).

    Returns
    -------
    float
        MMD²_k̂.
    """
    est = NystromMMD(
        kernel=kernel,
        sampler=sampler,
        n_landmarks=n_landmarks,
        lam=lam,
        kernel_params=kernel_params,
        sampler_params=sampler_params,
        random_state=random_state,
        n_jobs=n_jobs,
        registry=registry,
    )
    return est.fit(X, Y).mmd2(0, 1)


__all__ = ["NystromMMD", "mmd2_nystrom"]
