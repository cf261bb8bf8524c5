"""The entry point module: registers the extra kernels with sparsekit's kernel hook."""

from sparsekit.plugins import Registration, hookimpl

from .kernels import CosineKernel, SigmoidKernel


@hookimpl
def sparsekit_kernels():
    yield Registration(
        "cosine", CosineKernel, aliases=("cosine-similarity",), summary="<x, z> / (||x|| ||z||)"
    )
    yield Registration(
        "sigmoid", SigmoidKernel, aliases=("tanh",), summary="tanh(gamma <x, z> + coef0), not PSD"
    )
