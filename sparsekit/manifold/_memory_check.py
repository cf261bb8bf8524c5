"""The memory check in front of an embedding's fit: the dense matrices its kernel will form.

Peak bytes of ``fit`` on ``n`` samples with ``m`` training points (``m = n`` without landmarks),
counted from the code of :mod:`sparsekit.manifold.kernels` and confirmed by the peak resident
memory of a fit on 3,000 samples (float64 matrices of ``8 m^2`` bytes):

- :class:`CentredKernel` (``KernelPCA``, ``MDS``): the base Gram and its centred float64 copy,
  ``2 m^2``;
- :class:`IsomapGeodesicKernel`: the geodesics from the ``m`` training points to all ``n``
  nodes, kept once more as the node table with landmarks, and the centred ``m x m`` Gram:
  ``2 n^2`` without landmarks, ``2 m n + m^2`` with them;
- :class:`SpectralNormalizedKernel` (``SpectralEmbedding``, ``LaplacianEigenmaps``,
  ``SpectralClustering``): the affinity and two normalised copies, ``3 m^2``;
- :class:`LLEKernel`: sparse weights and a sparse eigensolver, no dense ``n x n`` matrix: not
  checked.
"""

from __future__ import annotations

from .._runtime.memory import check_allocation
from .kernels import CentredKernel, IsomapGeodesicKernel, SpectralNormalizedKernel


def fit_bytes(kernel, n: int, m: int) -> int:
    """Peak bytes of the dense matrices ``kernel.fit`` forms (0 when it forms none)."""
    if isinstance(kernel, IsomapGeodesicKernel):
        return 8 * (2 * n * n if m == n else 2 * m * n + m * m)
    if isinstance(kernel, CentredKernel):
        return 8 * 2 * m * m
    if isinstance(kernel, SpectralNormalizedKernel):
        return 8 * 3 * m * m
    return 0


def check_fit_memory(name: str, kernel, n: int, landmarks) -> None:
    """Warn or refuse (:func:`sparsekit._runtime.memory.check_allocation`) before ``name.fit`` forms
    its kernel's matrices on ``n`` samples and the given ``landmarks`` (``None``: all)."""
    m = n if landmarks is None else len(landmarks)
    nbytes = fit_bytes(kernel, n, m)
    if not nbytes:
        return
    if landmarks is None:
        what = f"{name} on {n} samples"
        matrices = "its n x n matrices"
        instead = (
            "pass n_landmarks=m (m < n, e.g. 2000) to solve the eigenproblem on m "
            "landmarks and embed every point by the Nyström formula"
        )
    else:
        what = f"{name} with n_landmarks={m} on {n} samples"
        matrices = (
            "its n x m matrices"
            if isinstance(kernel, IsomapGeodesicKernel)
            else "its m x m matrices"
        )
        instead = "use a smaller n_landmarks="
    check_allocation(nbytes, what, instead, matrices=matrices)
