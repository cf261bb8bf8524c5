"""Scale-out on Dask (``pip install 'sparsekit[dask]'``): the library's block structure on a
cluster.

- :func:`gram`: K(X, Y) between two chunked arrays as a blocked dask array;
- :func:`dac_rls_scores`, :func:`dac_rls_partition`: DAC-RLS scores chunk by chunk;
- :func:`nystroem_fit`, :func:`nystroem_transform`: Nyström with landmarks chosen chunk by
  chunk by a sampler with ``sample_chunked`` (uniform, DAC-RLS, or a plugin's) or by any other
  sampler (landmark stage on one worker), transform chunk by chunk;
- :func:`transform`: ``transform`` of any fitted transformer, chunk by chunk;
- :func:`solve`: OMP / MP / Frank–Wolfe (any registered solver) over a column-chunked matrix
  of signals;
- :func:`nystrom_mmd_fit`, :func:`mmd2_nystrom`: the Nyström MMD between chunked samples;
- :func:`kernel_kmeans_fit`: kernel k-means on Nyström features, Lloyd's steps reduced from
  per-chunk sums;
- :func:`nystrom_ridge_fit`: Nyström kernel ridge regression (FALKON's conjugate gradient), one
  pass over the chunks per iteration.

Large results are lazy dask arrays; small ones (a fitted ``Nystroem``) are in memory. Run them
on a ``distributed`` cluster by creating a ``distributed.Client`` first, as with any dask code.
"""

from .cluster import kernel_kmeans_fit
from .gram import gram
from .nystrom import dac_rls_partition, dac_rls_scores, nystroem_fit, nystroem_transform
from .ridge import nystrom_ridge_fit
from .solvers import solve
from .stats import mmd2_nystrom, nystrom_mmd_fit
from .transform import transform

__all__ = [
    "gram",
    "dac_rls_scores",
    "dac_rls_partition",
    "nystroem_fit",
    "nystroem_transform",
    "solve",
    "nystrom_mmd_fit",
    "mmd2_nystrom",
    "kernel_kmeans_fit",
    "nystrom_ridge_fit",
    "transform",
]
