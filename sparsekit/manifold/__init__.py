"""Spectral embeddings with out-of-sample extensions, and their data-dependent kernels.

``KernelPCA``, ``MDS`` (classical), ``Isomap``, ``LocallyLinearEmbedding``, ``SpectralEmbedding``
(Ng–Jordan–Weiss), ``LaplacianEigenmaps`` and ``SpectralClustering`` share one core: a
data-dependent kernel, its eigendecomposition, and the Nyström formula that embeds new points
(Bengio et al., NIPS 2003; Paiement 2003, M.Sc. thesis, Université de Montréal).
"""

from .embedding import (
    MDS,
    Isomap,
    KernelPCA,
    LaplacianEigenmaps,
    LocallyLinearEmbedding,
    SpectralClustering,
    SpectralEmbedding,
)
from .kernels import (
    CentredKernel,
    DataDependentKernel,
    IsomapGeodesicKernel,
    LLEKernel,
    SpectralNormalizedKernel,
)

__all__ = [
    "KernelPCA",
    "MDS",
    "Isomap",
    "LocallyLinearEmbedding",
    "SpectralEmbedding",
    "LaplacianEigenmaps",
    "SpectralClustering",
    "DataDependentKernel",
    "CentredKernel",
    "IsomapGeodesicKernel",
    "LLEKernel",
    "SpectralNormalizedKernel",
]
