"""The data-dependent kernels of the spectral embeddings: the manifold-kernel family (they are
not kernels ``k(X, Y)``; see :mod:`sparsekit.manifold.kernels`)."""

from ..hookspecs import Registration, hookimpl
from .kernels import IsomapGeodesicKernel, LLEKernel, SpectralNormalizedKernel


@hookimpl
def sparsekit_manifold_kernels():
    yield Registration(
        "isomap-geodesic",
        IsomapGeodesicKernel,
        aliases=("isomap",),
        summary="data-dependent: -1/2 d_G^2 on the k-NN graph, centred; "
        "fit(X_train), then kernel(X)",
    )
    yield Registration(
        "lle",
        LLEKernel,
        aliases=("locally-linear",),
        summary="data-dependent: I - (I - W)^T (I - W) of the LLE weights; "
        "fit(X_train), then kernel(X)",
    )
    yield Registration(
        "spectral-normalized",
        SpectralNormalizedKernel,
        aliases=("ng-jordan-weiss",),
        summary="data-dependent: k(x, y) / sqrt(S(x) S(y)) (spectral clustering);"
        " fit(X_train), then kernel(X)",
    )
