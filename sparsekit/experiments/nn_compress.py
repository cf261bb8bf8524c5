"""The ``compress`` experiment of the ``nn`` task (:data:`COMPRESS`, an entry of
:data:`sparsekit.experiments.nn.EXPERIMENTS`): a LeNet-style network compressed by products of
sparse factors, then fine-tuned (Giffon 2020, PhD thesis, §3.4, Table 3.6).

The protocol for one data set of square grey images ``(X, y)`` (scikit-learn's digits: 8 × 8),
the run's seed ``s`` and one ``(Q, K)`` = (``n_factors``, ``sparsity``):

1. split: a permutation drawn from ``default_rng(s)`` puts ``test_fraction`` of the images in
   the test set and ``val_fraction`` of the rest in the validation set; the pixels are divided
   by the largest pixel value;
2. base network (:func:`lenet`, LeNet adapted to 8 × 8 inputs): ``conv1`` 3 × 3 × 16 and
   ``conv2`` 3 × 3 × 32 ("same" padding, ReLU, each followed by a 2 × 2 max-pooling), ``fc1``
   64 and ``fc2`` 32 units (ReLU) and a 10-way softmax ``out`` (15,466 parameters); trained for
   ``epochs`` epochs (100, as in the thesis) with RMSProp at ``lr`` (1e-3) on the
   cross-entropy, batches of ``batch_size`` (the examples' order drawn from ``s``; the initial
   weights from Keras' seed ``s``). The thesis' LeNet (28 × 28 MNIST, 5 × 5 filters) does not
   fit 8 × 8 images, hence the smaller layers; its lr of 1e-4 suits MNIST's 40,000 training
   images (1,250 steps per epoch), not the digits' ~1,150 (36);
3. compression (:func:`sparsekit.nn.compress`): every eligible layer is replaced by ``Q``
   sparse factors of ``splincol`` level ``K``, for each variant: ``"palm"`` (Palm4MSA's
   factors, at most ``palm_iter`` iterations, tolerance 1e-6, the thesis' settings),
   ``"reinit"`` (Palm4MSA's supports, values re-initialised by He/Xavier with fan-in = non-zeros
   per column) and ``"random"`` (random supports of the same levels, same initialisation).
   A layer with ``K >= min(D, F)`` cannot be made sparse and stays dense (at ``K = 14``:
   ``conv1``, 9 × 16, and ``out``, 32 × 10; the thesis' LeNet has the same case at ``K = 14``
   for its first convolution, 25 × 6, and its output layer, 84 × 10);
4. fine-tuning: the compressed network is trained for ``finetune_epochs`` epochs (default:
   ``epochs``, as in the thesis) with RMSProp, only the values on the supports changing. With
   ``select_lr`` the learning rate is chosen, separately for each variant, among
   :data:`LR_GRID` (the thesis' {1e-3, 1e-4, 1e-5}) by the validation accuracy after
   ``select_epochs`` epochs (the thesis: 10); otherwise it is ``lr``;
5. test accuracy (and cross-entropy) of the base network and of each fine-tuned network, and
   their parameter counts (:func:`sparsekit.nn.count_parameters`: each sparse-factor layer
   counted by its non-zeros plus its bias).

``method`` (``"all"``, or one of ``"palm"``, ``"reinit"``, ``"random"``) picks the variants
run. Rows (the base network, then one per variant): ``method`` (``"base"`` or the variant),
``n_factors``, ``sparsity``, ``accuracy`` and ``loss`` (test accuracy and mean cross-entropy,
after fine-tuning; the base network's for ``"base"``), ``accuracy_before`` (test, right after
compression), ``params`` (the whole network), ``params_compressed`` (the replaced layers,
before for ``"base"``), ``n_replaced``, ``mean_error`` and ``max_error``
(``‖W − W̃‖²/‖W‖²`` over the replaced layers, Eq. 3.29), ``lr`` (of the fine-tuning),
``fit_time`` (seconds: training for ``"base"``, compression and fine-tuning otherwise).

The base network of a ``(data, seed, training parameters)`` is trained once per process and
kept for the next runs (the runs of a sweep over ``(Q, K)`` compress the same network, as in the
thesis).
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_option
from ..run.tasks import Task, TaskContext

if TYPE_CHECKING:
    import keras

#: the thesis' grid of fine-tuning learning rates (§3.4.4.3)
LR_GRID = (1e-3, 1e-4, 1e-5)
#: the compared variants, in table order
METHODS = ("palm", "reinit", "random")

#: the experiment's parameters and their defaults
PARAMS = {
    "n_factors": 2,
    "sparsity": 2,
    "method": "all",
    "epochs": 100,
    "finetune_epochs": None,
    "lr": 1e-3,
    "batch_size": 32,
    "select_lr": True,
    "select_epochs": 10,
    "palm_iter": 300,
    "factorizer": "palm4msa",
    "test_fraction": 0.25,
    "val_fraction": 0.15,
}

#: the base network of the latest ``(data, seed, training parameters)``: weights, accuracy, time
_BASE: dict = {}


def lenet(input_shape: tuple[int, ...], n_classes: int) -> keras.Sequential:
    """Build the LeNet-style network of the experiment (see the module notes), not compiled.

    Parameters
    ----------
    input_shape : tuple of int
        The shape of one image, ``(side, side, 1)``.
    n_classes : int
        The number of classes (width of the softmax output).

    Returns
    -------
    keras.Sequential
        The network.
    """
    import keras
    from keras import layers

    return keras.Sequential(
        [
            keras.Input(input_shape),
            layers.Conv2D(16, 3, padding="same", activation="relu", name="conv1"),
            layers.MaxPooling2D(2, name="pool1"),
            layers.Conv2D(32, 3, padding="same", activation="relu", name="conv2"),
            layers.MaxPooling2D(2, name="pool2"),
            layers.Flatten(name="flatten"),
            layers.Dense(64, activation="relu", name="fc1"),
            layers.Dense(32, activation="relu", name="fc2"),
            layers.Dense(n_classes, activation="softmax", name="out"),
        ],
        name="lenet",
    )


def images(X: ArrayLike) -> np.ndarray:
    """Return ``X`` as ``(n, side, side, 1)`` float32 images divided by their largest value.

    Parameters
    ----------
    X : array-like of shape (n, side * side) or (n, side, side) or (n, side, side, 1)
        Square grey-level images, flattened or not.

    Returns
    -------
    ndarray of shape (n, side, side, 1)
        The images, float32, scaled to a largest value of 1.

    Raises
    ------
    ValueError
        ``X`` does not hold square images.
    """
    X = np.asarray(X, dtype=np.float32)
    if X.ndim == 2:
        side = int(round(np.sqrt(X.shape[1])))
        if side * side != X.shape[1]:
            raise ValueError(
                f"nn compress: X has {X.shape[1]} features, not a square image; "
                "give square grey images (n, side * side) or (n, side, side)"
            )
        X = X.reshape(len(X), side, side)
    if X.ndim == 3:
        X = X[..., None]
    if X.ndim != 4:
        raise ValueError(f"nn compress: X must hold images, got shape {X.shape}")
    top = float(np.abs(X).max())
    return X / top if top > 0 else X


def split(
    n: int, rng: np.random.Generator, test_fraction: float, val_fraction: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split ``range(n)`` into ``(train, val, test)`` index arrays of a permutation (step 1).

    Parameters
    ----------
    n : int
        The number of samples.
    rng : numpy.random.Generator
        Draws the permutation.
    test_fraction : float
        The fraction of the samples held out for testing (at least one).
    val_fraction : float
        The fraction of the remaining samples held out for validation (at least one).

    Returns
    -------
    train : ndarray of int
        The training indices.
    val : ndarray of int
        The validation indices.
    test : ndarray of int
        The test indices.
    """
    idx = rng.permutation(n)
    n_test = max(1, int(test_fraction * n))
    n_val = max(1, int(val_fraction * (n - n_test)))
    return idx[n_test + n_val :], idx[n_test : n_test + n_val], idx[:n_test]


def _compile(model, lr):
    import keras

    model.compile(optimizer=keras.optimizers.RMSprop(lr), loss="sparse_categorical_crossentropy")


def _train(model, data, weights, lr, epochs, batch_size, seed):
    """Train the compiled ``model`` from ``weights`` (its variables' values; None: as they are)
    with a fresh RMSProp state at ``lr``. The compiled training step is kept between calls:
    only the values of the variables change.

    The order of the examples is drawn here: ``epochs`` permutations from
    ``default_rng(seed)``, concatenated and run in batches without reshuffling. Keras' own
    shuffling keeps a random state across ``fit`` calls, which would make a run depend on the
    runs before it in the process."""
    (Xtr, ytr), _, _ = data
    if weights is not None:
        for var, w in zip(model.weights, weights):
            var.assign(w)
    for var in model.optimizer.variables:
        var.assign(np.zeros(var.shape, dtype=var.dtype))
    model.optimizer.learning_rate = lr
    if epochs:
        rng = np.random.default_rng(seed)
        order = np.concatenate([rng.permutation(len(Xtr)) for _ in range(epochs)])
        model.fit(Xtr[order], ytr[order], epochs=1, batch_size=batch_size, shuffle=False, verbose=0)
    return model


def accuracy(model: keras.Model, X: np.ndarray, y: np.ndarray) -> float:
    """Compute the classification accuracy of ``model`` on ``(X, y)``.

    Parameters
    ----------
    model : keras.Model
        A classifier whose outputs are class probabilities.
    X : ndarray
        The inputs.
    y : ndarray of int
        The labels.

    Returns
    -------
    float
        The fraction of samples whose most probable class is their label.
    """
    return evaluate(model, X, y)[0]


def evaluate(model: keras.Model, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Compute the accuracy and mean cross-entropy ``−log p(y | x)`` of ``model`` on ``(X, y)``.

    Parameters
    ----------
    model : keras.Model
        A classifier whose outputs are class probabilities.
    X : ndarray
        The inputs.
    y : ndarray of int
        The labels.

    Returns
    -------
    accuracy : float
        The fraction of samples whose most probable class is their label.
    loss : float
        The mean cross-entropy.
    """
    # a direct call: no compiled prediction function for a network evaluated once or twice
    prob = np.asarray(model(X, training=False), dtype=np.float64)
    loss = -np.mean(np.log(np.maximum(prob[np.arange(len(y)), y], 1e-300)))
    return float(np.mean(np.argmax(prob, axis=1) == y)), float(loss)


def _base(data, n_classes, p, seed):
    """The trained base network (cached for the runs that follow)."""
    (Xtr, ytr), _, (Xte, yte) = data
    h = hashlib.sha1(np.ascontiguousarray(Xtr).tobytes())
    h.update(np.ascontiguousarray(ytr).tobytes())
    key = (h.hexdigest(), Xtr.shape, seed, p["epochs"], p["lr"], p["batch_size"])
    import keras

    keras.utils.set_random_seed(seed)  # the initial weights are drawn when the model is built
    model = lenet(Xtr.shape[1:], n_classes)
    if _BASE.get("key") != key:
        t0 = time.perf_counter()
        _compile(model, p["lr"])
        _train(model, data, None, p["lr"], p["epochs"], p["batch_size"], seed)
        _BASE.clear()
        _BASE.update(
            key=key,
            weights=[np.array(w.value, copy=True) for w in model.weights],
            scores=evaluate(model, Xte, yte),
            time=time.perf_counter() - t0,
        )
    else:
        for var, w in zip(model.weights, _BASE["weights"]):
            var.assign(w)
    return model, _BASE["scores"], _BASE["time"]


def _finetune(trainer, start, data, p, seed):
    """Fine-tune the compiled ``trainer`` from the variables' values ``start`` (step 4);
    returns the learning rate used."""
    epochs = p["epochs"] if p["finetune_epochs"] is None else p["finetune_epochs"]
    _, (Xva, yva), _ = data
    lr = p["lr"]
    if p["select_lr"]:
        scores = []
        for candidate in LR_GRID:
            _train(trainer, data, start, candidate, p["select_epochs"], p["batch_size"], seed)
            scores.append(accuracy(trainer, Xva, yva))
        lr = LR_GRID[int(np.argmax(scores))]  # ties: the largest rate
    _train(trainer, data, start, lr, epochs, p["batch_size"], seed)
    return lr


def run_compress(ctx: TaskContext) -> list[dict[str, Any]]:
    """Run the protocol of the module notes for the context's data, seed and parameters.

    Parameters
    ----------
    ctx : sparsekit.run.tasks.TaskContext
        ``data`` with ``X`` (square grey images, flat or not) and ``y`` (integer labels);
        ``params``: :data:`PARAMS` (other keys, those of the ``nn`` task's other experiments,
        are ignored); ``seed``.

    Returns
    -------
    list of dict
        The rows of the base network and of each method (see the module notes).

    Raises
    ------
    ValueError
        Missing ``X`` or ``y``, ``X`` not square images, or invalid parameters
        (``n_factors < 1``, ``sparsity < 1``, unknown ``method`` or ``factorizer``).
    """
    from ..nn.compression import compress, count_parameters

    X, y = ctx.need("X", "y")
    p = {**PARAMS, **{k: v for k, v in ctx.params.items() if k in PARAMS}}
    X = images(X)
    y = np.asarray(y)
    classes, y = np.unique(y, return_inverse=True)
    tr, va, te = split(
        len(X), np.random.default_rng(ctx.seed), p["test_fraction"], p["val_fraction"]
    )
    data = ((X[tr], y[tr]), (X[va], y[va]), (X[te], y[te]))
    Xte, yte = data[2]
    Q, K = p["n_factors"], p["sparsity"]
    base, (base_acc, base_loss), base_time = _base(data, len(classes), p, ctx.seed)
    common = {"n_factors": Q, "sparsity": K}
    rows = []
    methods = METHODS if p["method"] == "all" else (check_option(p["method"], "method", METHODS),)
    # the variants of one (Q, K) have the same layers and variable shapes (the supports are
    # variables): the first one's model is compiled once and trains every variant's values
    trainer = None
    for method in methods:
        t0 = time.perf_counter()
        compressed, report = compress(
            base,
            Q,
            K,
            init=method,
            factorizer=p["factorizer"],
            n_iter=p["palm_iter"],
            random_state=ctx.seed,
        )
        replaced = [r for r in report if r.replaced]
        before = accuracy(compressed, Xte, yte)
        start = [np.array(w.value, copy=True) for w in compressed.weights]
        if trainer is None:
            trainer = compressed
            _compile(trainer, p["lr"])
        lr = _finetune(trainer, start, data, p, ctx.seed)
        errors = [r.relative_error for r in replaced]
        acc, loss = evaluate(trainer, Xte, yte)
        rows.append(
            {
                "method": method,
                **common,
                "accuracy": acc,
                "loss": loss,
                "accuracy_before": before,
                "params": count_parameters(compressed),
                "params_compressed": sum(r.params_after for r in replaced),
                "n_replaced": len(replaced),
                "mean_error": float(np.mean(errors)) if errors else 0.0,
                "max_error": float(np.max(errors)) if errors else 0.0,
                "lr": lr,
                "fit_time": time.perf_counter() - t0,
            }
        )
    base_compressed = sum(r.params_before for r in replaced)
    rows.insert(
        0,
        {
            "method": "base",
            **common,
            "accuracy": base_acc,
            "loss": base_loss,
            "accuracy_before": base_acc,
            "params": count_parameters(base),
            "params_compressed": base_compressed,
            "n_replaced": 0,
            "mean_error": 0.0,
            "max_error": 0.0,
            "lr": p["lr"],
            "fit_time": base_time,
        },
    )
    return rows


#: the experiment, as an entry of :data:`sparsekit.experiments.nn.EXPERIMENTS`
COMPRESS = Task(
    "compress",
    run_compress,
    PARAMS,
    summary="a LeNet-style network compressed by products of sparse factors, "
    "Palm4MSA init vs re-init vs random supports, after fine-tuning "
    "(Giffon 2020, Table 3.6)",
)

__all__ = [
    "COMPRESS",
    "run_compress",
    "lenet",
    "images",
    "split",
    "accuracy",
    "evaluate",
    "PARAMS",
    "LR_GRID",
    "METHODS",
]
