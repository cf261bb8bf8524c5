"""Shortest-path graph kernel: parity with GraKeL, weighted/directed references, input forms,
the CUDA path (simulator), the prepared-data protocol, PSD/symmetry, bad input, and the triple
counts at key ranges where a packed sort key would overflow (brute-force counts)."""

import warnings
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import shortest_path

import sparsekit
from sparsekit.kernels.graph import ShortestPathFeatures, ShortestPathKernel

# -- graph generators -------------------------------------------------------------------


def random_graph(rng, n, p, n_labels=5, directed=False):
    A = (rng.random((n, n)) < p).astype(np.float64)
    np.fill_diagonal(A, 0.0)
    if not directed:
        A = np.triu(A, 1)
        A = A + A.T
    return A, rng.integers(0, n_labels, n)


def disconnected_graph(rng, n1, n2, p=0.5):
    A1, l1 = random_graph(rng, n1, p)
    A2, l2 = random_graph(rng, n2, p)
    A = np.zeros((n1 + n2, n1 + n2))
    A[:n1, :n1] = A1
    A[n1:, n1:] = A2
    return A, np.concatenate([l1, l2])


def graph_collection(seed=0, n_graphs=110):
    """Random labelled graphs with the edge cases: one node, no edges, isolated nodes,
    several components."""
    rng = np.random.default_rng(seed)
    graphs = [
        (np.zeros((1, 1)), np.array([3])),  # one node
        (np.zeros((4, 4)), np.array([0, 1, 1, 2])),  # four isolated nodes
        disconnected_graph(rng, 4, 5),
        disconnected_graph(rng, 1, 6),  # an isolated node + a component
    ]
    while len(graphs) < n_graphs:
        n = int(rng.integers(2, 16))
        p = float(rng.choice([0.08, 0.15, 0.3, 0.6]))
        if rng.random() < 0.2:
            graphs.append(disconnected_graph(rng, n // 2 + 1, n - n // 2 + 1, p))
        else:
            graphs.append(random_graph(rng, n, p))
    return graphs


def grakel_input(graphs):
    return [
        [A, {i: (lab.item() if hasattr(lab, "item") else lab) for i, lab in enumerate(L)}]
        for A, L in graphs
    ]


def grakel_fit_transform(graphs, with_labels, normalize):
    from grakel.kernels import ShortestPath

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GraKeL divides 0 by 0 for graphs without paths
        return ShortestPath(with_labels=with_labels, normalize=normalize).fit_transform(
            grakel_input(graphs)
        )


def assert_matches_grakel(K, Kg):
    """Equal to GraKeL at rtol 1e-10; where GraKeL gives NaN (0/0 normalization) we give 0."""
    nan = np.isnan(Kg)
    np.testing.assert_allclose(K[~nan], Kg[~nan], rtol=1e-10, atol=0)
    assert np.all(K[nan] == 0.0)


def reference_gram(graphs, with_labels=True, directed=True):
    """Brute force from scipy's all-pairs shortest paths: histogram of ordered-pair triples."""
    hists = []
    for A, labels in graphs:
        D = shortest_path(sp.csr_matrix(A), method="D", directed=directed)
        h = Counter()
        for u in range(len(A)):
            for v in range(len(A)):
                if u != v and np.isfinite(D[u, v]):
                    h[(labels[u], labels[v], D[u, v]) if with_labels else D[u, v]] += 1
        hists.append(h)
    K = np.zeros((len(graphs), len(graphs)))
    for i, hi in enumerate(hists):
        for j, hj in enumerate(hists):
            K[i, j] = sum(c * hj[key] for key, c in hi.items())
    return K


# -- parity with GraKeL --------------------------------------------------------------------


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("with_labels", [True, False])
def test_equals_grakel(with_labels, normalize):
    graphs = graph_collection(seed=1)
    assert len(graphs) >= 100
    K = ShortestPathKernel(with_labels=with_labels, normalize=normalize, backend="cpu")(graphs)
    Kg = grakel_fit_transform(graphs, with_labels, normalize)
    if normalize:
        assert np.isnan(Kg).any()  # the one-node / edgeless graphs are in the collection
    assert_matches_grakel(K, Kg)
    assert K.dtype == np.float64 and K.shape == (len(graphs), len(graphs))


def test_string_labels_equal_grakel():
    rng = np.random.default_rng(2)
    names = np.array(["C", "N", "O", "Cl", "H"])
    graphs = [(A, names[L]) for A, L in graph_collection(seed=2, n_graphs=30)]
    K = ShortestPathKernel(normalize=True)(graphs)
    assert_matches_grakel(K, grakel_fit_transform(graphs, True, True))
    # the same graphs with integer labels give the same kernel (labels are matched by identity)
    codes = {s: i for i, s in enumerate(rng.permutation(names))}
    int_graphs = [(A, np.array([codes[s] for s in L])) for A, L in graphs]
    np.testing.assert_array_equal(ShortestPathKernel(normalize=True)(int_graphs), K)


@pytest.mark.parametrize("normalize", [False, True])
def test_cross_kernel_of_separately_prepared_sets_equals_grakel_transform(normalize):
    from grakel.kernels import ShortestPath

    rng = np.random.default_rng(3)
    X = [random_graph(rng, int(rng.integers(3, 12)), 0.3, n_labels=4) for _ in range(25)]
    # Y: other sizes (other maximal distances), labels partly unseen in X (labels 2..7)
    Y = [
        (A, L + 2)
        for A, L in (
            random_graph(rng, int(rng.integers(2, 20)), 0.15, n_labels=6) for _ in range(15)
        )
    ]
    k = ShortestPathKernel(normalize=normalize)
    PX, PY = k.prepare(X), k.prepare(Y)
    assert not np.array_equal(PX.distance_values, PY.distance_values)
    gk = ShortestPath(with_labels=True, normalize=normalize)
    gk.fit(grakel_input(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Kg = gk.transform(grakel_input(Y))  # (n_Y, n_X)
    assert_matches_grakel(k(PY, PX), Kg)
    assert_matches_grakel(k(Y, X), Kg)
    np.testing.assert_allclose(k(PX, PY), k(PY, PX).T, rtol=1e-14)


def test_separately_prepared_sets_are_matched_on_label_values_not_codes():
    """Sets prepared apart whose label codes, distance tables and keys coincide but whose label
    values differ share no feature: labels are matched by value, and the integer 0 differs from
    the string "0" (GraKeL's convention). Oracle: the brute-force histogram of ordered-pair
    triples from SciPy's shortest paths (``reference_gram``) on the union of the sets."""
    A = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    X = [(A, ["a", "b", "a"]), (A, ["b", "b", "a"]), (A, ["a", "a", "a"])]
    rename = {"a": "b", "b": "c"}  # monotone: the label codes, hence the keys, stay the same
    Y = [(A, [rename[x] for x in L]) for A, L in X]
    k = ShortestPathKernel()
    PX, PY = k.prepare(X), k.prepare(Y)
    np.testing.assert_array_equal(PX.keys, PY.keys)
    np.testing.assert_array_equal(PX.distance_values, PY.distance_values)
    want = reference_gram(X + Y)[:3, 3:]
    assert want[1, 2] == 8.0 and want[0, 0] == 0.0  # (b, b, 1): 2 pairs x 4 pairs
    np.testing.assert_array_equal(k(PX, PY), want)
    np.testing.assert_array_equal(k(PY, PX), want.T)
    ints, strs = [(A, [0, 1, 0])], [(A, ["0", "1", "0"])]
    assert reference_gram(ints + strs)[0, 1] == 0.0
    np.testing.assert_array_equal(k(ints, strs), [[0.0]])


def test_dict_labels_are_read_by_node_index_whatever_their_order():
    """A ``{node: label}`` dict (GraKeL's form) is read by key, not in insertion order.
    Oracle: ``reference_gram`` (SciPy shortest paths, brute-force triples) of the graph with
    its labels as a list."""
    A = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]])
    labels = ["x", "y", "z", "x"]
    shuffled = {2: "z", 0: "x", 3: "x", 1: "y"}
    k = ShortestPathKernel()
    want = reference_gram([(A, labels)])
    np.testing.assert_array_equal(k([(A, shuffled)], [(A, labels)]), want)
    np.testing.assert_array_equal(k([(A, shuffled)]), want)


def test_directed_graphs_follow_edge_direction():
    rng = np.random.default_rng(4)
    graphs = [random_graph(rng, int(rng.integers(2, 10)), 0.25, directed=True) for _ in range(20)]
    assert any(not np.array_equal(A, A.T) for A, _ in graphs)
    K = ShortestPathKernel()(graphs)
    np.testing.assert_array_equal(K, reference_gram(graphs, directed=True))
    assert_matches_grakel(K, grakel_fit_transform(graphs, True, False))
    # a directed path a -> b -> c: pairs (0,1), (1,2), (0,2) only
    A = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    assert ShortestPathKernel()([(A, ["a", "b", "a"])])[0, 0] == 3.0


def test_hand_computed_value_of_a_path():
    # C-O-C: ordered pairs give (C,O,1) x2, (O,C,1) x2, (C,C,2) x2 -> <h, h> = 12
    A = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    k = ShortestPathKernel()
    assert k([(A, ["C", "O", "C"])])[0, 0] == 12.0
    # without labels: d=1 four times, d=2 twice -> 16 + 4
    assert ShortestPathKernel(with_labels=False)([A])[0, 0] == 20.0


# -- weighted graphs -----------------------------------------------------------------------


def weighted_collection(rng, n_graphs, weights):
    graphs = []
    for _ in range(n_graphs):
        n = int(rng.integers(1, 12))
        A, L = random_graph(rng, n, 0.35, n_labels=3)
        W = np.triu(rng.choice(weights, size=(n, n)), 1)
        graphs.append((A * (W + W.T), L))
    return graphs


@pytest.mark.parametrize("with_labels", [True, False])
@pytest.mark.parametrize(
    "weights", [np.arange(1.0, 6.0), np.array([0.5, 1.0, 1.5, 2.25])], ids=["integer", "dyadic"]
)
def test_weighted_equals_scipy_reference(with_labels, weights):
    rng = np.random.default_rng(5)
    graphs = weighted_collection(rng, 30, weights)
    k = ShortestPathKernel(with_labels=with_labels, weighted=True)
    K = k(graphs if with_labels else [A for A, _ in graphs])
    np.testing.assert_array_equal(K, reference_gram(graphs, with_labels=with_labels))
    # unweighted on the same graphs: hop counts, i.e. the weights ignored
    ones = [((A > 0).astype(float), L) for A, L in graphs]
    np.testing.assert_array_equal(ShortestPathKernel()(graphs), reference_gram(ones))


def test_weighted_real_valued_equals_grakel_bit_for_bit():
    # Floyd-Warshall in GraKeL's summation order: equal distances even with rounding
    rng = np.random.default_rng(6)
    graphs = []
    for _ in range(20):
        n = int(rng.integers(2, 10))
        A, L = random_graph(rng, n, 0.4, n_labels=3)
        W = np.triu(rng.random((n, n)) + 0.1, 1)
        graphs.append((A * (W + W.T), L))
    from grakel.kernels import ShortestPath

    Kg = ShortestPath(with_labels=True).fit_transform(grakel_input(graphs))
    K = ShortestPathKernel(weighted=True)(graphs)
    np.testing.assert_array_equal(K, Kg)


@pytest.mark.parametrize("with_labels", [True, False])
def test_weighted_and_normalized_equals_grakel(with_labels):
    from grakel.kernels import ShortestPath

    rng = np.random.default_rng(12)
    graphs = []
    for _ in range(25):
        n = int(rng.integers(2, 10))
        A, L = random_graph(rng, n, 0.4, n_labels=3)
        W = np.triu(rng.choice([0.5, 1.0, 1.5, 2.25, 3.0], size=(n, n)), 1)
        graphs.append((A * (W + W.T), L))
    X, Y = graphs[:18], graphs[18:]
    k = ShortestPathKernel(with_labels=with_labels, weighted=True, normalize=True)
    gk = ShortestPath(with_labels=with_labels, normalize=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GraKeL divides 0 by 0 for graphs without paths
        Kg = gk.fit_transform(grakel_input(X))
        Kg_cross = gk.transform(grakel_input(Y))  # (n_Y, n_X)
    K = k(X)
    assert_matches_grakel(K, Kg)
    assert_matches_grakel(k(Y, X), Kg_cross)
    # the weights matter: hop counts give another kernel on these graphs
    assert np.abs(ShortestPathKernel(with_labels=with_labels, normalize=True)(X) - K).max() > 0.05


# -- input forms ---------------------------------------------------------------------------


def test_dense_sparse_networkx_and_stack_inputs_agree():
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(7)
    graphs = [random_graph(rng, 8, 0.3, n_labels=3) for _ in range(12)]
    for A, _ in graphs[:4]:  # weights, to check the weighted path too
        A *= rng.integers(1, 4, size=A.shape)
        A[:] = np.maximum(A, A.T)
    for weighted in (False, True):
        k = ShortestPathKernel(weighted=weighted)
        K = k(graphs)
        coo = [(sp.coo_matrix(A), L) for A, L in graphs]
        csr_arrays = [(sp.csr_array(A), list(L)) for A, L in graphs]
        dict_labels = [(A.tolist(), {i: int(x) for i, x in enumerate(L)}) for A, L in graphs]
        nxg = []
        for A, L in graphs:
            G = nx.from_numpy_array(A)
            nx.set_node_attributes(G, {i: int(x) for i, x in enumerate(L)}, "label")
            nxg.append(G)
        for other in (coo, csr_arrays, dict_labels, nxg):
            np.testing.assert_array_equal(k(other), K)
        np.testing.assert_array_equal(k(nxg, graphs), K)
    stack = np.stack([A for A, _ in graphs])
    np.testing.assert_array_equal(
        ShortestPathKernel(with_labels=False)(stack),
        ShortestPathKernel(with_labels=False)(list(stack)),
    )


def test_sparse_explicit_zeros_are_not_edges_and_self_loops_are_ignored():
    A = sp.csr_matrix(
        (np.array([1.0, 0.0, 1.0, 0.0]), np.array([1, 2, 0, 0]), np.array([0, 2, 4, 4])),
        shape=(3, 3),
    )  # 0-1 edge, stored zeros elsewhere
    B = np.zeros((3, 3))
    B[0, 1] = B[1, 0] = 1.0
    k = ShortestPathKernel(with_labels=False)
    np.testing.assert_array_equal(k([A]), k([B]))
    assert k([A])[0, 0] == 4.0  # d=1 twice
    C = B.copy()
    np.fill_diagonal(C, 7.0)
    np.testing.assert_array_equal(ShortestPathKernel(with_labels=False, weighted=True)([C]), k([B]))


def test_bool_and_int_adjacency_and_label_kinds():
    rng = np.random.default_rng(8)
    graphs = [random_graph(rng, 7, 0.4) for _ in range(6)]
    k = ShortestPathKernel()
    K = k(graphs)
    np.testing.assert_array_equal(k([(A.astype(bool), L) for A, L in graphs]), K)
    np.testing.assert_array_equal(k([(A.astype(np.int8), L.astype(float)) for A, L in graphs]), K)
    np.testing.assert_array_equal(k([(A, L.astype(np.uint16)) for A, L in graphs]), K)


# -- CUDA path (simulator) -----------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True])
def test_cuda_equals_cpu(weighted):
    rng = np.random.default_rng(9)
    graphs = [(np.zeros((1, 1)), np.array([0]))]
    graphs += [random_graph(rng, n, 0.5, n_labels=2) for n in (2, 4, 5)]
    graphs.append(disconnected_graph(rng, 2, 3))
    if weighted:
        graphs = [(A * rng.choice([0.5, 1.25, 3.0], size=A.shape), L) for A, L in graphs]
    cpu = ShortestPathKernel(weighted=weighted, backend="cpu")
    gpu = ShortestPathKernel(weighted=weighted, backend="cuda")
    Pc, Pg = cpu.prepare(graphs), gpu.prepare(graphs)
    np.testing.assert_array_equal(Pg.counts.toarray(), Pc.counts.toarray())
    np.testing.assert_array_equal(Pg.keys, Pc.keys)
    np.testing.assert_array_equal(gpu(graphs), cpu(graphs))


@pytest.mark.parametrize("weighted", [False, True])
def test_cuda_batch_of_several_blocks_equals_the_reference(weighted):
    # the packed distances of the batch span two blocks of 256 threads, the second one partly
    # outside the array, and graphs straddle the block boundaries
    from sparsekit.kernels.graph import _apsp_cuda

    rng = np.random.default_rng(10)
    graphs = [random_graph(rng, int(n), 0.5, n_labels=2) for n in rng.integers(1, 5, size=45)]
    if weighted:
        graphs = [(A * rng.choice([0.5, 1.25, 3.0], size=A.shape), L) for A, L in graphs]
        graphs = [(np.maximum(A, A.T), L) for A, L in graphs]
    entries = sum(len(A) ** 2 for A, _ in graphs)
    assert _apsp_cuda._THREADS < entries < 2 * _apsp_cuda._THREADS, entries
    K = ShortestPathKernel(weighted=weighted, backend="cuda")(graphs)
    np.testing.assert_array_equal(K, reference_gram(graphs))
    np.testing.assert_array_equal(K, ShortestPathKernel(weighted=weighted, backend="cpu")(graphs))


def test_auto_backend_is_cpu_under_the_simulator():
    from numba import config

    from sparsekit.kernels.base import resolve_backend

    if config.ENABLE_CUDASIM:
        assert resolve_backend(ShortestPathKernel().backend, True, "shortest-path") == "cpu"


# -- prepared-data protocol ----------------------------------------------------------------


@pytest.mark.parametrize("normalize", [False, True])
def test_prepared_protocol_consistent_with_gram(normalize):
    graphs = graph_collection(seed=10, n_graphs=40)
    k = ShortestPathKernel(normalize=normalize)
    P = k.prepare(graphs)
    assert isinstance(P, ShortestPathFeatures)
    assert k.prepare(P) is P
    assert k.n_samples(P) == 40 == k.n_samples(graphs)
    K = k(graphs)
    np.testing.assert_array_equal(k(P), K)
    np.testing.assert_array_equal(k.diag(P), np.diag(K))
    np.testing.assert_array_equal(k.diag(graphs), np.diag(K))
    if normalize:
        d = k.diag(P)
        assert d[0] == 0.0 and d[1] == 0.0  # one-node and edgeless graphs
        assert np.all(d[P.sq_norms > 0] == 1.0) and (P.sq_norms > 0).sum() > 30
    idx = np.array([5, 0, 17, 17, 39])
    S = k.take(P, idx)
    assert k.n_samples(S) == 5
    np.testing.assert_array_equal(k(S, P), K[idx])
    np.testing.assert_array_equal(k(P, S), K[:, idx])
    np.testing.assert_array_equal(k.diag(S), np.diag(K)[idx])
    mask = np.zeros(40, dtype=bool)
    mask[[1, 3]] = True
    np.testing.assert_array_equal(k(k.take(P, mask), P), K[[1, 3]])
    blocks = list(k.blocks(P, S, max_memory=8 * 5 * 7))
    assert len(blocks) == 6  # 7 rows per block
    out = np.vstack([b for _, b in blocks])
    np.testing.assert_array_equal(out, K[:, idx])
    assert [r.start for r, _ in blocks] == list(range(0, 40, 7))
    square = np.vstack([b for _, b in k.blocks(P, max_memory=8 * 40 * 9)])
    np.testing.assert_array_equal(square, K)


def test_features_are_the_explicit_feature_map():
    graphs = graph_collection(seed=11, n_graphs=20)
    k = ShortestPathKernel()
    F = k.features(graphs)
    assert sp.issparse(F) and F.shape[0] == 20
    np.testing.assert_array_equal((F @ F.T).toarray(), k(graphs))
    assert np.all(F.data == np.round(F.data)) and F.data.min() >= 1


def test_sparse_and_dense_products_agree(monkeypatch):
    from sparsekit.kernels.graph import shortest_path as mod

    graphs = graph_collection(seed=12, n_graphs=30)
    K = ShortestPathKernel()(graphs)
    monkeypatch.setattr(mod, "_DENSE_PRODUCT_BYTES", 0)  # force the sparse product
    k = ShortestPathKernel()
    assert not mod._use_dense_product(k.features(graphs), k.features(graphs))
    np.testing.assert_array_equal(k(graphs), K)
    np.testing.assert_array_equal(np.vstack([b for _, b in k.blocks(graphs, max_memory=80)]), K)
    np.testing.assert_array_equal(k(graphs[:7], graphs), K[:7])


def test_prepared_with_other_settings_is_rejected():
    rng = np.random.default_rng(13)
    graphs = [random_graph(rng, 5, 0.5) for _ in range(3)]
    P = ShortestPathKernel(with_labels=True).prepare(graphs)
    with pytest.raises(ValueError, match="with_labels=True"):
        ShortestPathKernel(with_labels=False)(P)
    with pytest.raises(ValueError, match="prepare it again"):
        ShortestPathKernel(weighted=True).diag(P)


def test_take_rejects_bad_indices():
    rng = np.random.default_rng(14)
    k = ShortestPathKernel()
    P = k.prepare([random_graph(rng, 5, 0.5) for _ in range(3)])
    with pytest.raises(ValueError, match="out of range"):
        k.take(P, [0, 3])
    with pytest.raises(TypeError, match="integer or boolean"):
        k.take(P, [0.5])
    with pytest.raises(ValueError, match="boolean indices"):
        k.take(P, np.array([True, False]))


def test_take_reads_negative_positions_as_numpy_does():
    """``take`` reads -1 as the last graph and refuses positions below ``-n``. Oracle: NumPy
    indexing of the Gram matrix of all the graphs."""
    k = ShortestPathKernel(normalize=True)
    P = k.prepare(graph_collection(seed=17, n_graphs=6))
    K = k(P)
    np.testing.assert_array_equal(k(k.take(P, [-1, -6, 2]), P), K[[-1, -6, 2]])
    with pytest.raises(ValueError, match="out of range"):
        k.take(P, [-7])


def test_graphs_without_pairs_at_the_end_of_a_batch():
    """Graphs without any connected pair (one node, no edges) after the last graph with
    features keep their row: raw values from ``reference_gram`` (SciPy shortest paths, brute
    force), normalized values 1 on the path and 0 elsewhere (the documented convention)."""
    A = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    graphs = [(A, [0, 1, 0]), (np.zeros((1, 1)), [0]), (np.zeros((3, 3)), [0, 1, 2])]
    k = ShortestPathKernel()
    np.testing.assert_array_equal(k(graphs), reference_gram(graphs))
    np.testing.assert_array_equal(k.diag(graphs), [12.0, 0.0, 0.0])
    kn = ShortestPathKernel(normalize=True)
    want = np.zeros((3, 3))
    want[0, 0] = 1.0
    np.testing.assert_array_equal(kn(graphs), want)
    np.testing.assert_array_equal(kn(graphs[1:], graphs), want[1:])
    np.testing.assert_array_equal(kn.diag(graphs), [1.0, 0.0, 0.0])


def test_registered_by_name_and_alias():
    from sparsekit.kernels import _plugin

    registry = sparsekit.Registry(builtins=False, entry_points=False, plugins=[_plugin])
    k = registry.get("kernel", "shortest-path", normalize=True)
    assert isinstance(k, ShortestPathKernel) and k.normalize and k.accepts == "graphs"
    assert isinstance(registry.get("kernel", "SP"), ShortestPathKernel)
    info = registry.lookup("kernel", "shortest_path")
    assert info.name == "shortest-path" and info.registration.accepts == "graphs"
    assert k.get_params()["normalize"] is True
    assert k.set_params(with_labels=False).with_labels is False


# -- properties ----------------------------------------------------------------------------


def test_symmetric_and_psd():
    graphs = graph_collection(seed=15, n_graphs=60)
    for normalize in (False, True):
        K = ShortestPathKernel(normalize=normalize)(graphs)
        np.testing.assert_array_equal(K, K.T)
        w = np.linalg.eigvalsh(K)
        assert w.min() >= -1e-9 * max(1.0, w.max())


@st.composite
def labelled_graphs(draw):
    n = draw(st.integers(1, 7))
    bits = draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    A = np.array(bits, dtype=float).reshape(n, n)
    labels = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    return A, np.array(labels)


@settings(max_examples=30, deadline=None)
@given(st.lists(labelled_graphs(), min_size=1, max_size=6), st.booleans())
def test_property_matches_brute_force(graphs, with_labels):
    k = ShortestPathKernel(with_labels=with_labels)
    K = k(graphs if with_labels else [A for A, _ in graphs])
    np.testing.assert_array_equal(K, reference_gram(graphs, with_labels=with_labels))
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_array_equal(
        k.diag(graphs if with_labels else [A for A, _ in graphs]), np.diag(K)
    )


# -- bad input -----------------------------------------------------------------------------


def _g(n=3):
    A = np.zeros((n, n))
    A[0, 1] = A[1, 0] = 1.0
    return A, np.arange(n)


@pytest.mark.parametrize(
    "graphs,err,match",
    [
        ([], ValueError, "X is empty"),
        ([(np.zeros((3, 4)), [0, 1, 2])], ValueError, r"X\[0\] adjacency must be a square"),
        ([_g(), (sp.csr_matrix((2, 3)), [0, 1])], ValueError, r"X\[1\] adjacency must be a square"),
        ([(_g()[0], [0, 1])], ValueError, r"X\[0\] labels has 2 labels but the graph has 3 nodes"),
        ([(_g()[0], {0: 1, 1: 1, 5: 2})], ValueError, "keys are not the node indices"),
        ([(_g()[0] * -1, [0, 1, 2])], ValueError, "negative weights"),
        ([(sp.csr_matrix(_g()[0] * -2), [0, 1, 2])], ValueError, "negative weights"),
        ([(np.array([[0, -1], [1, 0]]), [0, 1])], ValueError, "negative weights"),
        ([(np.array([[0, np.nan], [1, 0]]), [0, 1])], ValueError, "contains NaN"),
        ([(sp.csr_matrix(np.array([[0, np.nan], [1, 0]])), [0, 1])], ValueError, "contains NaN"),
        ([(np.array([[0, np.inf], [1, 0]]), [0, 1])], ValueError, "contains inf"),
        ([(np.zeros((0, 0)), [])], ValueError, "has no nodes"),
        ([_g(), "not a graph"], TypeError, r"X\[1\] is a str, not a graph"),
        ([_g(), 42], TypeError, r"X\[1\] is a int, not a graph"),
        ([(_g()[0], [0, 1, 2], "extra")], TypeError, "not a graph"),
        ([(np.array([["a", "b"], ["c", "d"]]), [0, 1])], TypeError, "numeric"),
        (np.zeros((3, 3)), TypeError, "single 2-D array"),
        (sp.csr_matrix((3, 3)), TypeError, "single graph"),
        ("graphs", TypeError, "sequence of graphs"),
        (5, TypeError, "sequence of graphs"),
        ([_g()[0]], ValueError, "no node labels but with_labels=True"),
        ([_g(), (_g()[0], ["a", "b", "c"])], TypeError, "mixes integer and string"),
        ([(_g()[0], [0.5, 1, 2])], TypeError, "non-integral float labels"),
        ([(_g()[0], [[0], [1], [2]])], ValueError, "must be 1-D"),
        ([(_g()[0], [None, 1, 2])], TypeError, "integers or strings"),
        ([(_g()[0], 7)], TypeError, "sequence of node labels"),
    ],
)
def test_bad_graph_input(graphs, err, match):
    with pytest.raises(err, match=match):
        ShortestPathKernel()(graphs)


def test_bad_input_in_y_names_y():
    with pytest.raises(ValueError, match=r"Y\[0\] adjacency must be a square"):
        ShortestPathKernel()([_g()], [(np.zeros((2, 3)), [0, 1])])


def test_networkx_node_without_label():
    nx = pytest.importorskip("networkx")
    G = nx.path_graph(3)
    with pytest.raises(ValueError, match="node 0 has no 'label' attribute"):
        ShortestPathKernel()([G])
    assert ShortestPathKernel(with_labels=False)([G])[0, 0] == 20.0
    with pytest.raises(TypeError, match=r"X\[0\] is a networkx multigraph"):
        ShortestPathKernel(with_labels=False)([nx.MultiGraph(G)])
    with pytest.raises(ValueError, match="negative weights"):
        D = nx.DiGraph()
        D.add_edge(0, 1, weight=-1.0)
        ShortestPathKernel(with_labels=False, weighted=True)([D])


@pytest.mark.parametrize(
    "params,err,match",
    [
        ({"backend": "gpu"}, ValueError, "unknown backend 'gpu'"),
        ({"backend": 3}, TypeError, "backend must be one of"),
        ({"with_labels": "yes"}, TypeError, "with_labels must be True or False"),
        ({"normalize": 1}, TypeError, "normalize must be True or False"),
        ({"weighted": None}, TypeError, "weighted must be True or False"),
    ],
)
def test_bad_parameters(params, err, match):
    with pytest.raises(err, match=match):
        ShortestPathKernel(**params)


def test_bad_max_memory():
    with pytest.raises(ValueError, match="max_memory"):
        next(ShortestPathKernel().blocks([_g()], max_memory=-1))


@pytest.mark.parametrize("weighted", [False, True])
def test_chunked_feature_build_equals_single_chunk(monkeypatch, weighted):
    from sparsekit.kernels.graph import feature_map

    rng = np.random.default_rng(16)
    graphs = graph_collection(seed=16, n_graphs=40)
    if weighted:
        graphs = [(A * rng.choice([1.0, 2.5, 4.0], size=A.shape), L) for A, L in graphs]
    k = ShortestPathKernel(weighted=weighted)
    P1 = k.prepare(graphs)
    monkeypatch.setattr(feature_map, "_CHUNK_ENTRIES", 60)  # ~one graph of 8 nodes per chunk
    assert len(feature_map._chunks(np.array([len(A) for A, _ in graphs]), 60)) > 10
    P2 = k.prepare(graphs)
    np.testing.assert_array_equal(P2.distance_values, P1.distance_values)
    np.testing.assert_array_equal(P2.keys, P1.keys)
    np.testing.assert_array_equal(P2.counts.toarray(), P1.counts.toarray())
    np.testing.assert_array_equal(k(P2), k(P1))


def test_chunks_cover_every_graph_once():
    from sparsekit.kernels.graph.feature_map import _chunks

    sizes = np.array([3, 10, 1, 1, 2, 30, 4])
    for budget in (1, 9, 50, 10**6):
        ranges = _chunks(sizes, budget)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(sizes)
        assert all(b == c for (_, b), (c, _) in zip(ranges[:-1], ranges[1:]))
        for a, b in ranges:
            assert b > a and (b - a == 1 or (sizes[a:b] ** 2).sum() <= budget)


@pytest.mark.parametrize("weighted,want", [(False, "cpu"), (True, "cuda")])
def test_auto_uses_the_gpu_for_weighted_graphs_only(monkeypatch, weighted, want):
    # on a machine with a usable device, hop counts stay on the CPU (BFS was faster there)
    from sparsekit.kernels import base
    from sparsekit.kernels.graph import shortest_path

    seen = []
    real = shortest_path.build_features

    def spy(batch, **kwargs):
        seen.append(kwargs["backend"])
        return real(batch, **kwargs)

    monkeypatch.setattr(base, "_CUDA_USABLE", True)
    monkeypatch.setattr(shortest_path, "build_features", spy)
    A = np.array([[0.0, 2.0], [2.0, 0.0]])
    ShortestPathKernel(weighted=weighted).prepare([(A, [0, 1])])
    assert seen == [want]


def test_a_gram_too_large_for_memory_is_refused_before_it_is_formed(monkeypatch):
    """The n x m float64 Gram of the graph kernel goes through the library's memory guard:
    with the available memory patched below 8 n m bytes (the oracle: the size of the matrix)
    the call raises InsufficientMemoryError naming blocks() instead of forming it."""
    monkeypatch.setattr("sparsekit.kernels.base.GRAM_CHECK_MIN_BYTES", 0)
    from sparsekit._runtime import memory as _memory

    graphs = graph_collection(seed=1, n_graphs=12)
    kernel = ShortestPathKernel()
    monkeypatch.setattr(_memory, "available_memory", lambda: 8 * 12 * 12)
    with pytest.raises(_memory.InsufficientMemoryError, match=r"12 x 12 rows.*blocks\("):
        kernel(graphs)
    assert np.vstack([b for _, b in kernel.blocks(graphs)]).shape == (12, 12)


# -- blocks, batches and triple counts -----------------------------------------------------
def _graphs(rng, n_graphs):
    out = []
    for _ in range(n_graphs):
        n = int(rng.integers(2, 7))
        A = (rng.random((n, n)) < 0.5).astype(float)
        np.fill_diagonal(A, 0.0)
        out.append((A, rng.integers(0, 3, n)))
    return out


def test_default_graph_blocks_of_a_small_gram_are_one_block(rng):
    graphs = _graphs(rng, 20)
    k = ShortestPathKernel()
    blocks = list(k.blocks(graphs))
    assert len(blocks) == 1 and (blocks[0][0].start, blocks[0][0].stop) == (0, 20)
    np.testing.assert_array_equal(blocks[0][1], k(graphs))


def test_small_batch_is_one_chunk_of_distance_matrices(monkeypatch, rng):
    # chunks hold up to 2^23 distance entries: 30 graphs of at most 6 nodes are one chunk
    from sparsekit.kernels.graph import feature_map

    calls = []
    real = feature_map._chunk_runs

    def spy(batch, *args):
        calls.append(batch.n_graphs)
        return real(batch, *args)

    monkeypatch.setattr(feature_map, "_chunk_runs", spy)
    ShortestPathKernel().prepare(_graphs(rng, 30))
    assert calls == [30]


def test_triple_counts_with_keys_near_the_64_bit_limit(rng):
    # L^2 D = 2^61 and 5 graphs: graph * span + key would pass 2^63, so graphs are ordered by a
    # two-key sort; counts against a brute-force tally of every ordered pair
    from sparsekit.kernels.graph import _triples_cpu
    from sparsekit.kernels.graph.feature_map import all_pairs_distances
    from sparsekit.kernels.graph.input import parse_graphs

    graphs = _graphs(rng, 5)
    batch = parse_graphs(graphs)
    dist_ptr, codes, _ = all_pairs_distances(batch, False, "cpu")
    L, D = np.int64(2**20), np.int64(2**21)
    sizes = batch.sizes
    pair_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes * (sizes - 1), out=pair_ptr[1:])
    keys = np.empty(pair_ptr[-1], dtype=np.int64)
    counts = np.empty(pair_ptr[-1], dtype=np.float64)
    n_unique = np.empty(len(sizes), dtype=np.int64)
    _triples_cpu.count_triples(
        batch.node_ptr, dist_ptr, codes, batch.label_codes, L, D, pair_ptr, keys, counts, n_unique
    )
    for g in range(len(sizes)):
        first, n, base_ = batch.node_ptr[g], sizes[g], dist_ptr[g]
        tally = Counter()
        for u in range(n):
            for v in range(n):
                c = int(codes[base_ + u * n + v])
                if u != v and c >= 0:
                    lu, lv = int(batch.label_codes[first + u]), int(batch.label_codes[first + v])
                    tally[(lu * int(L) + lv) * int(D) + c] += 1
        want = sorted(tally.items())
        a = pair_ptr[g]
        got = list(zip(keys[a : a + n_unique[g]].tolist(), counts[a : a + n_unique[g]].tolist()))
        assert got == [(key, float(c)) for key, c in want]


def test_pair_given_as_a_list_with_nested_labels_blames_the_labels():
    # [adjacency rows, labels] is an (adjacency, labels) pair even as a list; 2-D labels are
    # the labels' fault, not a malformed 3-D adjacency
    A = [[0, 1], [1, 0]]
    labels = [[0, 1], [1, 0]]
    with pytest.raises(ValueError, match=r"labels must be 1-D"):
        ShortestPathKernel()([[A, labels]])
    # without labels the pair's second item is ignored
    np.testing.assert_array_equal(
        ShortestPathKernel(with_labels=False)([[A, labels]]),
        ShortestPathKernel(with_labels=False)([np.array(A)]),
    )
