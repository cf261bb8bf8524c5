"""The entry point module: one hook function per family, each yielding Registration records."""

from sparsekit.plugins import Registration, hookimpl

from .factorizers import AlternatingLeastSquares
from .kernels import RationalQuadraticKernel
from .projections import BandProjection
from .samplers import KMeansPPSampler
from .solvers import FISTASolver
from .tasks import KERNEL_ALIGNMENT


@hookimpl
def sparsekit_kernels():
    yield Registration(
        "rational-quadratic",
        RationalQuadraticKernel,
        aliases=("rq",),
        summary="(1 + ||x - z||^2 / (2 alpha l^2))^-alpha",
    )


@hookimpl
def sparsekit_samplers():
    yield Registration(
        "kmeans-pp",
        KMeansPPSampler,
        aliases=("d2",),
        summary="k-means++ (D^2) seeding in the kernel's feature space",
    )


@hookimpl
def sparsekit_solvers():
    yield Registration(
        "fista",
        FISTASolver,
        aliases=("lasso",),
        summary="FISTA for the lasso 1/2 ||y - D x||^2 + alpha ||x||_1",
    )


@hookimpl
def sparsekit_factorizers():
    yield Registration(
        "als",
        AlternatingLeastSquares,
        aliases=("alternating-least-squares",),
        summary="alternating least squares, each factor projected on its set",
    )


@hookimpl
def sparsekit_projections():
    yield Registration(
        "band",
        BandProjection,
        aliases=("banded",),
        accepts="any",
        summary="entries within bandwidth of the diagonal",
    )


@hookimpl
def sparsekit_tasks():
    yield KERNEL_ALIGNMENT.registration()  # a Registration whose factory returns the Task
