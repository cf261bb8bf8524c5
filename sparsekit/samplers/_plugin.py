"""Built-in samplers, registered through the same hook as third-party plugins.

Every built-in sampler accepts graphs (it touches the data only through the kernel) except with
parameters that read raw vectors: ``lam="inverse-mean-norm"`` and ``greedy-trace`` with
``approximate=True``; the sampler object's ``accepts`` attribute tells.
"""

from ..hookspecs import Registration, hookimpl
from .bless import BLESSSampler
from .greedy import GreedyTraceSampler
from .recursive import RecursiveRLSSampler
from .rls import DACRLSSampler, ExactRLSSampler, TwoPassRLSSampler
from .uniform import DiagonalSampler, UniformSampler


@hookimpl
def sparsekit_samplers():
    yield Registration(
        "uniform",
        UniformSampler,
        summary="uniform landmarks, with or without replacement",
        accepts="any",
    )
    yield Registration(
        "diagonal",
        DiagonalSampler,
        aliases=("drineas-mahoney",),
        summary="landmarks ∝ k(x_i, x_i) (Drineas & Mahoney 2005)",
        accepts="any",
    )
    yield Registration(
        "rls",
        ExactRLSSampler,
        aliases=("exact-rls",),
        summary="exact ridge leverage scores (Cholesky; n×n Gram)",
        accepts="any",
    )
    yield Registration(
        "two-pass-rls",
        TwoPassRLSSampler,
        aliases=("uniform-rls", "am-rls"),
        summary="Alaoui & Mahoney two-pass RLS approximation (Woodbury)",
        accepts="any",
    )
    yield Registration(
        "dac-rls",
        DACRLSSampler,
        aliases=("dac",),
        summary="divide-and-conquer ridge leverage scores (parallel blocks)",
        accepts="any",
    )
    yield Registration(
        "recursive-rls",
        RecursiveRLSSampler,
        aliases=("recursive", "musco"),
        summary="recursive RLS (Musco & Musco 2017), user or adaptive λ",
        accepts="any",
    )
    yield Registration(
        "bless",
        BLESSSampler,
        summary="BLESS bottom-up RLS (Rudi et al. 2018), λ schedule down to lam",
        accepts="any",
    )
    yield Registration(
        "greedy-trace",
        GreedyTraceSampler,
        aliases=("greedy",),
        summary="greedy residual-trace minimization, exact or random-feature sketch",
        accepts="any",
    )
