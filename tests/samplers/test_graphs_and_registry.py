"""Samplers on graph kernels (through the kernel protocol only), and their registrations."""

import numpy as np
import pytest

import sparsekit
from sparsekit import Registry
from sparsekit.samplers.rls import ExactRLSSampler

NAMES = {"uniform", "diagonal", "rls", "two-pass-rls", "dac-rls", "recursive-rls", "greedy-trace"}
GRAPH_CAPABLE = [
    ("uniform", {}),
    ("diagonal", {}),
    ("rls", {"lam": 0.5}),
    ("two-pass-rls", {"lam": 0.5}),
    ("dac-rls", {"lam": 0.5}),
    ("recursive-rls", {}),
    ("recursive-rls", {"lam": 0.5}),
    ("bless", {"lam": 0.5}),
    ("greedy-trace", {}),
]


def test_every_sampler_is_registered_by_name_with_its_aliases():
    reg = Registry(entry_points=False)
    infos = {info.name: info for info in reg.list("sampler")}
    assert NAMES <= set(infos)
    assert all(infos[n].plugin == "sparsekit.samplers._plugin" for n in NAMES)
    assert type(reg.get("sampler", "DAC_RLS", lam=2.0)).__name__ == "DACRLSSampler"
    assert reg.get("sampler", "dac").lam == 1.0
    assert type(reg.get("sampler", "uniform-rls")).__name__ == "TwoPassRLSSampler"


def test_accepts_attribute_says_which_samplers_take_graphs():
    for name in NAMES:
        cls = type(sparsekit.get_sampler(name))
        assert "graphs" in cls.accepts  # with some parameters
    assert sparsekit.get_sampler("dac-rls", lam="inverse-mean-norm").accepts == ("vectors",)
    assert sparsekit.get_sampler("greedy-trace", approximate=True).accepts == ("vectors",)
    assert sparsekit.get_sampler("greedy-trace").accepts == ("vectors", "graphs")


@pytest.mark.parametrize("name,params", GRAPH_CAPABLE)
def test_graph_capable_samplers_work_on_graphs(name, params, graphs, graph_kernel):
    lm = sparsekit.get_sampler(name, **params).sample(graphs, graph_kernel, 4, random_state=0)
    assert len(np.unique(lm.indices)) == 4
    F = graph_kernel.prepare(graphs).F
    np.testing.assert_array_equal(lm.points.F, F[lm.indices])
    # the same draw as on the explicit features, whose linear kernel is the graph kernel (3
    # landmarks: the features have rank 4, so a 4th greedy pick is a tie at rounding level)
    sampler = sparsekit.get_sampler(name, **params)
    on_graphs = sampler.sample(graphs, graph_kernel, 3, random_state=1)
    on_vectors = sampler.sample(
        F / np.sqrt(10.0), sparsekit.get_kernel("linear"), 3, random_state=1
    )
    np.testing.assert_array_equal(on_graphs.indices, on_vectors.indices)
    np.testing.assert_allclose(on_graphs.weights, on_vectors.weights, rtol=1e-8)


def test_graph_scores_equal_the_scores_of_the_explicit_features(graphs, graph_kernel):
    F = graph_kernel.prepare(graphs).F / np.sqrt(10.0)
    on_graphs = ExactRLSSampler(lam=0.5).scores(graphs, graph_kernel)
    on_vectors = ExactRLSSampler(lam=0.5).scores(F, sparsekit.get_kernel("linear"))
    np.testing.assert_allclose(on_graphs, on_vectors, atol=1e-10)


@pytest.mark.parametrize(
    "name,params",
    [
        ("dac-rls", {"lam": "inverse-mean-norm"}),
        ("rls", {"lam": "inverse-mean-norm"}),
        ("greedy-trace", {"approximate": True}),
    ],
)
def test_vector_only_configurations_refuse_graphs(name, params, graphs, graph_kernel):
    with pytest.raises(ValueError, match="graphs|raw vectors"):
        sparsekit.get_sampler(name, **params).sample(graphs, graph_kernel, 4)


@pytest.mark.filterwarnings("ignore:greedy-trace stopped")  # low-rank kernel on tiny graphs
def test_samplers_with_the_shortest_path_graph_kernel():
    nx = pytest.importorskip("networkx")
    if "shortest-path" not in Registry(entry_points=False).names("kernel"):
        pytest.skip("shortest-path kernel not registered")
    rng = np.random.default_rng(0)
    graphs = [nx.gnp_random_graph(int(rng.integers(5, 10)), 0.4, seed=int(s)) for s in range(30)]
    kernel = sparsekit.get_kernel("shortest-path", with_labels=False)
    features = kernel.features(graphs).toarray()  # the kernel is their linear kernel
    for name, params in [("dac-rls", {"lam": 0.5}), ("recursive-rls", {}), ("greedy-trace", {})]:
        lm = sparsekit.get_sampler(name, **params).sample(graphs, kernel, 5, random_state=0)
        assert len(np.unique(lm.indices)) == len(lm) > 0
        on_vectors = sparsekit.get_sampler(name, **params).sample(
            features, sparsekit.get_kernel("linear"), 5, random_state=0
        )
        np.testing.assert_array_equal(lm.indices, on_vectors.indices)
