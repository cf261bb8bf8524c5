"""Task ``out-of-sample``: out-of-sample embedding error against training-set variability.

The protocol of Paiement (2003, M.Sc. thesis, Université de Montréal, §5.1, Table 5.1), after
Bengio et al. (NIPS 2003), for one method and one substitution proportion ``p = |R1| / |F ∪ R1|``:

1. split ``n_train + |R1|`` random points into F, R1 and R2 (``|R1| = |R2| = round(p n_train)``,
   ``|F| = n_train − |R1|``);
2. train on F ∪ R1 and on F ∪ R2, align the second embedding on the first over F
   (least-squares affine map) and measure, for the points of F, the distance between the two:
   the training-set variability ``d_var``;
3. for ``n_probe`` points x of F, train on (F ∪ R1) minus x, embed x by the Nyström formula
   (``transform``), align that model on the F ∪ R1 model over the other training points, and
   measure the distance between x's predicted and trained embeddings: ``d_oos``;
4. report ``d_var − d_oos`` per probe, both divided by the RMS norm of the F ∪ R1 embedding
   so that methods share one scale; ``n_repetitions`` splits drawn in turn from one generator
   seeded with the run's seed.

A positive difference means that embedding a point by the Nyström formula moves it less than
substituting ``p`` of the training set does. Metrics: ``mean_difference``,
``std_difference``, ``n_differences`` and ``differences`` (every value, in order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._names import did_you_mean
from ._rules import COUNT, FRACTION, POSITIVE, one_of, rules
from .tasks import Task, TaskContext

#: method name -> estimator class name in sparsekit.manifold, and whether it takes a γ
METHODS = {
    "mds": ("MDS", False),
    "isomap": ("Isomap", False),
    "lle": ("LocallyLinearEmbedding", False),
    "spectral": ("SpectralEmbedding", True),
    "kernel-pca": ("KernelPCA", True),
}


def make_method(name, n_components=2, n_neighbors=10, gamma=None):
    """A zero-argument factory of the embedding ``name`` (a key of :data:`METHODS`)."""
    from .. import manifold

    if name not in METHODS:
        raise ValueError(
            f"out-of-sample: unknown method {name!r}.{did_you_mean(name, METHODS)} "
            f"Methods: {', '.join(METHODS)}"
        )
    cls = getattr(manifold, METHODS[name][0])
    if name == "isomap":
        return lambda: cls(n_components, n_neighbors=n_neighbors, disconnected="connect")
    if name == "lle":
        return lambda: cls(n_components, n_neighbors=n_neighbors)
    if METHODS[name][1] and gamma is not None:
        return lambda: cls(n_components, kernel_params={"gamma": gamma})
    return lambda: cls(n_components)


def align(source, target):
    """Least-squares affine map of ``source`` onto ``target`` (rows are points); returns it as
    a function of an embedding."""
    A = np.hstack([source, np.ones((len(source), 1))])
    coef = np.linalg.lstsq(A, target, rcond=None)[0]
    return lambda E: np.hstack([E, np.ones((len(E), 1))]) @ coef


def differences(X, make, p, n_train, n_probe, rng):
    """``(d_var − d_oos) / scale`` for ``n_probe`` points of F, one split (steps 1–4)."""
    n_r = max(1, int(round(p * n_train)))
    n_f = n_train - n_r
    if n_f < 2 or n_f + 2 * n_r > len(X):
        raise ValueError(
            f"out-of-sample: n_train={n_train} and proportion={p} need "
            f"{n_f + 2 * n_r} points (with |F| >= 2); the data have {len(X)}"
        )
    perm = rng.permutation(len(X))[: n_f + 2 * n_r]
    F, R1, R2 = perm[:n_f], perm[n_f : n_f + n_r], perm[n_f + n_r :]
    train1 = np.concatenate([F, R1])
    e1 = make().fit(X[train1]).embedding_
    e2 = make().fit(X[np.concatenate([F, R2])]).embedding_
    scale = np.sqrt(np.mean(np.sum(e1**2, axis=1)))
    e2_on_1 = align(e2[:n_f], e1[:n_f])(e2[:n_f])
    d_var = np.linalg.norm(e2_on_1 - e1[:n_f], axis=1)
    out = []
    for i in rng.choice(n_f, size=min(n_probe, n_f), replace=False):
        rest = np.delete(np.arange(len(train1)), i)
        model = make().fit(X[train1[rest]])
        to_1 = align(model.embedding_, e1[rest])
        pred = to_1(model.transform(X[train1[i]][None, :]))[0]
        d_oos = np.linalg.norm(pred - e1[i])
        out.append(float((d_var[i] - d_oos) / scale))
    return out


def run_out_of_sample(ctx: TaskContext) -> dict[str, Any]:
    """Measure the out-of-sample embedding error against training-set variability.

    Parameters
    ----------
    ctx : TaskContext
        The run's data, components, parameters (``ctx.params``) and seed.

    Returns
    -------
    dict
        ``mean_difference``, ``std_difference``, ``n_differences`` and ``differences``.
    """
    (X,) = ctx.need("X")
    p = ctx.params
    make = make_method(p["method"], p["n_components"], p["n_neighbors"], p["gamma"])
    rng = np.random.default_rng(ctx.seed)
    diffs = [
        d
        for _ in range(p["n_repetitions"])
        for d in differences(X, make, p["proportion"], p["n_train"], p["n_probe"], rng)
    ]
    return {
        "mean_difference": float(np.mean(diffs)),
        "std_difference": float(np.std(diffs)),
        "n_differences": len(diffs),
        "differences": diffs,
    }


TASK = Task(
    "out-of-sample",
    run_out_of_sample,
    {
        "method": "mds",
        "proportion": 0.05,
        "n_train": 400,
        "n_probe": 10,
        "n_repetitions": 1,
        "n_components": 2,
        "n_neighbors": 10,
        "gamma": None,
    },
    (),
    {},
    "embedding: out-of-sample error against training-set variability",
    check=rules(
        {
            "method": one_of(*METHODS),
            "proportion": FRACTION,
            **dict.fromkeys(
                ("n_train", "n_probe", "n_repetitions", "n_components", "n_neighbors"), COUNT
            ),
            "gamma": POSITIVE,
        }
    ),
)

__all__ = ["run_out_of_sample"]
