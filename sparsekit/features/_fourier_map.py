"""The frame shared by the random Fourier feature maps (:class:`RandomFourierFeatures`,
:class:`Fastfood`): ``fit`` (validation, output width, bandwidth, random offset), ``transform``
and ``fit_transform``. A subclass draws its frequencies in :meth:`_draw` and says in
:meth:`_projection` how a row block is projected on them."""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from .._base import ParamsMixin, TransformerMixin
from .._random_features import (
    check_n_components,
    draw_offset,
    fourier_transform,
    n_frequencies,
    resolve_shift_invariant,
)
from .._runtime.threads import with_n_jobs
from .._typing import DataLike
from .._validation import check_random_state


class FourierFeatureMap(TransformerMixin, ParamsMixin, abc.ABC):
    """phi(x) = s^(-1/2) [cos(V x), sin(V x)] (and the offset cosine of an odd width), with
    the projection V x given by the subclass."""

    # set by fit (declared for type checkers; no class attributes are created)
    n_components_: int
    n_frequencies_: int
    random_offset_: float | None
    gamma_: float
    # the subclass's parameters read by fit
    gamma: float | None
    sigma: float | None
    n_components: int
    random_state: Any

    @property
    def _n_features_out(self):
        return self.n_components_

    @with_n_jobs
    def fit(self, X: DataLike, y: object = None) -> Any:
        """Draw the random frequencies for the dimension of ``X``.

        Validates ``X``, resolves the kernel's ``gamma`` (``gamma``, ``sigma`` or the default
        ``1 / n_features``), draws the frequencies and then the offset of the odd-width cosine
        from the same generator.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training data (only its number of features is used, and the data for a bandwidth
            rule).
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self
            The fitted transformer.
        """
        X = self._validate_input(X, reset=True)
        n_components = check_n_components(self.n_components)
        name, gamma = resolve_shift_invariant(self._kernel_spec(), self.gamma, self.sigma, X)
        rng = check_random_state(self.random_state)
        s = n_frequencies(n_components)
        self._draw(X, name, gamma, s, rng)
        self.gamma_ = gamma
        self.n_components_ = n_components
        self.n_frequencies_ = s
        self.random_offset_ = draw_offset(n_components, rng)
        return self

    def _kernel_spec(self) -> Any:
        """The kernel whose features are drawn (a name or a kernel object)."""
        return "rbf"

    @abc.abstractmethod
    def _draw(self, X, kernel: str, gamma: float, n_freq: int, rng: np.random.Generator) -> None:
        """Draw ``n_freq`` frequencies of ``kernel`` with ``gamma`` for validated ``X`` from
        ``rng`` and keep them as fitted attributes."""

    @abc.abstractmethod
    def _projection(self, X):
        """``project(block)`` (the (rows, ``n_frequencies_``) projections of a row block of
        validated ``X``) for :func:`sparsekit._random_features.fourier_transform`."""

    @with_n_jobs
    def transform(self, X: DataLike) -> Any:
        """Compute the feature map phi(X).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            The features, in the dtype of ``X`` (and the container ``set_output`` chose).
        """
        self._check_is_fitted()
        Xv = self._validate_input(X, reset=False)
        out = fourier_transform(
            Xv, self.n_components_, self.random_offset_, self.n_frequencies_, self._projection(Xv)
        )
        return self._wrap_output(out, X)
