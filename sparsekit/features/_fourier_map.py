"""The frame shared by the random Fourier feature maps (:class:`RandomFourierFeatures`,
:class:`Fastfood`): output width, ``transform`` and ``fit_transform``. A subclass draws its
random state in ``fit`` (setting ``n_components_``, ``n_frequencies_`` and ``random_offset_``)
and says in :meth:`_projection` how a row block is projected on its frequencies."""
from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

from .._base import ParamsMixin, TransformerMixin
from .._random_features import fourier_transform
from .._typing import DataLike


class FourierFeatureMap(TransformerMixin, ParamsMixin, abc.ABC):
    """phi(x) = s^(-1/2) [cos(V x), sin(V x)] (and the offset cosine of an odd width), with
    the projection V x given by the subclass."""

    # set by the subclass's fit (declared for type checkers; no class attributes are created)
    fit: Callable[..., FourierFeatureMap]
    n_components_: int
    n_frequencies_: int
    random_offset_: float | None

    @property
    def _n_features_out(self):
        return self.n_components_

    @abc.abstractmethod
    def _projection(self, X):
        """``project(block)`` (the (rows, ``n_frequencies_``) projections of a row block of
        validated ``X``) for :func:`sparsekit._random_features.fourier_transform`."""

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
        out = fourier_transform(Xv, self.n_components_, self.random_offset_, self.n_frequencies_,
                                self._projection(Xv))
        return self._wrap_output(out, X)

    def fit_transform(self, X: DataLike, y: object = None) -> Any:
        """Fit on ``X`` and return its features.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            ``fit(X).transform(X)``.
        """
        return self.fit(X).transform(X)
