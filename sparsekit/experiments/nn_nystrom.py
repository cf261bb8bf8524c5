"""The adaptive Nyström layer's experiments (Giffon 2020, PhD thesis, §2.3; Giffon et al.,
IJCNN 2019): accuracy against learned parameters (Fig. 2.2) and few-shot learning (Table 2.2).

Both run as experiments of the task ``nn`` (:mod:`sparsekit.experiments.nn`):
``experiment = "parameters"`` and ``experiment = "few-shot"``. Keras is imported when a run
starts, never at import.

Shared protocol for one data set ``(X, y)`` of images (flattened rows, channels last) and the
run's seed ``s``:

1. split: a stratified split from ``s`` puts ``test_fraction`` of the points in the test set;
2. pretraining: a small convolutional network (two 3 x 3 convolutions of 16 and 32 ReLU
   filters, each followed by 2 x 2 max-pooling, then a softmax layer) is trained on the whole
   training set (``pretrain_epochs``, Adam, learning rate ``learning_rate``); its convolutional
   part is then frozen, as in the thesis (``pretrain_epochs = 0``: random convolutions), and
   its flattened output (ReLU features, non-negative, as chi2 needs) is the representation every
   top model sees. The features are computed once:
   with a frozen extractor, ``NystromLayer(feature_extractor=...)`` computes the same kernel
   vectors (``tests/nn``), only more slowly;
3. top models on the frozen features, each ending in a softmax layer over the classes, trained
   with cross-entropy and Adam (``epochs``, ``batch_size``, ``learning_rate``):

   - ``dense``: one hidden ReLU layer of ``width`` units;
   - ``nystrom``: :class:`sparsekit.nn.NystromLayer` with ``L`` landmarks drawn by stratified
     uniform sampling (class-balanced) from the labelled training points, W initialised to
     K_LL^{-1/2}, trained (``adaptive``) or frozen (non-adaptive);

   kernels by registry name; ``"rbf"`` takes the thesis' bandwidth, gamma = 1 / mean
   ||x - x'||² over the pairs of training features (the code released with Giffon et al.,
   IJCNN 2019), every other name its registry defaults. The thesis' "Chi2" kernel (Eq. 1.9)
   is ``"additive-chi2"``;
4. accuracy on the test set and the number of learned parameters of the top model (the
   trainable weights: W for the adaptive layer, the hidden layer for dense, and the softmax
   layer for both; the frozen convolutions are not counted, as in Fig. 2.2).

Experiment ``parameters`` (Fig. 2.2): every width of ``widths`` and, for each kernel of
``kernels``, each ``adaptive`` flag and each L of ``n_landmarks``, trained ``n_repeats`` times
(landmarks and initialisations drawn from ``s`` and the repeat) on the whole training set.
Rows: ``label`` (``"dense"`` or ``"nystrom <kernel> adaptive|fixed"``), ``model``, ``kernel``,
``adaptive``, ``size`` (width or L), ``repeat``, ``n_params``,
``accuracy``.

Experiment ``few-shot`` (Table 2.2): for each ``n_per_class`` and each of ``n_repeats``
replicates, a labelled set of ``n_per_class`` training points per class is drawn; the dense
model (``width``) and the adaptive Nyström layer of each kernel (L = ``n_landmarks``, at most
the labelled points) are trained on it alone; the RBF bandwidth comes from the features of the
whole training set (no labels needed). Rows: ``label``, ``model``, ``kernel``, ``n_per_class``,
``repeat``, ``n_params``, ``accuracy``.

Differences from the thesis (decisions): MNIST/SVHN/CIFAR cannot be downloaded here, so the
data are scikit-learn's digits (8 x 8 grey levels, 1,797 points) and its sample photographs cut
into 16 x 16 colour patches (the data source ``sample-image-patches``); the network is
a LeNet-sized convolutional part, not VGG19; the learning rate is 1e-3 (the thesis' 1e-4 over 50
epochs of 40,000+ points makes far more steps than 50 epochs of about 1,300 points); there is
no validation set and no Deep Fried baseline.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..run.tasks import Task, TaskContext

#: parameters both experiments share
COMMON = {
    "test_fraction": 0.25,
    "pretrain_epochs": 20,
    "learning_rate": 1e-3,
    "batch_size": 64,
    "kernels": ["linear", "rbf", "additive-chi2"],
    "image_shape": None,
}

#: the parameters of experiment ``parameters`` and their defaults (Fig. 2.2's grid)
PARAMETERS_PARAMS = {
    **COMMON,
    "epochs": 50,
    "n_repeats": 10,
    "widths": [2, 4, 8, 16, 32, 64, 128, 1024],
    "n_landmarks": [2, 4, 8, 16, 32, 64, 128],
    "adaptive": [True, False],
}

#: the parameters of experiment ``few-shot`` and their defaults (Table 2.2's settings)
FEW_SHOT_PARAMS = {
    **COMMON,
    "epochs": 200,
    "n_repeats": 30,
    "n_per_class": [5, 20],
    "width": 64,
    "n_landmarks": 32,
}


def image_shape(n_features, given=None) -> tuple:
    """``(side, side, channels)`` of flattened square images: ``given``, else 1 channel when
    ``n_features`` is a square and 3 when ``n_features / 3`` is one (never both)."""
    if given is not None:
        shape = tuple(int(s) for s in given)
        if len(shape) != 3 or int(np.prod(shape)) != n_features:
            raise ValueError(
                f"image_shape={list(given)} must be [height, width, channels] with "
                f"height · width · channels = {n_features} (the data's features)"
            )
        return shape
    for channels in (1, 3):
        side = int(round((n_features / channels) ** 0.5))
        if side * side * channels == n_features:
            return (side, side, channels)
    raise ValueError(
        f"cannot read {n_features} features as square images with 1 or 3 "
        "channels; give image_shape = [height, width, channels]"
    )


def stratified_split(y, test_fraction, rng):
    """``(train, test)`` indices, ``test_fraction`` of each class (at least one) in test."""
    train, test = [], []
    for c in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == c))
        n_test = max(1, int(round(test_fraction * len(rows))))
        test.append(rows[:n_test])
        train.append(rows[n_test:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def rbf_gamma(F) -> float:
    """gamma = 1 / mean_{i,j} ||f_i - f_j||² (the authors' bandwidth; the pairs include i = j),
    exactly: the mean is 2 (mean ||f||² - ||mean f||²)."""
    m = F.mean(axis=0)
    mean_sq = 2.0 * (np.einsum("ij,ij->", F, F) / len(F) - m @ m)
    if mean_sq <= 0:
        raise ValueError("the training features are all equal: no RBF bandwidth")
    return 1.0 / mean_sq


def make_kernel(name, F_train):
    """The sparsekit kernel ``name``; ``"rbf"`` with the thesis' bandwidth on ``F_train``."""
    from ..components import get_kernel

    if name == "rbf":
        return get_kernel("rbf", gamma=rbf_gamma(F_train))
    return get_kernel(name)


def _keras():
    """Keras, imported after :mod:`sparsekit.nn` (which chooses its backend)."""
    import importlib

    from .. import nn  # noqa: F401

    return importlib.import_module("keras")


def _seed_keras(seed):
    keras = _keras()
    keras.utils.set_random_seed(int(seed) % 2**31)


def _compile(model, learning_rate):
    keras = _keras()

    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def pretrain_features(X_train, y_train, X_test, shape, n_classes, p, seed):
    """Train the convolutional network on the training set (step 2); return the frozen
    features of the training and test points (float64)."""
    keras = _keras()
    layers = keras.layers
    _seed_keras(seed)
    conv = keras.Sequential(
        [
            keras.Input(shape),
            layers.Conv2D(16, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Conv2D(32, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Flatten(),
        ]
    )
    if p["pretrain_epochs"]:
        net = _compile(keras.Sequential([conv, layers.Dense(n_classes)]), p["learning_rate"])
        images = X_train.reshape((-1, *shape)).astype(np.float32)
        net.fit(images, y_train, epochs=p["pretrain_epochs"], batch_size=p["batch_size"], verbose=0)
    conv.trainable = False

    def feats(X):
        return np.asarray(
            keras.ops.convert_to_numpy(
                conv(X.reshape((-1, *shape)).astype(np.float32), training=False)
            ),
            dtype=np.float64,
        )

    return feats(X_train), feats(X_test)


def _fresh_model(
    kind, F_train, y_train, n_classes, seed, width, kernel, n_landmarks, adaptive, F_bandwidth
):
    keras = _keras()
    from ..nn import NystromLayer

    _seed_keras(seed)
    if kind == "dense":
        hidden = keras.layers.Dense(int(width), activation="relu")
    else:
        hidden = NystromLayer.from_data(
            F_train,
            int(n_landmarks),
            kernel=make_kernel(kernel, F_train if F_bandwidth is None else F_bandwidth),
            y=y_train,
            adaptive=bool(adaptive),
            random_state=seed,
        )
    model = keras.Sequential(
        [keras.Input((F_train.shape[1],)), hidden, keras.layers.Dense(n_classes)]
    )
    key = (
        kind,
        F_train.shape[1],
        n_classes,
        int(width)
        if kind == "dense"
        else repr((hidden.get_config()["kernel"], int(n_landmarks), bool(adaptive))),
    )
    return model, key


def _reset_optimizer(model):
    """The optimizer's state back to its start (step count, moments); the rate stays."""
    for v in model.optimizer.variables:
        if not v.path.endswith("learning_rate"):
            v.assign(np.zeros(v.shape, dtype=v.dtype))


def train_top(
    kind,
    F_train,
    y_train,
    F_test,
    y_test,
    n_classes,
    p,
    seed,
    *,
    width=None,
    kernel=None,
    n_landmarks=None,
    adaptive=True,
    F_bandwidth=None,
    cache=None,
):
    """Train one top model (step 3) and return ``(n_params, accuracy)`` (step 4).

    ``epochs`` passes over the data run as one Keras epoch over the data repeated ``epochs``
    times (shuffled together): Keras' per-epoch overhead would otherwise dominate on these
    small sets. ``cache`` (a dict) keeps one compiled model per architecture: a later model of
    the same architecture takes the fresh weights (new landmarks, W = K_LL^{-1/2}, new
    initialisations) and a reset optimizer, without compiling its training step again.
    """
    model, key = _fresh_model(
        kind, F_train, y_train, n_classes, seed, width, kernel, n_landmarks, adaptive, F_bandwidth
    )
    if cache is not None and key in cache:
        cached = cache[key]
        cached.set_weights(model.get_weights())
        _reset_optimizer(cached)
        model = cached
    else:
        _compile(model, p["learning_rate"])
        if cache is not None:
            cache[key] = model
    reps = int(p["epochs"])
    model.fit(
        np.tile(F_train.astype(np.float32), (reps, 1)),
        np.tile(y_train, reps),
        epochs=1,
        batch_size=p["batch_size"],
        verbose=0,
    )
    logits = _keras().ops.convert_to_numpy(model(F_test.astype(np.float32)))
    n_params = int(sum(np.prod(w.shape) for w in model.trainable_weights))
    return n_params, float(np.mean(np.argmax(logits, axis=1) == y_test))


def _prepare(ctx):
    """Split, pretrain, features (steps 1-2): ``(F_train, y_train, F_test, y_test,
    n_classes)`` with labels encoded as 0..C-1."""
    X, y = ctx.need("X", "y")
    X = np.asarray(X, dtype=np.float64)
    classes, y = np.unique(np.asarray(y), return_inverse=True)
    p = ctx.params
    shape = image_shape(X.shape[1], p["image_shape"])
    rng = np.random.default_rng(ctx.seed)
    tr, te = stratified_split(y, p["test_fraction"], rng)
    F_train, F_test = pretrain_features(X[tr], y[tr], X[te], shape, len(classes), p, ctx.seed)
    return F_train, y[tr], F_test, y[te], len(classes)


def _repeat_seed(seed, repeat):
    return int(np.random.SeedSequence([int(seed), int(repeat)]).generate_state(1)[0])


def label(kernel, adaptive) -> str:
    """The row's ``label``: ``"dense"`` or e.g. ``"nystrom rbf adaptive"``."""
    return f"nystrom {kernel} {'adaptive' if adaptive else 'fixed'}"


def run_parameters(ctx: TaskContext) -> list[dict[str, Any]]:
    """Run the experiment ``parameters`` (Fig. 2.2): accuracy against learned parameters.

    Parameters
    ----------
    ctx : TaskContext
        The run's data (``X``, ``y``), parameters and seed.

    Returns
    -------
    list of dict
        A row per top model and repeat (accuracy, number of learned parameters).
    """
    F_train, y_train, F_test, y_test, C = _prepare(ctx)
    p = ctx.params
    rows: list = []
    cache: dict = {}
    for r in range(int(p["n_repeats"])):
        seed = _repeat_seed(ctx.seed, r)
        for w in p["widths"]:
            n_params, acc = train_top(
                "dense", F_train, y_train, F_test, y_test, C, p, seed, width=w, cache=cache
            )
            rows.append(
                {
                    "label": "dense",
                    "model": "dense",
                    "kernel": "",
                    "adaptive": True,
                    "size": int(w),
                    "repeat": r,
                    "n_params": n_params,
                    "accuracy": acc,
                }
            )
        for kernel in p["kernels"]:
            for adaptive in p["adaptive"]:
                for L in p["n_landmarks"]:
                    n_params, acc = train_top(
                        "nystrom",
                        F_train,
                        y_train,
                        F_test,
                        y_test,
                        C,
                        p,
                        seed,
                        kernel=kernel,
                        n_landmarks=L,
                        adaptive=adaptive,
                        cache=cache,
                    )
                    rows.append(
                        {
                            "label": label(kernel, adaptive),
                            "model": "nystrom",
                            "kernel": kernel,
                            "adaptive": bool(adaptive),
                            "size": int(L),
                            "repeat": r,
                            "n_params": n_params,
                            "accuracy": acc,
                        }
                    )
    return rows


def labelled_subset(y, n_per_class, rng) -> np.ndarray:
    """``n_per_class`` indices of each class (all of a smaller class), sorted."""
    return np.sort(
        np.concatenate(
            [
                rng.choice(
                    np.flatnonzero(y == c), min(n_per_class, int(np.sum(y == c))), replace=False
                )
                for c in np.unique(y)
            ]
        )
    )


def run_few_shot(ctx: TaskContext) -> list[dict[str, Any]]:
    """Run the experiment ``few-shot`` (Table 2.2): accuracy with few labelled examples.

    Parameters
    ----------
    ctx : TaskContext
        The run's data (``X``, ``y``), parameters and seed.

    Returns
    -------
    list of dict
        A row per model, labelled-set size and replicate.
    """
    F_train, y_train, F_test, y_test, C = _prepare(ctx)
    p = ctx.params
    rows: list = []
    cache: dict = {}
    for k in p["n_per_class"]:
        for r in range(int(p["n_repeats"])):
            seed = _repeat_seed(ctx.seed, r)
            idx = labelled_subset(y_train, int(k), np.random.default_rng(seed))
            Fl, yl = F_train[idx], y_train[idx]
            n_params, acc = train_top(
                "dense", Fl, yl, F_test, y_test, C, p, seed, width=p["width"], cache=cache
            )
            rows.append(
                {
                    "label": "dense",
                    "model": "dense",
                    "kernel": "",
                    "n_per_class": int(k),
                    "repeat": r,
                    "n_params": n_params,
                    "accuracy": acc,
                }
            )
            L = min(int(p["n_landmarks"]), len(idx))
            for kernel in p["kernels"]:
                # the bandwidth from the whole (unlabelled) training set's features
                n_params, acc = train_top(
                    "nystrom",
                    Fl,
                    yl,
                    F_test,
                    y_test,
                    C,
                    p,
                    seed,
                    kernel=kernel,
                    n_landmarks=L,
                    adaptive=True,
                    F_bandwidth=F_train,
                    cache=cache,
                )
                rows.append(
                    {
                        "label": label(kernel, True),
                        "model": "nystrom",
                        "kernel": kernel,
                        "n_per_class": int(k),
                        "repeat": r,
                        "n_params": n_params,
                        "accuracy": acc,
                    }
                )
    return rows


#: the two experiments, as entries of :data:`sparsekit.experiments.nn.EXPERIMENTS`
PARAMETERS = Task(
    "parameters",
    run_parameters,
    PARAMETERS_PARAMS,
    summary="accuracy against learned parameters: dense vs (adaptive) Nyström "
    "(Giffon 2020, Fig. 2.2)",
)
FEW_SHOT = Task(
    "few-shot",
    run_few_shot,
    FEW_SHOT_PARAMS,
    summary="few-shot accuracy with 5 and 20 labelled points per class (Giffon 2020, Table 2.2)",
)

__all__ = ["run_parameters", "run_few_shot"]
