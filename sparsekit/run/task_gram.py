"""Task ``gram``: the Gram matrix of a kernel on the samples, timed and checked.

Metrics: ``time`` (seconds for the whole n x n matrix, compiled beforehand on 8 samples when
``warm_up``), ``max_asym`` = max |K − Kᵀ| (0 up to round-off for a symmetric kernel),
``median`` (the median entry) and ``min_eig``, the smallest eigenvalue of the leading
``n_eig`` x ``n_eig`` block: ≥ 0 up to round-off for a positive semi-definite kernel
(Schölkopf & Smola 2002, *Learning with Kernels*, Def. 2.5), negative for kernels that are
not (additive χ², sigmoid). ``dtype`` casts vector samples before the call (graphs ignore it).
It forms the n x n matrix on purpose: this task measures it.
"""
from __future__ import annotations

import time

import numpy as np


def run_gram(ctx) -> dict:
    samples = ctx.samples()
    p = ctx.params
    if isinstance(samples, np.ndarray):
        samples = np.ascontiguousarray(samples, dtype=np.dtype(p["dtype"]))
    kernel = ctx.components["kernel"]
    kernel = kernel.fit(samples) if hasattr(kernel, "fit") else kernel
    if p["warm_up"]:
        kernel(samples[:8])
    t0 = time.perf_counter()
    K = np.asarray(kernel(samples))
    elapsed = time.perf_counter() - t0
    m = min(int(p["n_eig"]), K.shape[0])
    return {"time": elapsed, "max_asym": float(np.abs(K - K.T).max()),
            "median": float(np.median(K)),
            "min_eig": float(np.linalg.eigvalsh(K[:m, :m]).min())}
