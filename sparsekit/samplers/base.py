"""Landmark sampler protocol.

A sampler chooses ``n_landmarks`` samples of ``X`` for a Nyström approximation::

    lm = sampler.sample(X, kernel, n_landmarks, random_state=0)
    lm.indices, lm.points, lm.weights

``X`` is whatever ``kernel.prepare`` accepts (vectors or graphs); samplers only touch the data
through the kernel (``kernel(A, B)``, ``kernel.diag(A)``, ``kernel.take``, ``kernel.n_samples``),
so every sampler that needs nothing else works with graph kernels too.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._base import ParamsMixin


@dataclass(frozen=True)
class Landmarks:
    """The chosen landmarks.

    Attributes
    ----------
    indices : ndarray of int64, shape (k,)
        Positions of the landmarks in ``X``.
    points : array or prepared data
        ``kernel.take(X, indices)``: the landmark samples themselves.
    weights : ndarray of float64, shape (k,)
        Importance weights of the landmarks (1 for unweighted sampling).
    """

    indices: np.ndarray
    points: Any
    weights: np.ndarray

    def __len__(self):
        return len(self.indices)


class Sampler(ParamsMixin, ABC):
    """Base class of landmark samplers."""

    name = "sampler"
    #: input kinds this sampler works with: "vectors" and/or "graphs"
    accepts = ("vectors", "graphs")

    @abstractmethod
    def sample(self, X, kernel, n_landmarks, random_state=None) -> Landmarks:
        """Choose ``n_landmarks`` landmarks of ``X`` for ``kernel``."""
