"""A task plugin: a Task whose run(ctx) returns a dict of metrics, for `sparsekit run`
(plugin.py yields its registration from the sparsekit_tasks hook)."""

import numpy as np

from sparsekit.plugins import Task


def kernel_alignment(ctx):
    """Kernel-target alignment (Cristianini et al. 2002) of the spec's kernel on two classes:
    A = <K, t t^T>_F / (||K||_F ||t t^T||_F) = t^T K t / (n ||K||_F), with t_i = +-1 the class
    of sample i. The n x n Gram matrix is formed: for small data sets."""
    X, y = ctx.need("X", "y")
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"kernel-alignment needs exactly two classes in y, got {classes.size}")
    t = np.where(y == classes[1], 1.0, -1.0)
    kernel = ctx.components["kernel"]  # built by the runner from [kernel]
    if hasattr(kernel, "fit"):  # a data-dependent bandwidth, fitted on X
        kernel = kernel.fit(X)
    K = np.asarray(kernel(X), dtype=np.float64)
    if ctx.params["center"]:  # centred alignment (Cortes et al. 2012)
        K = K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()
    return {"alignment": float(t @ K @ t / (len(t) * np.linalg.norm(K)))}


KERNEL_ALIGNMENT = Task(
    "kernel-alignment",
    kernel_alignment,
    params={"center": False},
    components=("kernel",),
    default_components={"kernel": "rbf"},
    summary="kernel-target alignment of the kernel on a two-class data set",
    metrics=("alignment",),  # a spec's [[plot]] columns are checked against them at load
)
