"""The task ``nn`` and the adaptive Nyström experiments (:mod:`sparsekit.experiments.nn`,
:mod:`sparsekit.experiments.nn_nystrom`), at tiny sizes.

Oracles: closed-form parameter counts, scikit-learn's pairwise distances, the photographs of
``load_sample_images`` read directly.
"""

import numpy as np
import pytest
from sklearn.datasets import load_sample_images
from sklearn.metrics import pairwise

from sparsekit.experiments import nn, nn_nystrom
from sparsekit.run import data as sources, run_task
from sparsekit.run.tasks import Task, TaskContext, get_task

TINY = {"n_repeats": 1, "pretrain_epochs": 0, "epochs": 1}


@pytest.fixture(scope="module")
def digits():
    return sources.SOURCES["digits"](n_samples=120, seed=0)


def test_nn_is_a_registered_task_with_every_experiments_parameters():
    task = get_task("nn")
    assert task.params["experiment"] == "parameters"
    for entry in nn.EXPERIMENTS.values():
        assert set(entry.params) <= set(task.params)


def test_adding_an_entry_is_all_an_experiment_needs(monkeypatch):
    seen = {}

    def run(ctx):
        seen.update(ctx.params)
        return [{"value": ctx.params["alpha"]}]

    monkeypatch.setitem(nn.EXPERIMENTS, "toy", Task("toy", run, {"alpha": 1.0, "beta": "b"}))
    assert {"alpha", "beta"} <= set(nn._params())
    params = {**nn._params(), "experiment": "TOY", "alpha": 2.0}
    ctx = TaskContext(data={}, components={}, params=params, seed=3)
    assert nn.run_nn(ctx) == [{"value": 2.0}]
    assert seen == {"alpha": 2.0, "beta": "b"}  # the entry's defaults, then what was set


def test_unknown_experiment_and_foreign_parameter_are_refused(digits):
    with pytest.raises(ValueError, match="few-shot"):  # the closest name
        run_task("nn", {"experiment": "few-shoot"}, digits)
    with pytest.raises(ValueError, match="has no parameter 'widths'"):
        run_task("nn", {"experiment": "few-shot", "widths": [2]}, digits)
    with pytest.raises(ValueError, match="image_shape"):
        run_task("nn", {"experiment": "few-shot", "image_shape": [4, 4, 3]}, digits)


def test_parameters_experiment_rows_and_parameter_counts(digits):
    rows = run_task(
        "nn",
        {
            **TINY,
            "experiment": "parameters",
            "widths": [3],
            "n_landmarks": [4],
            "kernels": ["rbf", "additive-chi2"],
            "adaptive": [True, False],
        },
        digits,
        seed=0,
    )
    C, D = 10, 2 * 2 * 32  # 8x8 images pooled twice: 2x2 maps of 32 filters
    by = {r["label"]: r for r in rows}
    assert set(by) == {
        "dense",
        "nystrom rbf adaptive",
        "nystrom rbf fixed",
        "nystrom additive-chi2 adaptive",
        "nystrom additive-chi2 fixed",
    }
    assert by["dense"]["n_params"] == D * 3 + 3 + 3 * C + C
    assert by["nystrom rbf adaptive"]["n_params"] == 4 * 4 + 4 * C + C
    assert by["nystrom rbf fixed"]["n_params"] == 4 * C + C
    assert all(0.0 <= r["accuracy"] <= 1.0 and r["repeat"] == 0 for r in rows)


def test_few_shot_experiment_rows(digits):
    rows = run_task(
        "nn",
        {
            **TINY,
            "experiment": "few-shot",
            "n_per_class": [2],
            "n_landmarks": 50,
            "width": 2,
            "kernels": ["linear"],
        },
        digits,
    )
    assert [r["label"] for r in rows] == ["dense", "nystrom linear adaptive"]
    # L is capped at the labelled points: 2 per class, 10 classes
    assert rows[1]["n_params"] == 20 * 20 + 20 * 10 + 10


def test_protocol_helpers():
    assert nn_nystrom.image_shape(64) == (8, 8, 1)
    assert nn_nystrom.image_shape(768) == (16, 16, 3)
    with pytest.raises(ValueError, match="image_shape"):
        nn_nystrom.image_shape(30)
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], [40, 20, 8])
    tr, te = nn_nystrom.stratified_split(y, 0.25, rng)
    assert list(np.bincount(y[te])) == [10, 5, 2] and len(np.intersect1d(tr, te)) == 0
    assert len(tr) + len(te) == len(y)
    F = rng.random((30, 4))
    sq = pairwise.euclidean_distances(F, squared=True)
    assert nn_nystrom.rbf_gamma(F) == pytest.approx(1 / sq.mean(), rel=1e-12)
    idx = nn_nystrom.labelled_subset(y, 10, rng)
    assert list(np.bincount(y[idx])) == [10, 10, 8]


def test_sample_image_patches_are_the_photographs_regions():
    d = sources.SOURCES["sample-image-patches"]()
    assert d["X"].shape == (2080, 768) and list(np.bincount(d["y"])) == [260] * 8
    china, flower = load_sample_images().images
    np.testing.assert_array_equal(d["X"][0].reshape(16, 16, 3), china[:16, :16] / 255.0)
    # the first patch of class 5: flower.jpg, top-right region
    h, w = flower.shape[0] // 2, flower.shape[1] // 2
    first = np.flatnonzero(d["y"] == 5)[0]
    np.testing.assert_array_equal(d["X"][first].reshape(16, 16, 3), flower[:16, w : w + 16] / 255.0)
    assert h // 16 * (w // 16) == 260


def _features(n_per_class=12, n_classes=3, d=6, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), n_per_class)
    F = rng.random((len(y), d)) + y[:, None]  # non-negative, separable
    return F, y


@pytest.mark.parametrize("kind", ["dense", "nystrom"])
def test_train_top_steps_rate_and_accuracy_from_keras(kind):
    """Oracles: Adam's step count is ceil(epochs · n / batch_size) (one pass over the data
    repeated ``epochs`` times); the optimizer's rate is ``learning_rate``; the accuracy is
    NumPy's argmax of the trained model's own outputs on the test features, and Keras'
    ``model.evaluate`` on the same model."""
    F, y = _features()
    Ft, yt = F[::3], y[::3]
    p = {"epochs": 3, "batch_size": 5, "learning_rate": 0.02}
    cache = {}
    n_params, acc = nn_nystrom.train_top(
        kind, F, y, Ft, yt, 3, p, 7, width=4, kernel="rbf", n_landmarks=6, cache=cache
    )
    (model,) = cache.values()
    assert int(model.optimizer.iterations) == int(np.ceil(3 * len(F) / 5))
    assert float(model.optimizer.learning_rate) == pytest.approx(0.02)
    logits = np.asarray(model.predict(Ft.astype(np.float32), verbose=0))
    assert acc == pytest.approx(np.mean(logits.argmax(axis=1) == yt))
    model.compile(loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    assert acc == pytest.approx(model.evaluate(Ft, yt, verbose=0, return_dict=True)["accuracy"])
    assert n_params == sum(int(np.prod(w.shape)) for w in model.trainable_weights)


def test_train_top_landmarks_follow_the_seed():
    """Invariance: the same seed draws the same landmarks, another seed another draw."""
    F, y = _features()

    def landmarks(seed):
        cache = {}
        nn_nystrom.train_top(
            "nystrom",
            F,
            y,
            F,
            y,
            3,
            {"epochs": 1, "batch_size": 8, "learning_rate": 1e-3},
            seed,
            kernel="linear",
            n_landmarks=6,
            adaptive=False,
            cache=cache,
        )
        (model,) = cache.values()
        return np.asarray(model.layers[0].get_weights()[0])

    a, b = landmarks(1), landmarks(2)
    np.testing.assert_allclose(landmarks(1), a)
    assert not np.allclose(a, b)


def _spy_runs(monkeypatch, experiment, params, seed=0, n=90):
    """Run an experiment with ``train_top`` recorded (no top-model training) and Keras'
    ``fit`` recorded (the pretraining's epochs and batches)."""
    import keras

    calls, fits = [], []

    def fake_train_top(kind, F_train, y_train, F_test, y_test, C, p, s, **kw):
        calls.append({"kind": kind, "F": F_train, "y": y_train, "Ft": F_test, "seed": s, **kw})
        return 0, 0.5

    real_fit = keras.Model.fit

    def fit(self, *args, **kwargs):
        fits.append(kwargs)
        return real_fit(self, *args, **kwargs)

    monkeypatch.setattr(nn_nystrom, "train_top", fake_train_top)
    monkeypatch.setattr(keras.Model, "fit", fit)
    data = sources.SOURCES["digits"](n_samples=n, seed=0)
    rows = run_task("nn", {"experiment": experiment, **params}, data, seed=seed)
    return rows, calls, fits, data


def test_few_shot_protocol_draws_per_replicate_and_bandwidth_from_all_features(monkeypatch):
    """Oracles: the stratified split's sizes by hand (round(test_fraction · n_c) per class);
    the thesis' protocol: one labelled draw and one seed per replicate, shared by the dense
    model and the Nyström layers of that replicate; the RBF bandwidth from the whole
    training set (gamma recomputed with scikit-learn's pairwise distances); the same seed
    gives the same draws; the pretraining runs ``pretrain_epochs`` epochs of ``batch_size``."""
    params = {
        "n_repeats": 2,
        "pretrain_epochs": 2,
        "batch_size": 16,
        "epochs": 1,
        "test_fraction": 0.4,
        "n_per_class": [2],
        "n_landmarks": 5,
        "kernels": ["rbf"],
    }
    seen = {}
    real_make_kernel = nn_nystrom.make_kernel

    def make_kernel(name, F):
        seen["F"] = F
        return real_make_kernel(name, F)

    drawn = []
    real_subset = nn_nystrom.labelled_subset

    def labelled_subset(y, k, rng):
        drawn.append(real_subset(y, k, rng))
        return drawn[-1]

    monkeypatch.setattr(nn_nystrom, "make_kernel", make_kernel)
    monkeypatch.setattr(nn_nystrom, "labelled_subset", labelled_subset)
    rows, calls, fits, data = _spy_runs(monkeypatch, "few-shot", params)
    assert [(f["epochs"], f["batch_size"]) for f in fits] == [(2, 16)]
    n_test = sum(int(round(0.4 * c)) for c in np.bincount(data["y"]))
    assert all(len(c["Ft"]) == n_test for c in calls)
    dense0, rbf0, dense1, rbf1 = calls
    assert dense0["seed"] == rbf0["seed"] != dense1["seed"] == rbf1["seed"]
    np.testing.assert_array_equal(dense0["F"], rbf0["F"])
    assert not np.array_equal(*drawn)  # another replicate, another draw
    assert rbf0["F_bandwidth"].shape[0] == len(data["y"]) - n_test
    assert [r["repeat"] for r in rows] == [0, 0, 1, 1]
    # the draws do not depend on the pretraining: none here, for speed
    _, again, _, _ = _spy_runs(monkeypatch, "few-shot", {**params, "pretrain_epochs": 0})
    assert [c["seed"] for c in again] == [c["seed"] for c in calls]
    np.testing.assert_array_equal(drawn[2], drawn[0])
    np.testing.assert_array_equal(drawn[3], drawn[1])


def test_parameters_protocol_seeds_and_flags(monkeypatch):
    """Oracles: one seed per repeat (another repeat, another seed; the same run seed, the
    same seeds), each row's flags are those its model was trained with, and the split's
    test size by hand."""
    params = {
        "n_repeats": 2,
        "pretrain_epochs": 0,
        "widths": [3],
        "n_landmarks": [4],
        "kernels": ["linear"],
        "adaptive": [True, False],
    }
    rows, calls, _, data = _spy_runs(monkeypatch, "parameters", params, seed=5)
    assert [(c["kind"], c.get("adaptive"), c["seed"]) for c in calls] == [
        ("dense", None, calls[0]["seed"]),
        ("nystrom", True, calls[0]["seed"]),
        ("nystrom", False, calls[0]["seed"]),
        ("dense", None, calls[3]["seed"]),
        ("nystrom", True, calls[3]["seed"]),
        ("nystrom", False, calls[3]["seed"]),
    ]
    assert calls[0]["seed"] != calls[3]["seed"]
    assert [(r["label"], r["adaptive"], r["repeat"]) for r in rows] == [
        ("dense", True, 0),
        ("nystrom linear adaptive", True, 0),
        ("nystrom linear fixed", False, 0),
        ("dense", True, 1),
        ("nystrom linear adaptive", True, 1),
        ("nystrom linear fixed", False, 1),
    ]
    n_test = sum(int(round(0.25 * c)) for c in np.bincount(data["y"]))
    assert len(calls[0]["Ft"]) == n_test and len(calls[0]["F"]) == len(data["y"]) - n_test
    _, again, _, _ = _spy_runs(monkeypatch, "parameters", params, seed=5)
    assert [c["seed"] for c in again] == [c["seed"] for c in calls]
