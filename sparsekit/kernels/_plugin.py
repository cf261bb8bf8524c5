"""Built-in kernels, registered through the same hook as third-party plugins."""

from ..hookspecs import Registration, hookimpl
from .chi2 import AdditiveChi2Kernel, Chi2Kernel
from .graph import ShortestPathKernel
from .linear import LinearKernel, PolynomialKernel
from .rbf import LaplacianKernel, RBFKernel


@hookimpl
def sparsekit_kernels():
    yield Registration("linear", LinearKernel, aliases=("dot",), summary="<x, z>")
    yield Registration(
        "polynomial", PolynomialKernel, aliases=("poly",), summary="(gamma <x, z> + coef0)^degree"
    )
    yield Registration(
        "rbf",
        RBFKernel,
        aliases=("gaussian",),
        summary="exp(-gamma ||x - z||^2); gamma, sigma or a bandwidth rule",
    )
    yield Registration(
        "laplacian", LaplacianKernel, aliases=("laplace",), summary="exp(-gamma ||x - z||_1)"
    )
    yield Registration(
        "additive-chi2", AdditiveChi2Kernel, summary="-sum (x - z)^2 / (x + z), non-negative data"
    )
    yield Registration(
        "chi2",
        Chi2Kernel,
        aliases=("exponential-chi2",),
        summary="exp(-gamma sum (x - z)^2 / (x + z)), non-negative data",
    )
    yield Registration(
        "shortest-path",
        ShortestPathKernel,
        aliases=("sp",),
        summary="Borgwardt-Kriegel shortest-path graph kernel (label, label, distance)",
    )  # accepts="graphs": read from ShortestPathKernel.accepts
