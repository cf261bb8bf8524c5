"""Random Fourier features: the spectral draws and the feature map shared by
:class:`sparsekit.features.RandomFourierFeatures`, :class:`sparsekit.features.fastfood.Fastfood`
and the approximate greedy-trace sampler (:mod:`sparsekit.samplers.greedy`).

It sits below both ``samplers`` and ``features`` (it imports only validation helpers and its
Numba loop, :mod:`sparsekit._random_features_cpu`), so a sampler can use a random feature map
without importing the feature-map estimators. The mathematics (Bochner's theorem, the
s^(-1/2) [cos, sin] scaling and the spectral densities) is documented in
:mod:`sparsekit.features.rff`.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from . import _random_features_cpu
from ._names import normalize_name
from ._validation import check_option, check_scalar, is_sparse

#: Target bytes of one intermediate row block in ``transform`` (large enough that the GEMM of a
#: block with the normalization runs at full BLAS speed; small next to the output).
BLOCK_BYTES = 64 * 2**20


def check_n_components(n_components) -> int:
    """Output width of a random Fourier feature map: an integer >= 1."""
    return check_scalar(
        n_components, "n_components", kind=numbers.Integral, low=1, low_inclusive=True
    )


def n_frequencies(n_components: int) -> int:
    """Random frequencies behind ``n_components`` features: one per [cos, sin] pair, plus one
    for the single offset cosine of an odd width."""
    return -(-n_components // 2)


def fourier_features_into(P, n_components, offset, out):
    """Write the features of the projections ``P`` (rows, s) into ``out`` (rows, n_components).

    With p = n_components // 2 pairs and s = n_frequencies(n_components)::

        out = s^(-1/2) [cos P[:, :p], sin P[:, :p], sqrt(2) cos(P[:, p] + offset)]

    the last column only for an odd width. Each pair has E[cos cos + sin sin] = k(x - z) and
    the offset cosine (offset ~ U[0, 2 pi), Rahimi & Recht 2008) E[2 cos(.+b) cos(.+b)] =
    k(x - z), so E[phi(x)ᵀ phi(z)] = (p k + (s - p) k) / s = k for every width.
    """
    s = P.shape[1]
    p = n_components // 2
    scale = out.dtype.type(1.0 / np.sqrt(s))
    if s > p:
        last = P[:, p] + out.dtype.type(offset)
        P = np.ascontiguousarray(P[:, :p])
        np.cos(last, out=last)
        out[:, 2 * p] = last * (scale * out.dtype.type(np.sqrt(2.0)))
    if p:
        _random_features_cpu.cos_sin_inplace(P, scale, out)
    return out


def block_rows(n_rows: int, n_cols: int, itemsize: int) -> int:
    """Rows per block so that an (rows, n_cols) block holds about ``BLOCK_BYTES``."""
    return int(max(1, min(n_rows, BLOCK_BYTES // max(1, n_cols * itemsize))))


def fourier_transform(X, n_components, offset, n_freq, project):
    """Features of every row of ``X``, shape (n_samples, n_components), dtype of ``X``.

    ``project(block)`` returns the (rows, ``n_freq``) projections of a row block of ``X``
    (a GEMM with the frequencies, or the Fastfood transform); the block loop bounds the
    intermediate to about ``BLOCK_BYTES``.
    """
    n = X.shape[0]
    out = np.empty((n, n_components), dtype=X.dtype)
    step = block_rows(n, n_freq, X.dtype.itemsize)
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        fourier_features_into(safe_projection(project, X[r0:r1]), n_components, offset, out[r0:r1])
    return out


def safe_projection(project, block):
    """``project(block)``, finite wherever the projections themselves are floats.

    Where it is not (float32 data near 3e38: the sums of the GEMM or of Fastfood's Hadamard
    transforms overflow even where the projections do not, and the features became NaN), the
    block is projected again in float64 after the exact scaling by the power of two 2^-f that
    brings max |x| to [0.5, 1), and the result multiplied back by 2^f (the projection is
    linear). The result is then float64; its features are cast to the data's dtype.

    Raises
    ------
    ValueError
        A projection exceeds the float64 range (data beyond about 1e308 / sqrt(gamma d)):
        its cosine is no longer defined by the data.
    """
    P = project(block)
    if np.isfinite(P).all():
        return P
    scaled = block.astype(np.float64)  # a copy
    data = scaled.data if is_sparse(scaled) else scaled
    amax = float(np.abs(data).max(initial=0.0))
    f = int(np.frexp(amax)[1])
    np.ldexp(data, -f, out=data)
    with np.errstate(over="ignore", invalid="ignore"):
        P = np.ldexp(project(scaled), f)
    if not np.isfinite(P).all():
        raise ValueError(
            f"random Fourier projections w^T x of data at scale {amax:.3g} "
            "(largest |x|) exceed the float64 range, so their cosines are not defined by the "
            "data; rescale the data (e.g. divide it by its largest absolute value) or use a "
            "smaller gamma"
        )
    return P


def gemm_projection(X, W):
    """``project`` of :func:`fourier_transform` for dense frequencies ``W`` (d, s): X_b @ W."""
    if W.dtype != X.dtype:
        W = W.astype(X.dtype)
    # GEMM through BLAS, in the dtype of the block (float64 for safe_projection's second try)
    return lambda block: np.ascontiguousarray(block @ W)


KERNELS = ("rbf", "laplacian")
_ALIASES = {"gaussian": "rbf", "laplace": "laplacian"}


def resolve_shift_invariant(kernel, gamma, sigma, X) -> tuple[str, float]:
    """``(name, gamma)`` of an RBF or Laplacian kernel given by name or as a kernel object.

    A kernel object brings its own gamma (a bandwidth rule is resolved on ``X`` by fitting a
    copy: the object itself is left unchanged); giving ``gamma``/``sigma`` as well is an error.
    For a name, ``gamma`` wins, then ``sigma`` (rbf: gamma = 1 / (2 sigma^2); laplacian:
    gamma = 1 / sigma), then 1 / n_features.
    """
    d = X.shape[1]
    if not isinstance(kernel, str):
        name = getattr(kernel, "name", None)
        if isinstance(kernel, type) or name not in KERNELS or not hasattr(kernel, "prepare"):
            raise TypeError(
                f"kernel must be one of {list(KERNELS)} or a sparsekit RBFKernel / "
                f"LaplacianKernel object (random Fourier features need the kernel's spectral "
                f"density; use Nystroem for other kernels and functions), got {kernel!r}"
            )
        if gamma is not None or sigma is not None:
            raise ValueError("give gamma/sigma either to the kernel object or here, not both")
        if name == "rbf":
            if getattr(kernel, "bandwidth", None) is not None and kernel.gamma_ is None:
                kernel = copy.deepcopy(kernel).fit(X)
            return name, float(kernel.effective_gamma(d))
        return name, float(kernel._gamma(d))
    key = normalize_name(kernel)
    name = check_option(_ALIASES.get(key, key), "kernel", KERNELS)
    if gamma is not None and sigma is not None:
        raise ValueError("give only one of gamma and sigma")
    if gamma is not None:
        return name, check_scalar(gamma, "gamma", low=0)
    if sigma is not None:
        sigma = check_scalar(sigma, "sigma", low=0)
        return name, (1.0 / (2.0 * sigma * sigma) if name == "rbf" else 1.0 / sigma)
    return name, 1.0 / d


def draw_frequencies(name: str, gamma: float, d: int, s: int, rng) -> np.ndarray:
    """(d, s) float64 matrix whose columns are i.i.d. draws of the kernel's spectral density."""
    if name == "rbf":
        return rng.normal(0.0, np.sqrt(2.0 * gamma), size=(d, s))
    return gamma * rng.standard_cauchy(size=(d, s))


def draw_offset(n_components: int, rng) -> float | None:
    """The phase of the single offset cosine of an odd width (drawn after the frequencies)."""
    return float(rng.uniform(0.0, 2.0 * np.pi)) if n_components % 2 else None


def cast_frequencies(W, X, gamma) -> np.ndarray:
    """``W`` as a C-contiguous array of ``X``'s dtype; a clear error where it overflows."""
    with np.errstate(over="ignore"):
        W = np.ascontiguousarray(W, dtype=X.dtype)
    if not np.isfinite(W).all():  # e.g. float32 data below ~1e-38: sqrt(2 gamma) ~ 1 / scale
        scale = (
            float(
                np.abs(X.data if hasattr(X, "data") and not isinstance(X, np.ndarray) else X).max()
            )
            if X.size
            else 0.0
        )
        raise ValueError(
            f"the random Fourier features of {X.dtype} data at scale {scale:.3g} (largest "
            f"|x|) are not finite: their frequencies (about sqrt(2 gamma), gamma = "
            f"{gamma:.3g}) exceed the {X.dtype} range; fit on float64 data or rescale the "
            "data (e.g. divide it by its largest absolute value)"
        )
    return W


def random_fourier_map(kernel, X, n_components, rng) -> np.ndarray:
    """phi(X) of a random Fourier feature map of ``kernel`` (an RBF or Laplacian kernel object)
    on validated vectors ``X``, drawing from ``rng`` exactly as
    ``RandomFourierFeatures(kernel, n_components=n_components, random_state=rng).fit_transform(X)``
    does, without the estimator."""
    n_components = check_n_components(n_components)
    name, gamma = resolve_shift_invariant(kernel, None, None, X)
    s = n_frequencies(n_components)
    W = draw_frequencies(name, gamma, X.shape[1], s, rng)
    offset = draw_offset(n_components, rng)
    W = cast_frequencies(W, X, gamma)
    return fourier_transform(X, n_components, offset, s, gemm_projection(X, W))
