"""``compress``: replace the dense and convolutional layers of a trained Keras model by products of
sparse factors (Giffon 2020, PhD thesis, §3.4.3, "PALMinize, then fine-tune").

The returned model computes with :class:`~sparsekit.nn.SparseFactorsDense` and
:class:`~sparsekit.nn.SparseFactorsConv2D` layers in place of the eligible layers and a copy of
the other layers' weights; fine-tuning it (``model.compile``, ``model.fit``) changes only the
values on the frozen supports, step 4 of the thesis' procedure.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import keras
import numpy as np

from .._typing import RandomStateLike
from .._validation import check_option, check_random_state, check_scalar
from .palminize import INITS
from .sparse_factors import SparseFactorsConv2D, SparseFactorsDense, _SparseFactorsLayer

if TYPE_CHECKING:
    from ..factorizers.base import Factorizer


@dataclass
class LayerCompression:
    """One row of :func:`compress`'s report.

    Parameters
    ----------
    layer : str
        The layer's name.
    kind : str
        ``"Dense"`` or ``"Conv2D"``.
    shape : (int, int)
        The weight matrix' shape ``(D, F)`` (``(kh·kw·C, F)`` for a convolution).
    replaced : bool
        Whether the layer was replaced.
    reason : str
        Why it was left as it is (empty when replaced).
    relative_error : float
        ``‖W − W̃‖_F² / ‖W‖_F²`` (Eq. 3.29) of the new layer's initial product ``W̃``; 0 when
        the layer was not replaced.
    params_before : int
        Kernel entries plus bias of the original layer.
    params_after : int
        Non-zeros of the factors' supports plus bias (``params_before`` when not replaced).
    n_iter : int
        Iterations of the factorizer (0 for ``init="random"`` or not replaced).
    stop_reason : str
        The factorizer's stop reason (empty when no factorizer ran).
    """

    layer: str
    kind: str
    shape: tuple
    replaced: bool
    reason: str
    relative_error: float
    params_before: int
    params_after: int
    n_iter: int = 0
    stop_reason: str = ""

    def as_dict(self) -> dict:
        """Return the row as a dict (for tables).

        Returns
        -------
        dict
            Field name to value.
        """
        return asdict(self)


def _weight_shape(layer):
    shape = tuple(int(v) for v in layer.kernel.shape)
    return (int(np.prod(shape[:-1])), shape[-1])


def _eligible_kind(layer):
    if type(layer) is keras.layers.Dense:
        return "Dense"
    if type(layer) is keras.layers.Conv2D:
        return "Conv2D"
    return None


def count_parameters(model: keras.Model) -> int:
    """Count the parameters of a model, each sparse-factor layer by its factored form.

    A :class:`~sparsekit.nn.SparseFactorsDense` / :class:`~sparsekit.nn.SparseFactorsConv2D`
    layer counts the non-zeros of its supports plus its bias
    (:attr:`~sparsekit.nn.SparseFactorsDense.n_nonzero_params`), every other layer
    ``count_params()`` (nested models are walked through).

    Parameters
    ----------
    model : keras.Model
        A built model.

    Returns
    -------
    int
        The number of parameters.
    """
    total = 0
    for layer in model.layers:
        if isinstance(layer, _SparseFactorsLayer):
            total += layer.n_nonzero_params
        elif isinstance(layer, keras.Model):
            total += count_parameters(layer)
        else:
            total += int(layer.count_params())
    return total


def compress(
    model: keras.Model,
    n_factors: int,
    sparsity: int,
    *,
    init: str = "palm",
    factorizer: str | Factorizer = "palm4msa",
    layers: Iterable[str] | None = None,
    n_iter: int = 300,
    tol: float = 1e-6,
    random_state: RandomStateLike = 0,
) -> tuple[keras.Model, list[LayerCompression]]:
    """Replace every eligible ``Dense`` / ``Conv2D`` layer of ``model`` by sparse factors.

    The new layers compute a product of sparse factors (Giffon 2020, PhD thesis, §3.4.3).
    Each eligible layer's weight ``W`` is approximated by ``Q`` factors in ``splincol`` sets of
    level ``K`` (:func:`~sparsekit.nn.palminize.palminize`; the thesis used flat Palm4MSA, at
    most 300 iterations, tolerance ``1e-6``), and the layer is replaced by a
    :class:`~sparsekit.nn.SparseFactorsDense` or :class:`~sparsekit.nn.SparseFactorsConv2D`
    with the same bias, activation and (for convolutions) strides, padding, data format and
    dilation. The other layers are copied with their weights; ``model`` is not modified.

    A layer is eligible when all of these hold:

    1. its class is exactly ``keras.layers.Dense`` or ``keras.layers.Conv2D`` (a subclass may
       compute something else with its kernel), and for ``Conv2D`` ``groups == 1``;
    2. it is a layer of ``model`` itself (the layers of a nested model are not visited);
    3. its name is in ``layers``, when ``layers`` is given;
    4. ``sparsity < min(D, F)`` for its ``D × F`` weight matrix: at ``K >= min(D, F)``
       ``splincol`` keeps every entry, the factors are dense and the layer cannot be made
       sparse; it is left as it is, and its report row says so.

    Parameters
    ----------
    model : keras.Model
        A built ``Sequential`` or functional model (a subclassed model cannot be rebuilt
        layer by layer).
    n_factors : int
        ``Q >= 1`` factors per layer.
    sparsity : int
        ``K >= 1``: the ``splincol`` level (see rule 4).
    init : {"palm", "reinit", "random"}, default "palm"
        Palm4MSA's factors, or the thesis' control variants: Palm4MSA's supports with values
        re-initialised (He for the first factor, Xavier for the others, fan-in = non-zeros per
        column), or random supports of the same levels with those values.
    factorizer : {"palm4msa", "hierarchical-palm4msa"} or factorizer, default "palm4msa"
        The factorizer of ``init="palm"`` and ``"reinit"``.
    layers : iterable of str, optional
        Names of the layers to consider (default: every layer).
    n_iter : int, default 300
        Passed to the named factorizer.
    tol : float, default 1e-6
        Passed to the named factorizer.
    random_state : None, int or numpy Generator, default 0
        For ``"reinit"`` and ``"random"`` (one stream, through the layers in order).

    Returns
    -------
    compressed : keras.Model
        The new model (not compiled).
    report : list of LayerCompression
        One row per ``Dense`` / ``Conv2D`` layer (by class), in the model's order.

    Raises
    ------
    TypeError
        ``model`` is not a Keras model; ``layers`` is a string.
    ValueError
        ``model`` is not built or is subclassed; a name of ``layers`` is not a layer of
        ``model``; ``n_factors < 1`` or ``sparsity < 1``; unknown ``init`` or ``factorizer``.

    Examples
    --------
    >>> import keras
    >>> model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(16, name="hidden"),
    ...                           keras.layers.Dense(4, name="out")])
    >>> small, report = compress(model, n_factors=2, sparsity=4)
    >>> [(r.layer, r.replaced, r.params_before) for r in report]
    [('hidden', True, 528), ('out', False, 68)]
    """
    if not isinstance(model, keras.Model):
        raise TypeError(f"model must be a keras.Model, got {type(model).__name__}")
    Q = check_scalar(n_factors, "n_factors", kind=numbers.Integral, low=1, low_inclusive=True)
    K = check_scalar(sparsity, "sparsity", kind=numbers.Integral, low=1, low_inclusive=True)
    init = check_option(init, "init", INITS)
    if not model.built:
        raise ValueError("model is not built: build it (or call it on data) before compressing")
    if not isinstance(model, keras.Sequential) and not hasattr(model, "_operations"):
        raise ValueError(
            f"model is a subclassed keras.Model ({type(model).__name__}); compress "
            "rebuilds Sequential and functional models only"
        )
    names = [layer.name for layer in model.layers]
    if layers is not None:
        if isinstance(layers, str):
            raise TypeError("layers must be a list of layer names, not a string")
        layers = set(layers)
        unknown = sorted(layers - set(names))
        if unknown:
            raise ValueError(
                f"layers names {unknown}, which are not layers of the model; its layers are {names}"
            )
    rng = check_random_state(random_state)
    report, replacements = [], {}
    for layer in model.layers:
        kind = _eligible_kind(layer)
        if kind is None:
            continue
        shape = _weight_shape(layer)
        before = int(layer.count_params())
        reason = ""
        if kind == "Conv2D" and layer.groups != 1:
            reason = f"grouped convolution (groups={layer.groups})"
        elif layers is not None and layer.name not in layers:
            reason = "not in layers"
        elif K >= min(shape):
            reason = f"sparsity={K} >= min{shape} = {min(shape)}: splincol would keep every entry"
        if reason:
            report.append(
                LayerCompression(layer.name, kind, shape, False, reason, 0.0, before, before)
            )
            continue
        cls = SparseFactorsDense if kind == "Dense" else SparseFactorsConv2D
        new, fact = cls.from_layer(
            layer, Q, K, init=init, factorizer=factorizer, n_iter=n_iter, tol=tol, random_state=rng
        )
        replacements[layer.name] = new
        bias = int(layer.bias.shape[0]) if layer.use_bias else 0
        report.append(
            LayerCompression(
                layer.name,
                kind,
                shape,
                True,
                "",
                fact.relative_error,
                before,
                fact.nnz + bias,
                fact.extra.get("n_iter", 0),
                fact.extra.get("stop_reason", ""),
            )
        )

    def clone(layer):
        if layer.name in replacements:
            return replacements[layer.name]
        return layer.__class__.from_config(layer.get_config())

    compressed = keras.models.clone_model(model, clone_function=clone)
    for old, new in zip(model.layers, compressed.layers):
        if old.name not in replacements:
            for target, source in zip(new.weights, old.weights, strict=True):
                # a copy: training the new model may donate (free) its variables' buffers
                target.assign(np.array(source.value, copy=True))
    return compressed, report


__all__ = ["compress", "count_parameters", "LayerCompression"]
