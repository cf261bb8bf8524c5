"""Landmark selection for :class:`~sparsekit.nn.NystromLayer` (NumPy only).

Without labels, the registered sampler draws ``n_landmarks`` rows of the features. With labels
``y``, the draw is stratified by class (Giffon 2020, PhD thesis, §2.3: "stratified uniform
sampling" of the labelled training examples, class-balanced): every class gets
``n_landmarks // n_classes`` landmarks and ``n_landmarks % n_classes`` classes, drawn at random,
one more; a class with fewer points than its share gives all its points and the rest goes, one
at a time, to the class with points left that has the fewest landmarks (ties drawn at random).
Within a class the sampler draws its share from that class's rows only.
"""

from __future__ import annotations

import numpy as np

from ..components import check_result
from ..samplers.base import check_n_landmarks


def class_shares(counts: np.ndarray, n_landmarks: int, rng: np.random.Generator) -> np.ndarray:
    """Landmarks per class: as even as possible, at most ``counts[c]`` for class ``c``."""
    n_classes = len(counts)
    share = np.full(n_classes, n_landmarks // n_classes)
    share[rng.permutation(n_classes)[: n_landmarks % n_classes]] += 1
    share = np.minimum(share, counts)
    left = n_landmarks - int(share.sum())
    for _ in range(left):  # the surplus of small classes: one at a time to the smallest share
        room = rng.permutation(np.flatnonzero(share < counts))
        share[room[np.argmin(share[room])]] += 1
    return share


def select_landmarks(features, n_landmarks, kernel, sampler, y=None, rng=None) -> np.ndarray:
    """Sorted row indices of ``features`` chosen by ``sampler`` with ``kernel`` (stratified by
    class when ``y`` is given)."""
    n = features.shape[0]
    n_landmarks = check_n_landmarks(n_landmarks, n)
    if y is None:
        lm = check_result("sampler", sampler, sampler.sample(features, kernel, n_landmarks, rng))
        return np.sort(np.asarray(lm.indices, dtype=np.int64))
    classes, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    share = class_shares(counts, n_landmarks, rng)
    out = []
    for c in range(len(classes)):
        if share[c] == 0:
            continue
        rows = np.flatnonzero(inverse == c)
        if share[c] == len(rows):
            out.append(rows)
            continue
        lm = check_result(
            "sampler", sampler, sampler.sample(features[rows], kernel, int(share[c]), rng)
        )
        out.append(rows[np.asarray(lm.indices, dtype=np.int64)])
    return np.sort(np.concatenate(out))
