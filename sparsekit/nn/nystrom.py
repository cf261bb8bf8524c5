"""The adaptive Nyström layer (Giffon 2020, PhD thesis, Ch. 2; Giffon, Ayache, Artières and
Kadri, "Deep networks with adaptive Nyström approximation", IJCNN 2019).

For an input x, landmarks l_1..l_L and a feature extractor f (the identity by default), the
layer computes, for each of its M kernels k_m,

    h_m(x) = [k_m(f(x), f(l_1)), ..., k_m(f(x), f(l_L))] W_m        (Giffon, Alg. of §2.2)

and returns concat(h_1(x), ..., h_M(x)) (Eq. 2.3, the multiple-kernel variant), of size M·L.
Each W_m is an L×L matrix initialised to K_LL^{-1/2}, the symmetric inverse square root of the
landmarks' Gram matrix under k_m, so that at initialisation <h_m(x), h_m(z)> is the Nyström
approximation k(x, L) K_LL^+ k(L, z) (Williams & Seeger 2001; thesis Eq. 1.22-1.24). With
``adaptive=True`` W_m is trained by back-propagation (the adaptive Nyström layer); with
``adaptive=False`` it stays fixed (the plain Nyström feature map).

Decisions:

- K_LL^{-1/2} is ``sparsekit.features.nystrom.inverse_sqrt_map`` (what
  :class:`sparsekit.Nystroem` uses): eigenvalues at or below ``eigen_floor`` (default
  L · eps(float64) · λ_max, the rank tolerance of ``numpy.linalg.pinv``) are dropped (the
  pseudo-inverse), never floored at 1e-12 as the authors' code does (that keeps 1e6 weights
  on numerically null directions). For a kernel that is not positive semi-definite
  (additive-chi2, only conditionally so) the negative eigenvalues are dropped too: W_m is then
  the inverse root of K_LL's positive part.
- The landmarks' Gram matrix and the bandwidth are computed by the sparsekit kernel object in
  float64, once, at construction; the layer evaluates the same formula with ``keras.ops``
  (:mod:`sparsekit.nn._kernels`), in the layer's dtype, with the constants read from that
  object.
- A bandwidth rule (``get_kernel("rbf", bandwidth="mean-sq-dist")``) is resolved on the
  features of the training inputs ``x`` with :meth:`NystromLayer.from_data`, else on the
  landmarks' features (a kernel already fitted keeps its gamma); the resolved gamma is what
  the layer saves.
- ``__init__`` takes configuration only (Keras' contract: a layer is rebuilt from its config);
  drawing landmarks from data is the factory :meth:`NystromLayer.from_data`.
- The linear kernel is <x, l> as in :mod:`sparsekit.kernels` (the authors' code normalises x
  and l to unit norm first; put a normalisation in the feature extractor for that).
- Landmarks are stored raw (a non-trainable weight) and go through the feature extractor at
  every call, as in the thesis: when the extractor trains, the landmarks' features follow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras
import numpy as np
from keras import ops

from .._typing import RandomStateLike
from .._validation import check_random_state
from ..components import get_kernel, resolve
from ..features.nystrom import inverse_sqrt_map
from . import _kernels
from ._landmarks import select_landmarks

#: rows of inputs the feature extractor sees at once when the layer computes features at
#: construction (sampling, bandwidth, K_LL)
FEATURE_BATCH = 1024


def _features(extractor, x, batch=FEATURE_BATCH) -> np.ndarray:
    """The flattened features of ``x`` (float64 NumPy), in batches."""
    if extractor is None:
        return np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    parts = [
        ops.convert_to_numpy(extractor(x[i : i + batch], training=False))
        for i in range(0, len(x), batch)
    ]
    out = np.concatenate(parts).astype(np.float64)
    return out.reshape(len(x), -1)


def _as_kernel(spec) -> Any:
    """A sparsekit kernel object from a name or an object (copied), checked usable here."""
    if isinstance(spec, str):
        kernel = get_kernel(spec)  # unknown name: ValueError with the closest match
    elif callable(spec) and hasattr(spec, "prepare"):
        kernel = resolve("kernel", spec)
    else:
        raise TypeError(
            f"kernel must be a registered kernel name or a sparsekit kernel object (from "
            f"sparsekit.get_kernel), got {type(spec).__name__}"
        )
    name = getattr(kernel, "name", type(kernel).__name__)
    if getattr(kernel, "accepts", "vectors") != "vectors":
        raise TypeError(
            f"kernel {name!r} takes {kernel.accepts}, not vectors; NystromLayer needs a vector "
            f"kernel: one of {', '.join(_kernels.supported_names())}"
        )
    if not _kernels.has_formula(kernel):
        raise TypeError(
            f"kernel {name!r} ({type(kernel).__name__}) has no differentiable keras.ops formula "
            f"in sparsekit.nn; use one of {', '.join(_kernels.supported_names())}"
        )
    return kernel


@keras.saving.register_keras_serializable(package="sparsekit")
class NystromLayer(keras.layers.Layer):
    """Adaptive Nyström layer: kernel vectors against stored landmarks times learnable W.

    Parameters
    ----------
    kernel : str, kernel object, or a sequence of them, default "rbf"
        Registered vector kernels with a differentiable formula: ``"linear"``,
        ``"polynomial"``, ``"rbf"`` (with ``gamma``, ``sigma`` or a ``bandwidth`` rule),
        ``"laplacian"``, ``"additive-chi2"`` (the thesis' "Chi2", Eq. 1.9), ``"chi2"``.
        Objects from :func:`sparsekit.get_kernel` carry their parameters. Several kernels
        give the multiple-kernel layer: one W per kernel, outputs concatenated.
    landmarks : array of shape (L, ...), optional
        The landmarks, in the layer's input space (before the feature extractor). To draw
        them from training data with a sampler, use :meth:`from_data`.
    adaptive : bool, default True
        Train W (adaptive Nyström); ``False`` freezes it at K_LL^{-1/2}.
    feature_extractor : keras layer or model, optional
        Applied to the inputs and to the landmarks (the same weights); its output is
        flattened and cast to the layer's compute dtype (under ``mixed_float16`` the kernel
        runs in float16 whatever the extractor's own policy). The layer owns it (it is saved
        with the layer).
    eigen_floor : float, optional
        Eigenvalues of K_LL at or below it are dropped from K_LL^{-1/2}; default
        L · eps(float64) · λ_max.
    landmarks_shape : tuple of int, optional
        Create zero landmarks and W of this shape, to be filled by ``load_weights`` (what
        :meth:`from_config` uses); exclusive with ``landmarks``.
    **kwargs
        Passed to :class:`keras.layers.Layer` (``name``, ``dtype``, ``trainable``).

    Attributes
    ----------
    landmark_indices_ : ndarray of int64 or None
        Rows of ``x`` chosen as landmarks by :meth:`from_data` (None when ``landmarks`` was
        given).
    kernels_ : list of sparsekit kernel objects
        The kernels, with resolved parameters.
    initial_w_ : list of ndarray (L, L) or None
        K_LL^{-1/2} of each kernel (float64), the initial W.

    Raises
    ------
    ValueError
        Unknown kernel name (with the closest match), both or neither of ``landmarks`` and
        ``landmarks_shape``, input whose feature shape differs from the landmarks'.
    TypeError
        A kernel that is not a vector kernel or has no differentiable formula here.

    Examples
    --------
    >>> from sparsekit.nn import NystromLayer   # before keras: it may choose the backend
    >>> import keras, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.random((60, 5)).astype("float32"), np.repeat([0, 1, 2], 20)
    >>> layer = NystromLayer.from_data(x, 6, kernel="rbf", y=y, random_state=0)
    >>> model = keras.Sequential([keras.Input((5,)), layer, keras.layers.Dense(3)])
    >>> model(x[:4]).shape
    (4, 3)
    """

    def __init__(
        self,
        kernel: Any = "rbf",
        landmarks: Any = None,
        *,
        adaptive: bool = True,
        feature_extractor: Any = None,
        eigen_floor: float | None = None,
        landmarks_shape: Sequence[int] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not isinstance(adaptive, (bool, np.bool_)):
            raise TypeError(f"adaptive must be True or False, got {adaptive!r}")
        if feature_extractor is not None and not callable(feature_extractor):
            raise TypeError(
                "feature_extractor must be a Keras layer or model (callable), got "
                f"{type(feature_extractor).__name__}"
            )
        specs = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel]
        if not specs:
            raise ValueError("kernel is an empty sequence; give at least one kernel")
        kernels = [_as_kernel(s) for s in specs]
        self.adaptive = bool(adaptive)
        self.feature_extractor = feature_extractor
        self.eigen_floor = eigen_floor
        self.landmark_indices_: np.ndarray | None = None
        self.initial_w_ = None
        if (landmarks is None) == (landmarks_shape is None):
            raise ValueError(
                "give exactly one of landmarks (an array of shape (L, ...)) or landmarks_shape; "
                "to draw landmarks from training data use "
                "NystromLayer.from_data(x, n_landmarks, ...)"
            )
        if landmarks_shape is not None:  # restored from a config: weights come from a file
            self._landmarks0 = None
            self._landmarks_shape = tuple(int(s) for s in landmarks_shape)
            for k in kernels:
                if getattr(k, "bandwidth", None) is not None and k.gamma_ is None:
                    raise ValueError("a restored layer needs kernels with resolved parameters")
            self._set_formulas(kernels, int(np.prod(self._landmarks_shape[1:])))
            return
        L0 = np.asarray(landmarks)
        if L0.ndim < 2 or len(L0) == 0:
            raise ValueError(
                f"landmarks must be an array of shape (L, ...) with one "
                f"landmark per row, got shape {L0.shape}"
            )
        if feature_extractor is None and L0.ndim != 2:
            raise ValueError(
                f"landmarks must be 2-D (samples, features) without a feature_extractor, "
                f"got shape {L0.shape}; flatten it or give a feature_extractor"
            )
        FL = _features(feature_extractor, L0)
        for k in kernels:  # kernels from from_data arrive with their rule fitted on x
            self._fit_rule(k, FL)
        self._landmarks0 = np.asarray(L0, dtype=np.float64)
        self._landmarks_shape = tuple(L0.shape)
        self.initial_w_ = [
            inverse_sqrt_map(k(k.prepare(FL)), eigen_floor=eigen_floor)[0] for k in kernels
        ]
        self._set_formulas(kernels, FL.shape[1])

    @classmethod
    def from_data(
        cls,
        x: Any,
        n_landmarks: int,
        *,
        kernel: Any = "rbf",
        y: Any = None,
        sampler: Any = "uniform",
        random_state: RandomStateLike = None,
        feature_extractor: Any = None,
        **kwargs: Any,
    ) -> NystromLayer:
        """A layer whose landmarks are drawn from training inputs by a registered sampler.

        Parameters
        ----------
        x : array of shape (n, ...)
            Training inputs to draw the landmarks from; a bandwidth rule of the kernels is
            resolved on their features.
        n_landmarks : int
            How many landmarks to draw (at most ``len(x)``).
        kernel : str, kernel object, or a sequence of them, default "rbf"
            As in :class:`NystromLayer`.
        y : array of shape (n,), optional
            Class labels of ``x``: the draw is stratified by class (class-balanced shares, the
            thesis' default with ``"uniform"``).
        sampler : str or sampler object, default "uniform"
            The registered sampler that draws the rows of ``x`` (on their features, with the
            first kernel).
        random_state : None, int or numpy Generator
            Seeds the landmark draw.
        feature_extractor : keras layer or model, optional
            As in :class:`NystromLayer`; the draw runs on its outputs.
        **kwargs
            The other parameters of :class:`NystromLayer` (``adaptive``, ``eigen_floor``,
            ``name``, ``dtype``, ...).

        Returns
        -------
        NystromLayer
            The layer, with ``landmark_indices_`` the rows of ``x`` it took.

        Raises
        ------
        ValueError
            Unknown kernel or sampler name (with the closest match), ``n_landmarks`` larger
            than ``len(x)``, ``x`` empty or not 2-D without a feature extractor, ``y`` of
            another length than ``x``.
        """
        x_arr = np.asarray(x)
        if x_arr.ndim < 2 or len(x_arr) == 0:
            raise ValueError(
                f"x must be a non-empty array of shape (n, ...) with one input per "
                f"row, got shape {x_arr.shape}"
            )
        if feature_extractor is None and x_arr.ndim != 2:
            raise ValueError(
                f"x must be 2-D (samples, features) without a feature_extractor, got shape "
                f"{x_arr.shape}; flatten it or give a feature_extractor"
            )
        if y is not None:
            y = np.asarray(y)
            if y.ndim != 1 or len(y) != len(x_arr):
                raise ValueError(
                    f"y must have shape ({len(x_arr)},) to label the rows of x, got shape {y.shape}"
                )
        several = isinstance(kernel, (list, tuple))
        kernels = [_as_kernel(s) for s in (kernel if several else [kernel])]
        if not kernels:
            raise ValueError("kernel is an empty sequence; give at least one kernel")
        ref = _features(feature_extractor, x_arr)
        for k in kernels:
            cls._fit_rule(k, ref)
        idx = select_landmarks(
            kernels[0].prepare(ref),
            n_landmarks,
            kernels[0],
            resolve("sampler", sampler),
            y,
            check_random_state(random_state),
        )
        layer = cls(
            kernels if several else kernels[0],
            x_arr[idx],
            feature_extractor=feature_extractor,
            **kwargs,
        )
        layer.landmark_indices_ = idx
        return layer

    @staticmethod
    def _fit_rule(kernel, features):
        if getattr(kernel, "bandwidth", None) is not None and kernel.gamma_ is None:
            kernel.fit(features)

    def _set_formulas(self, kernels, d):
        built = [_kernels.formula(k, d) for k in kernels]
        self._kernel_specs = [{"name": name, "params": params} for name, params, _ in built]
        self._formulas = [f for _, _, f in built]
        # the kernels with their resolved constants (what the formulas read)
        self.kernels_ = [get_kernel(s["name"], **s["params"]) for s in self._kernel_specs]

    @property
    def n_landmarks(self) -> int:
        """L, the number of landmarks."""
        return self._landmarks_shape[0]

    def build(self, input_shape: tuple[int | None, ...]) -> None:
        """Create the landmarks and the W matrices (Keras calls this before the first call).

        Parameters
        ----------
        input_shape : tuple of int or None
            The shape of the inputs, batch dimension first.

        Raises
        ------
        ValueError
            The inputs do not match the landmarks' shape.
        """
        lm_shape = self._landmarks_shape
        if self.feature_extractor is None:
            if len(input_shape) != 2:
                raise ValueError(
                    f"NystromLayer without a feature_extractor takes inputs of shape "
                    f"(batch, features), got {tuple(input_shape)}"
                )
        if tuple(input_shape[1:]) != tuple(lm_shape[1:]) and None not in input_shape[1:]:
            raise ValueError(
                f"inputs of shape {tuple(input_shape)} do not match the landmarks' "
                f"shape {lm_shape}: each input must have shape {lm_shape[1:]}"
            )
        self.landmarks = self.add_weight(
            shape=lm_shape, initializer="zeros", trainable=False, name="landmarks"
        )
        L = lm_shape[0]
        self.w = [
            self.add_weight(
                shape=(L, L), initializer="zeros", trainable=self.adaptive, name=f"w_{m}"
            )
            for m in range(len(self._formulas))
        ]
        # both are set at construction from data, neither when restored from a config
        if self._landmarks0 is not None and self.initial_w_ is not None:
            self.landmarks.assign(self._landmarks0.astype(self.variable_dtype))
            for w, w0 in zip(self.w, self.initial_w_):
                w.assign(w0.astype(self.variable_dtype))

    def _flat_features(self, inputs, training=None):
        if self.feature_extractor is None:
            z = inputs
        else:  # the extractor has a dtype policy of its own: compute in the layer's dtype
            z = ops.cast(self.feature_extractor(inputs, training=training), self.compute_dtype)
        return ops.reshape(z, (ops.shape(z)[0], -1))

    def kernel_vectors(self, inputs: Any, training: bool | None = None) -> list[Any]:
        """Compute the kernel vectors k_m(f(x), f(L)) of each kernel, before W.

        Parameters
        ----------
        inputs : tensor of shape (batch, ...)
            The inputs.
        training : bool, optional
            Passed to the feature extractor.

        Returns
        -------
        list of tensors of shape (batch, L)
            One per kernel.
        """
        if not self.built:
            self.build(tuple(ops.shape(inputs)))
        z = self._flat_features(ops.cast(inputs, self.compute_dtype), training)
        lm = self._flat_features(ops.cast(self.landmarks, self.compute_dtype), training)
        return [f(z, lm) for f in self._formulas]

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        """Compute the layer's output: each kernel's vectors times its W, concatenated.

        Parameters
        ----------
        inputs : tensor of shape (batch, ...)
            The inputs.
        training : bool, optional
            Passed to the feature extractor.

        Returns
        -------
        tensor of shape (batch, L * n_kernels)
            The Nyström features.
        """
        outs = [
            ops.matmul(kv, ops.cast(w, self.compute_dtype))
            for kv, w in zip(self.kernel_vectors(inputs, training), self.w)
        ]
        return outs[0] if len(outs) == 1 else ops.concatenate(outs, axis=-1)

    def compute_output_shape(self, input_shape: tuple[int | None, ...]) -> tuple[int | None, int]:
        """Return the output shape for inputs of shape ``input_shape``.

        Parameters
        ----------
        input_shape : tuple of int or None
            The shape of the inputs, batch dimension first.

        Returns
        -------
        tuple
            ``(batch, L * n_kernels)``.
        """
        return (input_shape[0], self.n_landmarks * len(self._formulas))

    def get_config(self) -> dict[str, Any]:
        """Return the layer's configuration (what saving a ``.keras`` file stores).

        Returns
        -------
        dict
            Keras' layer configuration with the kernels (name and resolved parameters), the
            landmarks' shape, ``adaptive``, ``eigen_floor`` and the serialized feature
            extractor.
        """
        config = super().get_config()
        config.update(
            {
                "kernel": [dict(s) for s in self._kernel_specs],
                "landmarks_shape": list(self._landmarks_shape),
                "adaptive": self.adaptive,
                "eigen_floor": self.eigen_floor,
                "feature_extractor": None
                if self.feature_extractor is None
                else keras.saving.serialize_keras_object(self.feature_extractor),
            }
        )
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> NystromLayer:
        """Rebuild a layer from :meth:`get_config` (what loading a ``.keras`` file calls).

        Parameters
        ----------
        config : dict
            The output of :meth:`get_config`.

        Returns
        -------
        NystromLayer
            A layer with the configuration's kernels and feature extractor (loading a file,
            Keras then restores its weights).
        """
        config = dict(config)
        config["kernel"] = [get_kernel(s["name"], **s["params"]) for s in config["kernel"]]
        if config.get("feature_extractor") is not None:
            config["feature_extractor"] = keras.saving.deserialize_keras_object(
                config["feature_extractor"]
            )
        return cls(**config)


__all__ = ["NystromLayer"]
