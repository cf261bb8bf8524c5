"""The frame of ``Solver.solve``: a subclass that supplies only its mathematics
(``_solve_residual`` / ``_solve_gram``) gets the validation, the layouts, the choice of form and
the warnings; a third-party solver written against the older protocol (its own ``solve``)
keeps working."""

import numbers
import warnings

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from sparsekit import Registry
from sparsekit.hookspecs import Registration
from sparsekit.plugins import hookimpl
from sparsekit.solvers import _cpu, fw as _fw, mp as _mp, omp as _omp
from sparsekit.solvers.base import Codes, PrematureStopWarning, Solver, SparseResult
from sparsekit.solvers.coder import SparseCoder
from sparsekit.validation import check_dictionary, check_positive, check_scalar, check_signals


def thresholding(D, y, k):
    """Simple thresholding: the k atoms most correlated with y, then least squares on them."""
    support = np.argsort(-np.abs(D.T @ y), kind="stable")[:k]
    x = np.zeros(D.shape[1])
    x[support] = np.linalg.lstsq(D[:, support], y, rcond=None)[0]
    return x, support


class Thresholding(Solver):
    """Simple thresholding on explicit arrays: only ``_solve_residual``."""

    name = "thresholding"

    def __init__(self, k=3):
        self.k = k
        self._check_params()

    def _check_params(self):
        return check_scalar(self.k, "k", kind=numbers.Integral, low=0)

    def _n_steps(self, problem):
        return problem.params

    def _codes(self, problem, corr):
        k = problem.n_steps
        out = Codes.empty(problem, k, by_support=True)
        out.support[:] = np.argsort(-np.abs(corr), axis=1, kind="stable")[:, :k]
        for j in range(problem.n_signals):
            atoms = problem.D[:, out.support[j]]
            out.values[j] = np.linalg.lstsq(atoms, problem.Yt[j], rcond=None)[0]
            out.residual_norms[j, 0] = np.sqrt(problem.y_sq[j])
            out.residual_norms[j, k] = np.linalg.norm(problem.Yt[j] - atoms @ out.values[j])
        out.n_iter[:] = k
        out.status[:] = _cpu.STOP_MAX_ITER
        return out

    def _solve_residual(self, problem):
        return self._codes(problem, problem.Yt @ problem.D)


class GramThresholding(Thresholding):
    """The same selection read from the Gram matrix's correlations: only ``_solve_gram``."""

    name = "gram-thresholding"
    calls = 0

    def _solve_gram(self, problem, gram):
        GramThresholding.calls += 1
        assert gram.shape == (problem.n_atoms, problem.n_atoms)
        return self._codes(problem, problem.correlations())

    _solve_residual = Solver._solve_residual


class BothForms(Thresholding):
    """Both forms and a ``precompute`` parameter: the frame chooses."""

    def __init__(self, k=3, precompute="auto"):
        self.precompute = precompute
        super().__init__(k)

    def _solve_gram(self, problem, gram):
        out = self._solve_residual(problem)
        out.extra["form"] = "gram"
        return out


@pytest.fixture
def problem():
    rng = np.random.default_rng(3)
    D = rng.standard_normal((20, 30))
    return D / np.linalg.norm(D, axis=0), rng.standard_normal((20, 4))


def test_a_plugin_solver_supplies_its_mathematics_and_gets_the_layouts(problem):
    D, Y = problem
    res = Thresholding(k=3).solve(D, Y)
    assert isinstance(res, SparseResult) and res.coef.shape == (30, 4)
    assert res.coef.flags.c_contiguous and res.support.shape == (3, 4)
    assert list(res.stop_reason) == ["max_iter"] * 4 and res.n_iter.tolist() == [3] * 4
    for j in range(4):
        x, support = thresholding(D, Y[:, j], 3)
        np.testing.assert_allclose(res.coef[:, j], x, rtol=1e-10, atol=1e-12)
        assert res.support[:, j].tolist() == support.tolist()
        np.testing.assert_allclose(
            res.residual_norms[[0, 3], j],
            [np.linalg.norm(Y[:, j]), np.linalg.norm(Y[:, j] - D @ x)],
        )
    one = Thresholding(k=3).solve(D, Y[:, 1])
    assert one.coef.shape == (30,) and one.n_iter == 3 and one.stop_reason == "max_iter"
    np.testing.assert_allclose(one.coef, res.coef[:, 1], rtol=1e-12, atol=1e-14)
    f32 = Thresholding(k=3).solve(D.astype(np.float32), Y.astype(np.float32))
    assert f32.coef.dtype == np.float32
    np.testing.assert_allclose(f32.coef, res.coef, rtol=1e-4, atol=1e-5)
    mixed = Thresholding(k=3).solve(D.astype(np.float32), Y)
    assert mixed.coef.dtype == np.float64


def test_a_plugin_solver_gets_the_input_and_parameter_checks(problem):
    D, Y = problem
    solver = Thresholding(k=3)
    Dz = D.copy()
    Dz[:, 7] = 0
    with pytest.raises(ValueError, match=r"zero column\(s\) \(atom index 7\)"):
        solver.solve(Dz, Y)
    with pytest.raises(ValueError, match="D has 20 rows .* but Y has 4"):
        solver.solve(D, Y.T)
    Yn = Y.copy()
    Yn[0, 0] = np.nan
    with pytest.raises(ValueError, match="Y"):
        solver.solve(D, Yn)
    with pytest.raises(ValueError, match="thresholding does not use a Gram matrix"):
        solver.solve(D, Y, gram=D.T @ D)
    assert not Thresholding.accepts_gram
    solver.k = -1  # set after construction: checked at the solve
    with pytest.raises(ValueError, match="k must be > 0"):
        solver.solve(D, Y)


class CountThresholding(Thresholding):
    """The shared parameters only (``n_nonzero_coefs``, ``tol``): the base class checks them."""

    def __init__(self, n_nonzero_coefs=None, tol=None):
        self.n_nonzero_coefs = n_nonzero_coefs
        self.tol = tol

    _check_params = Solver._check_params
    _n_steps = Solver._n_steps


def test_the_shared_parameters_are_checked_for_a_plugin(problem):
    D, Y = problem
    res = CountThresholding(n_nonzero_coefs=5).solve(D, Y)
    assert res.support.shape == (5, 4)
    assert CountThresholding().solve(D, Y).support.shape == (3, 4)  # 10% of 30 atoms
    # with tol alone, at most min(n_atoms, n_features) = 20 atoms (the rank of D)
    assert CountThresholding(tol=0.5).solve(D, Y).support.shape == (20, 4)
    with pytest.raises(
        ValueError,
        match=r"n_nonzero_coefs=31 is larger than the number of "
        r"atoms \(30",
    ):
        CountThresholding(n_nonzero_coefs=31).solve(D, Y)
    with pytest.raises(TypeError, match="n_nonzero_coefs must be an integer"):
        CountThresholding(n_nonzero_coefs=2.5).solve(D, Y)
    with pytest.raises(ValueError, match="tol must be >= 0.0"):
        CountThresholding(tol=-1.0).solve(D, Y)


def test_a_gram_only_solver_accepts_a_checked_gram(problem):
    D, Y = problem
    assert GramThresholding.accepts_gram
    ref = Thresholding(k=4).solve(D, Y)
    before = GramThresholding.calls
    for gram in (None, D.T @ D):
        res = GramThresholding(k=4).solve(D, Y, gram=gram)
        np.testing.assert_allclose(res.coef, ref.coef, rtol=1e-12, atol=1e-14)
    assert GramThresholding.calls == before + 2
    bad = D.T @ D
    bad[2, 2] = 5.0
    with pytest.raises(ValueError, match=r"gram\[2, 2\] = 5 but the squared norm of atom 2"):
        GramThresholding(k=4).solve(D, Y, gram=bad)
    coder = SparseCoder(D.T, solver=GramThresholding(k=4)).fit(Y.T)
    assert coder.gram_ is not None
    np.testing.assert_allclose(coder.transform(Y.T), ref.coef.T, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("precompute, form", [(True, "gram"), (False, None), ("auto", "gram")])
def test_a_solver_with_both_forms_chooses_by_precompute(problem, precompute, form):
    D, Y = problem
    # "auto": 30 atoms < 4 signals x 10 steps, so building D^T D pays
    res = BothForms(k=10, precompute=precompute).solve(D, Y)
    assert res.extra.get("form") == form
    assert BothForms(k=10, precompute=False).solve(D, Y, gram=D.T @ D).extra["form"] == "gram"
    with pytest.raises(ValueError, match="precompute must be True, False or 'auto'"):
        BothForms(k=3, precompute="sometimes").solve(D, Y)


def test_premature_stops_warn_at_the_callers_line(problem):
    D, Y = problem

    class Stops(Thresholding):
        premature_stops = (_cpu.STOP_DEPENDENT,)

        def _solve_residual(self, problem):
            out = super()._solve_residual(problem)
            out.status[1] = _cpu.STOP_DEPENDENT
            return out

    with pytest.warns(
        PrematureStopWarning, match="THRESHOLDING ended prematurely for 1 signal"
    ) as rec:
        res = Stops(k=2).solve(D, Y)
    assert rec[0].filename == __file__
    assert res.stop_reason[1] == "linear_dependence"
    with pytest.warns(PrematureStopWarning):
        Stops(k=2).solve(D, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Thresholding(k=2).solve(D, Y)  # no premature_stops: no warning


def test_a_subclass_without_mathematics_is_a_type_error(problem):
    class Nothing(Solver):
        name = "nothing"

    with pytest.raises(TypeError, match="supplies neither _solve_gram"):
        Nothing().solve(*problem)


# -- a third-party solver written against the protocol before the frame: it overrides solve --
class OldStyleFISTA(Solver):
    """The example solver of docs/plugins.md as it was written before Solver.solve became the
    frame: it validates, transposes and builds its SparseResult itself."""

    name = "fista"

    def __init__(self, alpha=1.0, max_iter=1000, tol=1e-8):
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self._check_params()

    def _check_params(self):
        check_positive(self.alpha, "alpha")
        check_scalar(self.max_iter, "max_iter", kind=numbers.Integral, low=1, low_inclusive=True)
        check_positive(self.tol, "tol")

    def solve(self, D, Y, *, gram=None) -> SparseResult:
        self._check_params()
        D, _ = check_dictionary(D)
        D, Yt, one_d = check_signals(Y, D)
        Y = Yt.T
        dtype = D.dtype
        step = 1.0 / np.linalg.norm(D, 2) ** 2
        thresh = dtype.type(self.alpha * step)
        n_atoms, n_sig = D.shape[1], Y.shape[1]
        x = np.zeros((n_atoms, n_sig), dtype=dtype)
        z, t = x.copy(), 1.0
        active = np.ones(n_sig, dtype=bool)
        n_iter = np.zeros(n_sig, dtype=np.int64)
        res = np.full((self.max_iter + 1, n_sig), np.nan, dtype=dtype)
        res[0] = np.linalg.norm(Y, axis=0)
        for k in range(self.max_iter):
            cols = np.flatnonzero(active)
            if cols.size == 0:
                break
            grad_step = z[:, cols] - dtype.type(step) * (D.T @ (D @ z[:, cols] - Y[:, cols]))
            x_new = np.sign(grad_step) * np.maximum(np.abs(grad_step) - thresh, 0)
            t_new = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
            z[:, cols] = x_new + dtype.type((t - 1.0) / t_new) * (x_new - x[:, cols])
            moved = np.abs(x_new - x[:, cols]).max(axis=0)
            x[:, cols], t = x_new, t_new
            n_iter[cols] += 1
            res[k + 1, cols] = np.linalg.norm(Y[:, cols] - D @ x_new, axis=0)
            active[cols[moved <= self.tol * np.maximum(1.0, np.abs(x_new).max(axis=0))]] = False
        stop = np.where(active, "max_iter", "tol").astype(object)
        res = res[: int(n_iter.max()) + 1]
        order = np.argsort(-np.abs(x), axis=0, kind="stable")
        n_nz = (x != 0).sum(axis=0)
        support = np.where(np.arange(n_atoms)[:, None] < n_nz, order, -1)[: max(int(n_nz.max()), 1)]
        if one_d:
            return SparseResult(x[:, 0], support[:, 0], res[:, 0], int(n_iter[0]), stop[0])
        return SparseResult(x, support, res, n_iter, stop)


class _OldStylePlugin:
    @hookimpl
    def sparsekit_solvers(self):
        yield Registration("old-fista", OldStyleFISTA, summary="FISTA, its own solve")


def test_a_solver_overriding_solve_keeps_working(problem):
    D, Y = problem
    reg = Registry(entry_points=False)
    reg.register(_OldStylePlugin(), name="old-style")
    solver = reg.get("solver", "old-fista", alpha=0.5, max_iter=20000, tol=1e-12)
    assert not solver.accepts_gram
    res = solver.solve(D, Y)
    assert list(res.stop_reason) == ["tol"] * 4
    for j in range(4):
        ref = (
            Lasso(alpha=0.5 / 20, fit_intercept=False, tol=1e-14, max_iter=100_000)
            .fit(D, Y[:, j])
            .coef_
        )
        np.testing.assert_allclose(res.coef[:, j], ref, atol=1e-7)
    codes = SparseCoder(
        D.T,
        solver="old-fista",
        registry=reg,
        solver_params={"alpha": 0.5, "max_iter": 20000, "tol": 1e-12},
    )
    np.testing.assert_allclose(codes.fit_transform(Y.T), res.coef.T, atol=1e-12)


@pytest.mark.parametrize(
    "solver",
    [
        lambda tol: _omp.OMP(n_nonzero_coefs=2, tol=tol, precompute=False),
        lambda tol: _mp.MatchingPursuit(max_iter=3, tol=tol, precompute=False),
        lambda tol: _fw.FrankWolfe(beta=10.0, max_iter=5, tol=tol),
    ],
)
def test_tol_equal_to_the_signal_energy_stops_before_the_first_step(solver):
    """``||y||^2 <= tol`` is met by ``x = 0`` at the boundary ``||y||^2 == tol``: no atom.

    Oracle: the stopping rule ``||y - D x||^2 <= tol`` evaluated at ``x = 0`` by hand, with
    ``||y||^2 = 1 + 4 + 4 = 9`` exact in binary; just below (``tol = 8.5``) one step runs."""
    D = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]
    y = np.array([1.0, 2.0, 2.0])
    res = solver(9.0).solve(D, y)
    assert res.n_iter == 0 and res.stop_reason == "tol"
    np.testing.assert_array_equal(res.coef, 0.0)
    assert solver(8.5).solve(D, y).n_iter >= 1
