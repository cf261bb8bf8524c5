"""Fixtures of the sampler tests: small clustered data, a toy graph kernel, and the exact ridge
leverage scores of a small Gram matrix."""

import numpy as np
import pytest

from sparsekit.kernels.base import Kernel


def clustered(n, d=4, n_clusters=6, spread=0.3, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    centers = 2.0 * rng.standard_normal((n_clusters, d))
    X = centers[rng.integers(0, n_clusters, n)] + spread * rng.standard_normal((n, d))
    return X.astype(dtype)


def ridge_leverage_scores(K, lam):
    """l_i = [K (K + λI)⁻¹]_ii by a dense solve."""
    return np.diag(np.linalg.solve(K + lam * np.eye(len(K)), K))


@pytest.fixture
def X_small():
    return clustered(120, seed=3)


class PathCountGraphKernel(Kernel):
    """A graph kernel for protocol tests: a linear kernel on (nodes, edges, triangles, 1) counts.

    Graphs are given as edge lists (lists of ``(u, v)`` pairs); the prepared form is an object
    holding the count matrix, so samplers cannot mistake it for vectors.
    """

    name = "toy-graph"
    accepts = "graphs"

    class Prepared:
        def __init__(self, F):
            self.F = F

        def __len__(self):
            return self.F.shape[0]

    def prepare(self, X):
        if isinstance(X, self.Prepared):
            return X
        rows = []
        for edges in X:
            nodes = {u for e in edges for u in e}
            adj = {u: set() for u in nodes}
            for u, v in edges:
                adj[u].add(v)
                adj[v].add(u)
            tri = sum(len(adj[u] & adj[v]) for u, v in edges) / 3.0
            rows.append([len(nodes), len(edges), tri, 1.0])
        return self.Prepared(np.asarray(rows, dtype=np.float64))

    def take(self, X, indices):
        return self.Prepared(self.prepare(X).F[np.asarray(indices, dtype=np.intp)])

    def n_samples(self, X):
        return len(self.prepare(X))

    def __call__(self, X, Y=None):
        FX = self.prepare(X).F
        FY = FX if Y is None else self.prepare(Y).F
        return FX @ FY.T / 10.0

    def diag(self, X):
        F = self.prepare(X).F
        return np.einsum("ij,ij->i", F, F) / 10.0


def random_graphs(count, seed=0):
    rng = np.random.default_rng(seed)
    graphs = []
    for _ in range(count):
        size = int(rng.integers(3, 9))
        edges = [(u, v) for u in range(size) for v in range(u + 1, size) if rng.random() < 0.4]
        graphs.append(edges or [(0, 1)])
    return graphs


@pytest.fixture
def graph_kernel():
    return PathCountGraphKernel()


@pytest.fixture
def graphs():
    return random_graphs(40)
