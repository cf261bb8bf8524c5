"""Comparing distributions with kernels: MMD estimators, the three-sample test, permutation tests.

Every function takes two (or three) samples — 2-D arrays of vectors, or sequences of graphs for
a graph kernel — and a kernel by registered name or as an object:

- exact MMD²: :func:`mmd2_biased` (V-statistic), :func:`mmd2_unbiased` (U-statistic), in row
  blocks;
- linear-time and block estimators: :func:`mmd2_linear`, :func:`mmd2_block`;
- random Fourier features: :func:`mmd2_rff`;
- Nyström MMD with the λ-regularized kernel: :func:`mmd2_nystrom`, :class:`NystromMMD`
  (landmarks from any registered sampler, shared by several comparisons);
- the three-sample test :func:`three_sample_test` and its evaluation :func:`three_sample_error`
  (Cherfaoui thesis, Ch. 4);
- two-sample permutation tests on precomputed features: :func:`permutation_test`.

Evaluation of a fitted feature map: :func:`approximation_error` (‖K_E − K̂_E‖ of a Nyström
map on a subset E of the data).
"""

from .approximation import approximation_error
from .exact import mmd2_biased, mmd2_unbiased
from .linear import mmd2_block, mmd2_linear
from .nystrom import NystromMMD, mmd2_nystrom
from .permutation import PermutationTestResult, permutation_test
from .rff import mmd2_rff
from .three_sample import METHODS, ThreeSampleResult, three_sample_error, three_sample_test

__all__ = [
    "mmd2_biased",
    "mmd2_unbiased",
    "mmd2_linear",
    "mmd2_block",
    "mmd2_rff",
    "mmd2_nystrom",
    "NystromMMD",
    "three_sample_test",
    "three_sample_error",
    "ThreeSampleResult",
    "METHODS",
    "permutation_test",
    "PermutationTestResult",
    "approximation_error",
]
