"""The separately installed plugin in plugins/ is found through its entry point; the core
works without it."""
import os
from importlib import metadata

import numpy as np
import pytest
from sklearn.metrics.pairwise import cosine_similarity, sigmoid_kernel

import sparsekit
from sparsekit import Registry
from sparsekit.registry import UnknownComponentError

PLUGIN_DIST = "sparsekit-extra-kernels"


def _installed():
    try:
        metadata.distribution(PLUGIN_DIST)
        return True
    except metadata.PackageNotFoundError:
        return False


needs_plugin = pytest.mark.skipif(
    not _installed() and not os.environ.get("SPARSEKIT_REQUIRE_PLUGINS"),
    reason=f"{PLUGIN_DIST} not installed (pip install ./plugins/{PLUGIN_DIST})",
)


@needs_plugin
def test_plugin_listed_with_its_entry_point_name():
    infos = {i.name: i for i in Registry().list("kernel")}
    assert infos["cosine"].plugin == "extra-kernels"
    assert infos["sigmoid"].aliases == ("tanh",)


@needs_plugin
def test_plugin_kernels_usable_by_name_and_match_scikit_learn(rng):
    X = rng.normal(size=(20, 4))
    X[3] = 0.0
    Y = rng.normal(size=(7, 4))
    np.testing.assert_allclose(sparsekit.get_kernel("Cosine")(X, Y), cosine_similarity(X, Y), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sparsekit.get_kernel("tanh", gamma=0.3)(X), sigmoid_kernel(X, gamma=0.3), rtol=1e-12)
    k = sparsekit.get_kernel("cosine")
    np.testing.assert_allclose(k.diag(X), np.diag(k(X)), atol=1e-15)


@needs_plugin
def test_cli_list_shows_the_plugin(capsys):
    from sparsekit.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if " cosine " in f" {l} ")
    assert "extra-kernels" in line and "kernel" in line


def test_core_works_without_entry_point_plugins(monkeypatch, rng):
    monkeypatch.setattr("sparsekit.registry._sparsekit_entry_points", lambda: [])
    reg = Registry()
    assert "cosine" not in reg.names("kernel")
    with pytest.raises(UnknownComponentError, match="unknown kernel 'cosine'"):
        reg.get("kernel", "cosine")
    X = rng.random((5, 3))
    assert reg.get("kernel", "rbf")(X).shape == (5, 5)


@needs_plugin
def test_plugin_kernel_parameters_are_validated():
    with pytest.raises(ValueError, match="gamma must be > 0"):
        sparsekit.get_kernel("sigmoid", gamma=-1.0)
    with pytest.raises(ValueError, match="unknown backend"):
        sparsekit.get_kernel("cosine", backend="gpu")
