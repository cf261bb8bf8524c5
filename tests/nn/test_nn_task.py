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
