"""Keras 3 layers whose weight is a product of sparse factors with frozen supports.

Giffon 2020, PhD thesis, §3.4: a dense layer computes ``a(x S_1 ⋯ S_Q + b)`` (Eq. 3.25, in
Keras' ``(in, out)`` layout) and a convolution ``a(conv(X, reshape(S_1 ⋯ S_Q)) + b)`` with the
product reshaped to the filter tensor ``(S, S, C, F)`` (Eq. 3.26). Each factor is stored as in
the thesis' implementation (§3.4.3): a dense trainable array of values ``V_q`` times a constant
0/1 mask ``M_q`` (a non-trainable weight), ``S_q = V_q ⊙ M_q``. The gradient with respect to
``V_q`` is zero outside the mask, so training changes only the non-zeros and the support stays
fixed. This stores ``2·r·c`` numbers to represent ``nnz(M_q)`` parameters (a proof of concept,
as in the thesis): :attr:`~sparsekit.nn.SparseFactorsDense.n_nonzero_params` counts the
parameters of the factored form, Keras' ``count_params()`` the stored arrays. The convolution
rebuilds its dense kernel from the factors at every call (speed, not memory, as in the thesis).

The layers are written with ``keras.ops`` only (any Keras 3 backend). Build one from a trained
``Dense`` / ``Conv2D`` layer with :meth:`SparseFactorsDense.from_layer` /
:meth:`SparseFactorsConv2D.from_layer` (Palm4MSA or its control variants, see
:mod:`sparsekit.nn.palminize`), or from scratch (``factors`` / ``masks`` not given): random
``splincol`` supports of level ``sparsity`` with the re-initialisation rule of §3.4.3, drawn
from ``seed``. They save and load with the model (``.keras``): the masks are weights.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import keras
import numpy as np
from keras import ops
from numpy.typing import ArrayLike

from .._typing import RandomStateLike
from .._validation import check_scalar
from .palminize import (
    PalminizedWeight,
    factor_shapes,
    palminize,
    random_supports,
    reinit_values,
    splincol_constraints,
)

if TYPE_CHECKING:
    from ..factorizers.base import Factorizer


def _to_numpy(x):
    """A tensor or a Keras variable (through its value: converting the variable object itself
    goes through a NumPy protocol that NumPy 2 deprecates) as a NumPy array."""
    if isinstance(x, keras.Variable):
        x = x.value
    return np.asarray(ops.convert_to_numpy(x))


def _check_arrays(values, name):
    if values is None:
        return None
    if isinstance(values, np.ndarray) or not hasattr(values, "__len__"):
        raise TypeError(
            f"{name} must be a list of 2-D arrays (one per factor), got {type(values).__name__}"
        )
    out = [np.asarray(v) for v in values]
    for q, v in enumerate(out):
        if v.ndim != 2:
            raise ValueError(f"{name}[{q}] must be 2-D, got shape {v.shape}")
    return out


def _check_source_layer(layer, expected, weights, instead):
    """Raise unless ``layer`` is a built instance of the Keras class ``expected``; ``weights``
    names what is factorized, ``instead`` the ``from_layer`` method for the other layer type."""
    if not isinstance(layer, expected):
        raise TypeError(
            f"layer must be a keras.layers.{expected.__name__}, got "
            f"{type(layer).__name__}; use {instead}"
        )
    if not layer.built:
        raise ValueError(
            f"layer {layer.name!r} is not built: call it on data (or build "
            f"the model) before factorizing its {weights}"
        )


class _SparseFactorsLayer(keras.layers.Layer):
    """Shared part of the sparse-factor layers: the factors, their masks and their product."""

    def __init__(
        self,
        n_factors: int = 2,
        sparsity: int = 2,
        activation: str | Callable[..., Any] | None = None,
        use_bias: bool = True,
        seed: int | None = None,
        factors: Sequence[ArrayLike] | None = None,
        masks: Sequence[ArrayLike] | None = None,
        bias: ArrayLike | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.n_factors = check_scalar(
            n_factors, "n_factors", kind=numbers.Integral, low=1, low_inclusive=True
        )
        self.sparsity = check_scalar(
            sparsity, "sparsity", kind=numbers.Integral, low=1, low_inclusive=True
        )
        if seed is not None:
            seed = check_scalar(seed, "seed", kind=numbers.Integral, low=0, low_inclusive=True)
        self.seed = seed
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        factors = _check_arrays(factors, "factors")
        masks = _check_arrays(masks, "masks")
        for given, what in ((factors, "factors"), (masks, "masks")):
            if given is not None and len(given) != self.n_factors:
                raise ValueError(f"{what} has {len(given)} arrays but n_factors={self.n_factors}")
        if masks is None and factors is not None:
            masks = [f != 0 for f in factors]
        self._init_factors, self._init_masks = factors, masks
        if bias is not None and not self.use_bias:
            raise ValueError("bias is given but use_bias=False; drop bias or set use_bias=True")
        self._init_bias = None if bias is None else np.asarray(bias)

    def _build_factors(self, shape, n_out):
        """Create ``values_q``, ``mask_q`` (and ``bias``) for a weight of 2-D ``shape``."""
        shapes = factor_shapes(shape, self.n_factors)
        # one stream: values drawn from the draws that chose the supports would be biased
        rng = np.random.default_rng(self.seed)
        masks = self._init_masks
        if masks is None:
            cons = splincol_constraints(shape, self.n_factors, self.sparsity)
            masks = random_supports(cons, rng)
        else:
            splincol_constraints(shape, self.n_factors, self.sparsity)  # checks the level
        for q, (m, s) in enumerate(zip(masks, shapes)):
            if m.shape != s:
                raise ValueError(
                    f"factor {q} must have shape {s} for a weight of shape {shape} "
                    f"and n_factors={self.n_factors}, got {m.shape}"
                )
        masks = [np.asarray(m != 0) for m in masks]
        values = self._init_factors
        if values is None:
            values = reinit_values(masks, rng)
        self.factor_values, self.factor_masks = [], []
        for q, (v, m) in enumerate(zip(values, masks)):
            self.factor_values.append(
                self.add_weight(
                    shape=m.shape,
                    initializer=keras.initializers.Constant(np.where(m, v, 0)),
                    name=f"values_{q}",
                )
            )
            self.factor_masks.append(
                self.add_weight(
                    shape=m.shape,
                    initializer=keras.initializers.Constant(m.astype(np.float32)),
                    trainable=False,
                    name=f"mask_{q}",
                )
            )
        self.bias = None
        if self.use_bias:
            b = np.zeros(n_out) if self._init_bias is None else self._init_bias
            if b.shape != (n_out,):
                raise ValueError(f"bias must have shape ({n_out},), got {b.shape}")
            self.bias = self.add_weight(
                shape=(n_out,), initializer=keras.initializers.Constant(b), name="bias"
            )
        # the arrays live in the variables from now on
        self._init_factors = self._init_masks = self._init_bias = None

    def _factor(self, q):
        return ops.multiply(
            self.factor_values[q], ops.cast(self.factor_masks[q], self.factor_values[q].dtype)
        )

    def _product(self):
        out = self._factor(0)
        for q in range(1, self.n_factors):
            out = ops.matmul(out, self._factor(q))
        return out

    def _finish(self, out):
        if self.bias is not None:
            out = ops.add(out, self.bias)
        return self.activation(out) if self.activation is not None else out

    def get_factors(self) -> list[np.ndarray]:
        """Return the factors ``S_q = V_q ⊙ M_q`` as NumPy arrays.

        Returns
        -------
        list of ndarray
            The factors, the first applied to the input first.
        """
        return [_to_numpy(self._factor(q)) for q in range(self.n_factors)]

    def get_masks(self) -> list[np.ndarray]:
        """Return the supports ``M_q`` as boolean NumPy arrays.

        Returns
        -------
        list of ndarray of bool
            The supports, the first factor's first.
        """
        return [_to_numpy(m) != 0 for m in self.factor_masks]

    @property
    def n_nonzero_params(self) -> int:
        """Parameters of the factored form: the non-zeros of the supports, plus the bias."""
        nnz = sum(int(m.sum()) for m in self.get_masks())
        return nnz + (int(self.bias.shape[0]) if self.bias is not None else 0)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(
            {
                "n_factors": self.n_factors,
                "sparsity": self.sparsity,
                "activation": keras.activations.serialize(self.activation),
                "use_bias": self.use_bias,
                "seed": self.seed,
            }
        )
        return config


@keras.saving.register_keras_serializable(package="sparsekit")
class SparseFactorsDense(_SparseFactorsLayer):
    """A dense layer ``a(x S_1 ⋯ S_Q + b)`` with sparse factors of frozen supports.

    Giffon 2020, PhD thesis, Eq. 3.25 (written for Keras' ``(in, out)`` layout): ``S_1`` is
    ``D × A``, ``S_2 … S_{Q−1}`` are ``A × A`` and ``S_Q`` is ``A × units``, with
    ``A = min(D, units)`` (:func:`~sparsekit.nn.palminize.factor_shapes`). Only the values on
    the supports are trained (see the module notes). As ``keras.layers.Dense``, it passes an
    input mask on unchanged, and once built it refuses inputs of another width.

    Parameters
    ----------
    units : int
        Output dimension.
    n_factors : int, default 2
        ``Q >= 1``.
    sparsity : int, default 2
        ``splincol`` level ``K`` in ``[1, min(D, units)]``: of the random supports drawn when
        ``masks`` and ``factors`` are not given (checked against the shape at build time).
    activation : str or callable, optional
        The activation ``a`` (default: none).
    use_bias : bool, default True
        Whether the layer adds a bias ``b``.
    seed : int, optional
        Seed of the random supports and values drawn when none are given.
    factors : list of Q 2-D arrays, optional
        Initial values of ``S_1 … S_Q`` (zeros outside the supports are enforced).
    masks : list of Q 2-D arrays, optional
        The supports (non-zero entries); default: the non-zeros of ``factors``.
    bias : 1-D array, optional
        Initial bias (default zeros).
    **kwargs
        Passed to ``keras.layers.Layer`` (``name``, ``dtype``, ...).

    Raises
    ------
    ValueError, TypeError
        ``units``, ``n_factors`` or ``sparsity`` not a positive integer; ``factors`` /
        ``masks`` not Q 2-D arrays; at build time, shapes that do not chain from the input
        dimension to ``units`` or ``sparsity`` above ``min(D, units)``.

    Examples
    --------
    >>> import keras
    >>> layer = SparseFactorsDense(8, n_factors=2, sparsity=2, seed=0)
    >>> y = layer(keras.ops.ones((3, 16)))
    >>> tuple(y.shape), [m.shape for m in layer.get_masks()]
    ((3, 8), [(16, 8), (8, 8)])
    """

    def __init__(
        self,
        units: int,
        n_factors: int = 2,
        sparsity: int = 2,
        activation: str | Callable[..., Any] | None = None,
        use_bias: bool = True,
        seed: int | None = None,
        factors: Sequence[ArrayLike] | None = None,
        masks: Sequence[ArrayLike] | None = None,
        bias: ArrayLike | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            n_factors, sparsity, activation, use_bias, seed, factors, masks, bias, **kwargs
        )
        self.units = check_scalar(units, "units", kind=numbers.Integral, low=1, low_inclusive=True)
        # as keras.layers.Dense: a mask passes through, inputs are checked against the width
        self.supports_masking = True
        self.input_spec = keras.InputSpec(min_ndim=2)

    def build(self, input_shape: tuple[int | None, ...]) -> None:
        """Create the supports and the factors' values (Keras calls this before the first call).

        Parameters
        ----------
        input_shape : tuple of int or None
            The shape of the inputs, batch dimension first.

        Raises
        ------
        ValueError
            The last input dimension is unknown, or the factors do not chain to it.
        """
        in_dim = input_shape[-1]
        if in_dim is None:
            raise ValueError("SparseFactorsDense needs a known last input dimension")
        self._build_factors((int(in_dim), self.units), self.units)
        self.input_spec = keras.InputSpec(min_ndim=2, axes={-1: int(in_dim)})

    def call(self, inputs: Any) -> Any:
        """Apply the layer: ``a(x S_1 ⋯ S_Q + b)``.

        Parameters
        ----------
        inputs : tensor
            The inputs ``x``, features last.

        Returns
        -------
        tensor
            The layer's output.
        """
        x = inputs
        for q in range(self.n_factors):
            x = ops.matmul(x, self._factor(q))
        return self._finish(x)

    def compute_output_shape(self, input_shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
        """Return the output shape for inputs of shape ``input_shape``.

        Parameters
        ----------
        input_shape : tuple of int or None
            The shape of the inputs, batch dimension first.

        Returns
        -------
        tuple
            ``input_shape`` with its last dimension replaced by ``units``.

        Raises
        ------
        ValueError
            The layer is built and the last dimension differs from its input width.
        """
        width = self.factor_values[0].shape[0] if self.built else None
        if width is not None and input_shape[-1] not in (None, width):
            raise ValueError(
                f"SparseFactorsDense {self.name!r} was built for inputs of width {width} "
                f"(last dimension), got input shape {tuple(input_shape)} of width "
                f"{input_shape[-1]}"
            )
        return tuple(input_shape[:-1]) + (self.units,)

    def get_kernel(self) -> np.ndarray:
        """Return the dense kernel ``S_1 ⋯ S_Q`` as a NumPy array.

        Returns
        -------
        ndarray of shape (D, units)
            The product of the factors.
        """
        return _to_numpy(self._product())

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["units"] = self.units
        return config

    @classmethod
    def from_layer(
        cls,
        layer: keras.layers.Dense,
        n_factors: int,
        sparsity: int,
        *,
        init: str = "palm",
        factorizer: str | Factorizer = "palm4msa",
        n_iter: int = 300,
        tol: float = 1e-6,
        random_state: RandomStateLike = None,
        name: str | None = None,
    ) -> tuple[SparseFactorsDense, PalminizedWeight]:
        """Build a sparse-factor copy of a trained ``keras.layers.Dense`` layer (thesis §3.4.3).

        Its kernel ``W`` (``D × units``) is factorized by
        :func:`~sparsekit.nn.palminize.palminize`; the bias and the activation are kept.

        Parameters
        ----------
        layer : keras.layers.Dense
            A built layer.
        n_factors : int
            As for :func:`~sparsekit.nn.palminize.palminize`.
        sparsity : int
            As for :func:`~sparsekit.nn.palminize.palminize`.
        init : {"palm", "reinit", "random"}, default "palm"
            As for :func:`~sparsekit.nn.palminize.palminize`.
        factorizer : str or factorizer, default "palm4msa"
            As for :func:`~sparsekit.nn.palminize.palminize`.
        n_iter : int, default 300
            As for :func:`~sparsekit.nn.palminize.palminize`.
        tol : float, default 1e-6
            As for :func:`~sparsekit.nn.palminize.palminize`.
        random_state : None, int or numpy Generator
            As for :func:`~sparsekit.nn.palminize.palminize`.
        name : str, optional
            The new layer's name (default: the old one's).

        Returns
        -------
        layer : SparseFactorsDense
            Not built yet (it is built when called).
        factorization : PalminizedWeight
            The factors, supports and relative error ``‖W − W̃‖²/‖W‖²``.

        Raises
        ------
        TypeError
            ``layer`` is not a ``keras.layers.Dense``.
        ValueError
            ``layer`` is not built, or the factorization's arguments are invalid.
        """
        _check_source_layer(
            layer, keras.layers.Dense, "kernel", "SparseFactorsConv2D.from_layer for a Conv2D"
        )
        fact, common = _palminized(
            layer,
            _to_numpy(layer.kernel),
            n_factors,
            sparsity,
            name,
            init=init,
            factorizer=factorizer,
            n_iter=n_iter,
            tol=tol,
            random_state=random_state,
        )
        return cls(layer.units, **common), fact


@keras.saving.register_keras_serializable(package="sparsekit")
class SparseFactorsConv2D(_SparseFactorsLayer):
    """A 2-D convolution whose filters are a product of sparse factors with frozen supports.

    Giffon 2020, PhD thesis, Eq. 3.26: the kernel is ``reshape(S_1 ⋯ S_Q, (kh, kw, C, F))``
    (row-major: the product is the filter tensor reshaped to ``(kh·kw·C) × F``), rebuilt
    at every call and passed to ``keras.ops.conv``. Only the values on the supports are
    trained (see the module notes).

    Parameters
    ----------
    filters : int
        ``F``.
    kernel_size : int or (int, int)
        ``(kh, kw)``.
    strides : int or (int, int), default 1
        As for ``keras.layers.Conv2D``.
    padding : {"valid", "same"}, default "valid"
        As for ``keras.layers.Conv2D``.
    data_format : {"channels_last", "channels_first"}, optional
        As for ``keras.layers.Conv2D`` (default: Keras' image data format).
    dilation_rate : int or (int, int), default 1
        As for ``keras.layers.Conv2D``.
    n_factors : int, default 2
        As for :class:`SparseFactorsDense`, for the ``(kh·kw·C) × F`` weight matrix.
    sparsity : int, default 2
        As for :class:`SparseFactorsDense`.
    activation : str or callable, optional
        As for :class:`SparseFactorsDense`.
    use_bias : bool, default True
        As for :class:`SparseFactorsDense`.
    seed : int, optional
        As for :class:`SparseFactorsDense`.
    factors : list of Q 2-D arrays, optional
        As for :class:`SparseFactorsDense`.
    masks : list of Q 2-D arrays, optional
        As for :class:`SparseFactorsDense`.
    bias : 1-D array, optional
        As for :class:`SparseFactorsDense`.
    **kwargs
        As for :class:`SparseFactorsDense`.

    Raises
    ------
    ValueError, TypeError
        As for :class:`SparseFactorsDense`; unknown ``padding``.
    """

    def __init__(
        self,
        filters: int,
        kernel_size: int | tuple[int, int],
        strides: int | tuple[int, int] = 1,
        padding: str = "valid",
        data_format: str | None = None,
        dilation_rate: int | tuple[int, int] = 1,
        n_factors: int = 2,
        sparsity: int = 2,
        activation: str | Callable[..., Any] | None = None,
        use_bias: bool = True,
        seed: int | None = None,
        factors: Sequence[ArrayLike] | None = None,
        masks: Sequence[ArrayLike] | None = None,
        bias: ArrayLike | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            n_factors, sparsity, activation, use_bias, seed, factors, masks, bias, **kwargs
        )
        self.filters = check_scalar(
            filters, "filters", kind=numbers.Integral, low=1, low_inclusive=True
        )
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        padding = str(padding).lower()
        if padding not in ("valid", "same"):
            raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
        self.padding = padding
        data_format = keras.config.image_data_format() if data_format is None else data_format
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(
                f"data_format must be 'channels_last' or 'channels_first', got {data_format!r}"
            )
        self.data_format = data_format

    def _channels(self, input_shape):
        c = input_shape[-1] if self.data_format == "channels_last" else input_shape[1]
        if c is None:
            raise ValueError("SparseFactorsConv2D needs a known number of input channels")
        return int(c)

    def build(self, input_shape: tuple[int | None, ...]) -> None:
        """Create the supports and the factors' values (Keras calls this before the first call).

        Parameters
        ----------
        input_shape : tuple of int or None
            The shape of the inputs, batch dimension first.

        Raises
        ------
        ValueError
            The number of input channels is unknown, or the factors do not chain to it.
        """
        kh, kw = self.kernel_size
        self.in_channels = self._channels(input_shape)
        self._build_factors((kh * kw * self.in_channels, self.filters), self.filters)
        axis = -1 if self.data_format == "channels_last" else 1
        self.input_spec = keras.InputSpec(min_ndim=4, axes={axis: self.in_channels})

    def get_kernel(self) -> np.ndarray:
        """Return the filter tensor as a NumPy array.

        Returns
        -------
        ndarray of shape (kh, kw, C, F)
            The product of the factors, reshaped.
        """
        return _to_numpy(self._kernel())

    def _kernel(self):
        kh, kw = self.kernel_size
        return ops.reshape(self._product(), (kh, kw, self.in_channels, self.filters))

    def call(self, inputs: Any) -> Any:
        """Apply the layer: convolution with ``reshape(S_1 ⋯ S_Q)``, bias, activation.

        Parameters
        ----------
        inputs : tensor
            Images in ``data_format``.

        Returns
        -------
        tensor
            The layer's output.
        """
        out = ops.conv(
            inputs,
            self._kernel(),
            strides=self.strides,
            padding=self.padding,
            data_format=self.data_format,
            dilation_rate=self.dilation_rate,
        )
        if self.bias is not None and self.data_format == "channels_first":
            out = ops.add(out, ops.reshape(self.bias, (1, self.filters, 1, 1)))
            return self.activation(out) if self.activation is not None else out
        return self._finish(out)

    def compute_output_shape(self, input_shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
        """Return the output shape for inputs of shape ``input_shape``.

        Parameters
        ----------
        input_shape : tuple of int or None
            The shape of the inputs, batch dimension first.

        Returns
        -------
        tuple
            The output shape of the equivalent ``keras.layers.Conv2D``.
        """
        return keras.layers.Conv2D(
            self.filters,
            self.kernel_size,
            strides=self.strides,
            padding=self.padding,
            data_format=self.data_format,
            dilation_rate=self.dilation_rate,
        ).compute_output_shape(input_shape)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(
            {
                "filters": self.filters,
                "kernel_size": self.kernel_size,
                "strides": self.strides,
                "padding": self.padding,
                "data_format": self.data_format,
                "dilation_rate": self.dilation_rate,
            }
        )
        return config

    @classmethod
    def from_layer(
        cls,
        layer: keras.layers.Conv2D,
        n_factors: int,
        sparsity: int,
        *,
        init: str = "palm",
        factorizer: str | Factorizer = "palm4msa",
        n_iter: int = 300,
        tol: float = 1e-6,
        random_state: RandomStateLike = None,
        name: str | None = None,
    ) -> tuple[SparseFactorsConv2D, PalminizedWeight]:
        """Build a sparse-factor copy of a trained ``keras.layers.Conv2D`` layer (thesis §3.4.3).

        Its filter tensor ``(kh, kw, C, F)`` reshaped to ``(kh·kw·C) × F`` is factorized by
        :func:`~sparsekit.nn.palminize.palminize`; strides, padding, data format, dilation,
        bias and activation are kept.

        Parameters
        ----------
        layer : keras.layers.Conv2D
            A built layer with ``groups == 1``.
        n_factors : int
            As for :func:`~sparsekit.nn.palminize.palminize`.
        sparsity : int
            As for :func:`~sparsekit.nn.palminize.palminize`.
        init : {"palm", "reinit", "random"}, default "palm"
            As for :func:`~sparsekit.nn.palminize.palminize`.
        factorizer : str or factorizer, default "palm4msa"
            As for :func:`~sparsekit.nn.palminize.palminize`.
        n_iter : int, default 300
            As for :func:`~sparsekit.nn.palminize.palminize`.
        tol : float, default 1e-6
            As for :func:`~sparsekit.nn.palminize.palminize`.
        random_state : None, int or numpy Generator
            As for :func:`~sparsekit.nn.palminize.palminize`.
        name : str, optional
            The new layer's name (default: the old one's).

        Returns
        -------
        layer : SparseFactorsConv2D
        factorization : PalminizedWeight

        Raises
        ------
        TypeError
            ``layer`` is not a ``keras.layers.Conv2D``.
        ValueError
            ``layer`` is not built or is a grouped convolution; invalid factorization
            arguments.
        """
        _check_source_layer(
            layer, keras.layers.Conv2D, "filters", "SparseFactorsDense.from_layer for a Dense"
        )
        if getattr(layer, "groups", 1) != 1:
            raise ValueError(
                f"layer {layer.name!r} is a grouped convolution (groups="
                f"{layer.groups}); only groups=1 has one (S·S·C) × F weight matrix"
            )
        K = _to_numpy(layer.kernel)
        fact, common = _palminized(
            layer,
            K.reshape(-1, K.shape[-1]),
            n_factors,
            sparsity,
            name,
            init=init,
            factorizer=factorizer,
            n_iter=n_iter,
            tol=tol,
            random_state=random_state,
        )
        new = cls(
            layer.filters,
            layer.kernel_size,
            strides=layer.strides,
            padding=layer.padding,
            data_format=layer.data_format,
            dilation_rate=layer.dilation_rate,
            **common,
        )
        return new, fact


def _palminized(layer, W, n_factors, sparsity, name, **factorization):
    """Factor a trained layer's weight matrix ``W`` (:func:`palminize`) and return the
    factorization with the constructor arguments both sparse-factor layers take from it."""
    fact = palminize(W, n_factors, sparsity, **factorization)
    common = dict(
        n_factors=n_factors,
        sparsity=sparsity,
        activation=layer.activation,
        use_bias=layer.use_bias,
        factors=fact.factors,
        masks=fact.masks,
        bias=_to_numpy(layer.bias) if layer.use_bias else None,
        name=name or layer.name,
        dtype=layer.dtype_policy,
    )
    return fact, common


def _pair(value, name):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (value, value)
    try:
        a, b = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}") from None
    return (
        check_scalar(a, name, kind=numbers.Integral, low=1, low_inclusive=True),
        check_scalar(b, name, kind=numbers.Integral, low=1, low_inclusive=True),
    )


__all__ = ["SparseFactorsDense", "SparseFactorsConv2D"]
