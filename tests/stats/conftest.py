import numpy as np


def random_graphs(rng, count, p, n_nodes=(6, 10), n_labels=3):
    """Random labelled undirected graphs with edge density ``p``."""
    out = []
    for _ in range(count):
        n = int(rng.integers(n_nodes[0], n_nodes[1] + 1))
        A = np.triu((rng.random((n, n)) < p).astype(np.float64), 1)
        out.append((A + A.T, rng.integers(0, n_labels, n)))
    return out


def gaussian_mmd2(gamma, var_p, var_q):
    """Population MMD² of the RBF kernel exp(-gamma t²) between N(0, var_p) and N(0, var_q).

    E exp(-gamma (x - x')²) = 1 / sqrt(1 + 2 gamma (a + b)) for independent x ~ N(0, a),
    x' ~ N(0, b).
    """

    def e(a, b):
        return 1.0 / np.sqrt(1.0 + 2.0 * gamma * (a + b))

    return e(var_p, var_p) + e(var_q, var_q) - 2.0 * e(var_p, var_q)
