"""Palm4MSA and hierarchical Palm4MSA: oracles, monotone safeguard, registry, bad input."""

import numpy as np
import pytest
from scipy.linalg import hadamard

import sparsekit
from sparsekit.exceptions import UnknownComponentError
from sparsekit.factorizers.hierarchical import hierarchical_constraints


def splincol(shape, k, k_col=None):
    return sparsekit.get_projection("splincol", shape=shape, k=k, k_col=k_col)


def test_registered_and_protocols():
    """Factorizers are a family of their own: listed as factorizers, not as solvers; neither
    protocol carries a stub of the other's method; a solver lookup of a factorizer is refused
    with the way to get it."""
    names = {i.name for i in sparsekit.list_components("factorizer")}
    assert {"palm4msa", "hierarchical-palm4msa"} <= names
    assert not names & {i.name for i in sparsekit.list_components("solver")}
    palm = sparsekit.get_factorizer("palm4msa")
    assert not hasattr(palm, "solve")
    assert not hasattr(sparsekit.get_solver("omp"), "factorize")
    with pytest.raises(UnknownComponentError, match=r"get_factorizer\('palm4msa'\)"):
        sparsekit.get_solver("palm4msa", n_iter=7)
    with pytest.raises(UnknownComponentError, match="Did you mean 'palm4msa'"):
        sparsekit.get_solver("palm4mas")
    with pytest.raises(UnknownComponentError, match="Did you mean 'palm4msa'"):
        sparsekit.get_factorizer("palm4mas")
    with pytest.raises(UnknownComponentError, match="unknown factorizer 'omp': 'omp' is a solver"):
        sparsekit.get_factorizer("omp")  # a sparse solver is not a factorizer


def test_exact_product_is_recovered_from_its_support():
    """A product of two sparse factors, refit on the same supports, reaches ~0 error."""
    rng = np.random.default_rng(0)
    S1 = rng.standard_normal((12, 8)) * (rng.random((12, 8)) < 0.3)
    S2 = rng.standard_normal((8, 10)) * (rng.random((8, 10)) < 0.3)
    M = S1 @ S2
    cons = [
        sparsekit.get_projection("support", mask=S1 != 0),
        sparsekit.get_projection("support", mask=S2 != 0),
    ]
    res = sparsekit.get_factorizer("palm4msa", n_iter=3000, tol=0).factorize(M, cons)
    assert res.relative_error < 1e-6
    np.testing.assert_allclose(res.factors.toarray(), M, atol=1e-5 * np.abs(M).max())
    # the objective is the squared Frobenius error of the returned operator
    assert res.objective[-1] == pytest.approx(
        np.linalg.norm(M - res.factors.toarray()) ** 2, rel=1e-6, abs=1e-20
    )


def test_safeguard_objective_never_increases_and_factors_satisfy_constraints():
    M = np.random.default_rng(1).standard_normal((32, 32))
    cons = [splincol((32, 32), 2) for _ in range(3)]
    plain = sparsekit.get_factorizer("palm4msa", n_iter=60, tol=0).factorize(M, cons)
    safe = sparsekit.get_factorizer("palm4msa", n_iter=60, tol=0, safeguard=True).factorize(M, cons)
    assert np.all(np.diff(safe.objective) <= 0)
    assert safe.objective[-1] < np.linalg.norm(M) ** 2
    for res in (plain, safe):
        for F in res.factors.factors:
            D = F.toarray()
            assert (np.count_nonzero(D, axis=1) >= 2).all()
            assert np.count_nonzero(D) <= 2 * 2 * 32
            assert np.linalg.norm(D) == pytest.approx(1.0)


def test_first_iteration_from_default_init_is_a_projected_gradient_step():
    """With the default init (identities, zero right-most factor) the first sweep sets the
    right-most factor to P(U / 1.001) and then λ by its closed form."""
    M = np.random.default_rng(2).standard_normal((6, 6))
    cons = [sparsekit.get_projection("identity", shape=(6, 6)), splincol((6, 6), 2)]
    res = sparsekit.get_factorizer("palm4msa", n_iter=1, tol=0).factorize(M, cons)
    S2 = cons[1](M / 1.001)
    # then S1 is updated from the identity with L = I, R = S2, λ = 1
    c = 1.001 * np.linalg.norm(S2, 2) ** 2
    S1 = np.eye(6) - (np.eye(6) @ S2 - M) @ S2.T / c
    prod = S1 @ S2
    lam = np.vdot(M, prod) / np.vdot(prod, prod)
    # (c uses a power-iteration norm: relative accuracy 1e-6)
    np.testing.assert_allclose(res.factors.toarray(), lam * prod, rtol=1e-5, atol=1e-6)


def test_left_to_right_and_float32():
    M = np.random.default_rng(3).standard_normal((16, 24)).astype(np.float32)
    cons = [splincol((16, 16), 3), splincol((16, 24), 3, 2)]
    palm = sparsekit.get_factorizer("palm4msa", n_iter=30, update_way="left-to-right")
    res = palm.factorize(M, cons)
    assert res.factors.dtype == np.float32 and res.factors.shape == (16, 24)
    assert res.relative_error < 0.9
    rt = sparsekit.get_factorizer("palm4msa", n_iter=30).factorize(
        M.T, [splincol((24, 16), 2, 3), splincol((16, 16), 3)]
    )
    # left-to-right on M is right-to-left on M^T
    np.testing.assert_allclose(res.factors.toarray(), rt.factors.toarray().T, atol=1e-5)


def test_warm_start_and_constant_factor():
    rng = np.random.default_rng(4)
    M = rng.standard_normal((8, 8))
    D = np.diag(rng.random(8) + 0.5)
    cons = [sparsekit.get_projection("constant", matrix=D), splincol((8, 8), 3)]
    res = sparsekit.get_factorizer("palm4msa", n_iter=20).factorize(M, cons)
    np.testing.assert_allclose(res.factors.factors[0].toarray(), D)
    again = sparsekit.get_factorizer("palm4msa", n_iter=1, tol=0, safeguard=True).factorize(
        M,
        cons,
        init_factors=[F.toarray() for F in res.factors.factors],
        init_scale=res.factors.scale,
    )
    assert again.objective[0] <= res.objective[-1] * (1 + 1e-12)


def test_hadamard_32_recovered():
    H = hadamard(32).astype(float)
    res = sparsekit.get_factorizer("hierarchical-palm4msa", n_iter=30).factorize(H, 2, n_factors=5)
    assert res.relative_error <= 1e-8
    assert res.factors.n_factors == 5
    assert all(F.nnz == 64 for F in res.factors.factors)  # 2 per row and column
    np.testing.assert_allclose(res.factors.toarray(), H, atol=1e-7)


def test_hierarchical_schedule():
    facts, res = hierarchical_constraints((64, 30), 6, 3)
    assert [f.shape for f in facts] == [(64, 30)] + [(30, 30)] * 4
    assert (facts[0].k, facts[0].k_col) == (3, 6)  # s per row, s K / A per column
    assert all((f.k, f.k_col) == (3, 3) for f in facts[1:])
    assert [r.shape for r in res] == [(30, 30)] * 5
    assert [(r.k, r.k_col) for r in res] == [(15, 15), (7, 7), (3, 3), (3, 3), (3, 3)]
    facts, res = hierarchical_constraints((256, 256), 8, 2)
    assert [r.k for r in res] == [128, 64, 32, 16, 8, 4, 2]  # FAµST's Hadamard schedule


def test_bad_input():
    palm = sparsekit.get_factorizer("palm4msa")
    M = np.ones((4, 6))
    with pytest.raises(ValueError, match="do not chain: factor 1 has shape"):
        palm.factorize(M, [splincol((4, 5), 2), splincol((4, 6), 2)])
    with pytest.raises(ValueError, match="target's rows"):
        palm.factorize(M, [splincol((5, 6), 2)])
    with pytest.raises(ValueError, match="last factor has 5 columns"):
        palm.factorize(M, [splincol((4, 5), 2)])
    with pytest.raises(ValueError, match="contains NaN"):
        palm.factorize(np.full((4, 6), np.nan), [splincol((4, 6), 2)])
    with pytest.raises(ValueError, match="contains inf"):
        palm.factorize(np.full((4, 6), np.inf), [splincol((4, 6), 2)])
    with pytest.raises(ValueError, match="k must be >= 1"):
        splincol((4, 6), 0)
    with pytest.raises(ValueError, match="larger than the number of columns"):
        splincol((4, 6), 7)
    with pytest.raises(ValueError, match="sparsity=0|sparsity must be >= 1"):
        hierarchical_constraints((8, 8), 3, 0)
    with pytest.raises(ValueError, match="larger than the factors"):
        hierarchical_constraints((8, 8), 3, 9)
    with pytest.raises(ValueError, match="n_iter must be >= 1"):
        sparsekit.get_factorizer("palm4msa", n_iter=0).factorize(M, [splincol((4, 6), 2)])
    with pytest.raises(TypeError, match="constraints\\[0\\] must be a projection"):
        palm.factorize(M, ["splincol"])
    with pytest.raises(ValueError, match="init_factors\\[0\\] has shape"):
        palm.factorize(M, [splincol((4, 6), 2)], init_factors=[np.ones((3, 3))])


def test_sparse_kernel_path_equals_dense_path(monkeypatch):
    """Products through the CSR factors (chains) give the same iterates as dense BLAS."""
    import sparsekit.factorizers.palm4msa as mod

    M = np.random.default_rng(5).standard_normal((24, 24))
    cons = [splincol((24, 24), 2) for _ in range(4)]
    dense = sparsekit.get_factorizer("palm4msa", n_iter=15, tol=0).factorize(M, cons)
    monkeypatch.setattr(mod, "SPARSE_MIN_SIZE", 0)
    monkeypatch.setattr(
        mod, "_chain_pays", lambda chain, size: all(f.csr is not None for f in chain)
    )
    sparse = sparsekit.get_factorizer("palm4msa", n_iter=15, tol=0).factorize(M, cons)
    np.testing.assert_allclose(sparse.objective, dense.objective, rtol=1e-9)
    np.testing.assert_allclose(sparse.factors.toarray(), dense.factors.toarray(), atol=1e-10)


@pytest.mark.parametrize("update_way", ["right-to-left", "left-to-right"])
def test_narrow_gradient_order_gives_the_residual_first_iterates(monkeypatch, update_way):
    """The gradient with its products on the target's rows (``_gradient_narrow``) equals the
    residual-first order, factor by factor, on a wide target with a constant first factor
    (QuicK-means' layout) and on its transpose."""
    import sparsekit.factorizers.palm4msa as mod

    rng = np.random.default_rng(7)
    M = rng.standard_normal((24, 60))
    cons = [
        sparsekit.get_projection("constant", matrix=np.diag(rng.random(24) + 0.5)),
        splincol((24, 24), 2),
        splincol((24, 24), 2),
        sparsekit.get_projection("splincol", shape=(24, 60), k=2, k_col=2),
    ]
    monkeypatch.setattr(mod, "SPARSE_MIN_SIZE", 0)
    runs = {}
    for narrow in (False, True):
        monkeypatch.setattr(mod, "_narrow_pays", lambda F, q, shape, narrow=narrow: narrow)
        fz = sparsekit.get_factorizer("palm4msa", n_iter=20, tol=0, update_way=update_way)
        runs[narrow] = fz.factorize(M, cons)
    np.testing.assert_allclose(runs[True].objective, runs[False].objective, rtol=1e-9)
    np.testing.assert_allclose(
        runs[True].factors.toarray(), runs[False].factors.toarray(), atol=1e-10
    )
    assert runs[True].objective[-1] < 0.9 * runs[True].objective[0]  # it does fit


def test_narrow_order_is_chosen_for_a_wide_target_only():
    """The cost rule picks the narrow order where the left chain would act on more columns."""
    import sparsekit.factorizers.palm4msa as mod

    def factors(shapes):
        return [mod._Factor(np.eye(*s)) for s in shapes]

    wide = factors([(256, 256)] * 3 + [(256, 784)])
    assert mod._narrow_pays(wide, 2, (256, 784))
    tall = factors([(784, 256)] + [(256, 256)] * 3)
    assert not mod._narrow_pays(tall, 2, (784, 256))
    small = factors([(16, 16)] * 3)  # dense factors: no CSR, residual-first order
    assert not mod._narrow_pays(small, 1, (16, 16))


@pytest.mark.parametrize("exact_dim", [0, 64])
def test_step_size_norms_are_accurate_with_clustered_spectra_and_warm_starts(
    exact_dim, monkeypatch
):
    """The squared spectral norms in ``c = 1.001 λ² ‖L‖² ‖R‖²`` are accurate to 1e-6 even when
    the top singular values are clustered (near-orthogonal factors) and the warm start lies in
    an invariant subspace without the top singular vector (block-structured factors); by
    Lanczos (``EXACT_NORM_DIM = 0``) and by the exact path these sizes take by default."""
    from scipy.stats import ortho_group

    import sparsekit.factorizers.palm4msa as mod
    from sparsekit.factorizers.palm4msa import _sq_norm2

    monkeypatch.setattr(mod, "EXACT_NORM_DIM", exact_dim)

    rng = np.random.default_rng(5)
    # two blocks: singular values 1 (first block) and 1.0005 (second block)
    Q1, Q2 = ortho_group.rvs(16, random_state=1), ortho_group.rvs(16, random_state=2)
    A = np.zeros((32, 32))
    A[:16, :16] = Q1
    A[16:, 16:] = 1.0005 * Q2
    warm = np.zeros(32)
    warm[:16] = rng.standard_normal(16)
    vectors = {"k": warm / np.linalg.norm(warm)}
    assert _sq_norm2(A, "k", vectors) == pytest.approx(1.0005**2, rel=1e-6)
    # a slowly moving, clustered operator, warm-started call after call (as within Palm4MSA)
    U0 = ortho_group.rvs(64, random_state=3)
    vectors = {}
    for t in range(20):
        s = 1.0 + 1e-3 * rng.random(64)
        B = (U0 * s) @ ortho_group.rvs(64, random_state=10 + t)
        assert _sq_norm2(B, "k", vectors) == pytest.approx(np.linalg.norm(B, 2) ** 2, rel=1e-6)
