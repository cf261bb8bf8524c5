"""MMD² with random Fourier features (Zhao & Meng 2015; Cherfaoui thesis §4.2).

k is replaced by k̂(x, z) = ψ(x)ᵀψ(z) with ψ the random Fourier map of
:class:`sparsekit.RandomFourierFeatures` (unbiased [cos, sin] scaling), so
MMD²_k̂ = ‖mean ψ(A) − mean ψ(B)‖², Θ((n_A + n_B) s d). Only shift-invariant vector kernels
have such a map (rbf, laplacian); graph kernels do not.

The default number of frequencies is s = max(1, round(ln n)) (thesis §4.6), i.e. 2s features.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._runtime.threads import n_jobs_limit
from .._typing import DataLike, RandomStateLike
from .._validation import check_random_state, check_scalar
from ..components import resolve
from ..registry import Registry
from ._data import Pooled, default_n_landmarks, kernel_name

RFF_KERNELS = ("rbf", "laplacian")


def check_rff_kernel(kernel):
    name = kernel_name(kernel)
    if name not in RFF_KERNELS:
        raise ValueError(
            f"kernel {name!r} has no random Fourier features (only the shift-invariant "
            f"{list(RFF_KERNELS)} kernels do); use the Nyström MMD (mmd2_nystrom), which works "
            "with every kernel, graph kernels included"
        )


def rff_features(pool: Pooled, n_frequencies, random_state):
    """ψ of every pooled point (float64, shape (n, 2 s)) and the fitted map."""
    from ..features.rff import RandomFourierFeatures

    check_rff_kernel(pool.kernel)
    if n_frequencies is None:
        s = default_n_landmarks(max(pool.sizes))
    else:
        s = check_scalar(
            n_frequencies, "n_frequencies", kind=numbers.Integral, low=1, low_inclusive=True
        )
    rff = RandomFourierFeatures(
        kernel=pool.kernel, n_components=2 * s, random_state=check_random_state(random_state)
    )
    with np.errstate(over="ignore", invalid="ignore"):  # said below, with the reason
        Psi = rff.fit_transform(pool.data)
    if not np.isfinite(Psi).all():
        # e.g. float32 data below ~1e-38: frequencies ~ sqrt(2 gamma) ~ 1 / scale overflow
        data = pool.data.data if hasattr(pool.data, "tocsr") else pool.data
        scale = float(np.abs(data).max()) if data.size else 0.0
        raise ValueError(
            f"the random Fourier features of {pool.data.dtype} data at scale {scale:.3g} "
            "(largest |x|) are not finite: their frequencies (about sqrt(2 gamma), 1 / scale "
            f"with a bandwidth rule) or the projections exceed the {pool.data.dtype} range; pass "
            "float64 data or rescale the data (e.g. divide it by its largest absolute value)"
        )
    return np.asarray(Psi, dtype=np.float64), rff


def mmd2_rff(
    X: DataLike,
    Y: DataLike,
    kernel: str | object = "rbf",
    *,
    kernel_params: dict[str, Any] | None = None,
    n_frequencies: int | None = None,
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    registry: Registry | None = None,
) -> float:
    """Compute the MMD² of the random-Fourier-feature kernel between ``X`` and ``Y``.

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d)
        The two samples.
    kernel : {"rbf", "laplacian"} or such a kernel object, default "rbf"
        A shift-invariant kernel with a known spectral measure.
    kernel_params : dict, optional
        Parameters of a named kernel (``{"gamma": 0.5}``).
    n_frequencies : int, optional
        Random frequencies s (2 s features); default max(1, round(ln n)).
    random_state : None, int or numpy.random.Generator
        Seeds the random frequencies.
    n_jobs : int, optional
        Threads (default: the library-wide thread setting).
    registry : Registry, optional
        Where a kernel name is resolved (default: the process-wide registry).

    Returns
    -------
    float
        The MMD² of the random-feature kernel (the squared distance of the mean features).
    """
    kernel = resolve("kernel", kernel, kernel_params, registry=registry)
    check_rff_kernel(kernel)
    pool = Pooled([X, Y], kernel, names=["X", "Y"])
    with n_jobs_limit(n_jobs):
        Psi, _ = rff_features(pool, n_frequencies, random_state)
    n = pool.sizes[0]
    diff = Psi[:n].mean(axis=0) - Psi[n:].mean(axis=0)
    return float(diff @ diff)


__all__ = ["mmd2_rff"]
