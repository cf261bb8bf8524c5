"""palminize (supports, variants, initialisation rule), compress (report against NumPy, parameter
counts by hand, eligibility, errors) and the ``compress`` experiment at tiny sizes."""

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from sparsekit.factorizers.palm4msa import Palm4MSA  # noqa: E402
from sparsekit.nn import compress, count_parameters  # noqa: E402
from sparsekit.nn.palminize import (  # noqa: E402
    factor_shapes,
    palminize,
    random_supports,
    reinit_values,
    splincol_constraints,
)
from sparsekit.nn.sparse_factors import SparseFactorsConv2D, SparseFactorsDense  # noqa: E402
from sparsekit.projections import RowColumnTopK  # noqa: E402


def _levels_hold(masks, constraints):
    """Every row keeps >= k, every column >= k_col, and the union is at most k·r + k_col·c."""
    for m, p in zip(masks, constraints):
        r, c = m.shape
        assert m.shape == p.shape
        assert np.all(m.sum(axis=1) >= p.k) and np.all(m.sum(axis=0) >= p.k_col)
        assert m.sum() <= p.k * r + p.k_col * c


def test_factor_shapes_and_splincol_levels():
    assert factor_shapes((40, 12), 1) == [(40, 12)]
    assert factor_shapes((40, 12), 3) == [(40, 12), (12, 12), (12, 12)]
    assert factor_shapes((9, 16), 2) == [(9, 9), (9, 16)]
    cons = splincol_constraints((40, 12), 3, 2)
    # budgets K·D (left-most), K·A (inner), K·F (right-most), A = 12 (module notes)
    assert [(p.k, p.k_col) for p in cons] == [(2, 6), (2, 2), (2, 2)]
    assert [(p.k, p.k_col) for p in splincol_constraints((9, 16), 2, 3)] == [(3, 3), (5, 3)]


@pytest.mark.parametrize("factorizer", ["palm4msa", "hierarchical-palm4msa"])
def test_palm_variant_is_palm4msa_with_the_scale_folded_in(factorizer):
    W = np.random.default_rng(0).standard_normal((30, 10))
    fact = palminize(W, 2, 2, factorizer=factorizer, n_iter=40)
    cons = splincol_constraints(W.shape, 2, 2)
    _levels_hold(fact.masks, cons)
    P = fact.factors[0].astype(np.float64) @ fact.factors[1].astype(np.float64)
    assert fact.relative_error == pytest.approx(np.sum((W - P) ** 2) / np.sum(W**2), rel=1e-12)
    if factorizer == "palm4msa":
        ref = Palm4MSA(n_iter=40).factorize(W, cons)
        np.testing.assert_allclose(P, ref.factors.toarray(), rtol=1e-5, atol=1e-6)
        assert fact.relative_error == pytest.approx(ref.relative_error**2, rel=1e-5)


def test_reinit_keeps_palm_supports_and_random_keeps_the_levels():
    W = np.random.default_rng(1).standard_normal((48, 16))
    palm = palminize(W, 3, 2, n_iter=30)
    reinit = palminize(W, 3, 2, init="reinit", n_iter=30, random_state=0)
    rand = palminize(W, 3, 2, init="random", random_state=0)
    cons = splincol_constraints(W.shape, 3, 2)
    for a, b in zip(palm.masks, reinit.masks):
        assert np.array_equal(a, b)
    _levels_hold(reinit.masks, cons)
    _levels_hold(rand.masks, cons)
    assert any(not np.array_equal(a, b) for a, b in zip(palm.masks, rand.masks))
    for f, m in zip(reinit.factors + rand.factors, reinit.masks + rand.masks):
        assert np.all(f[~m] == 0) and np.all(f[m] != 0)
    assert rand.extra == {} and reinit.extra["n_iter"] >= 1


def test_reinit_variances_follow_he_then_xavier_with_nnz_fans():
    # 2 non-zeros in every row (fan-out 2), 8 in every column (fan-in 8, the (in, out) layout)
    r, c = 400, 100
    mask = np.zeros((r, c), bool)
    rows = np.arange(r)
    mask[rows, rows % c] = True
    mask[rows, (rows + 37) % c] = True
    assert set(mask.sum(axis=1)) == {2} and set(mask.sum(axis=0)) == {8}
    vals = reinit_values([mask, mask], random_state=0, dtype=np.float64)
    he, xavier = vals[0][mask], vals[1][mask]
    # He: 2 / fan_in = 0.25; Xavier: 2 / (fan_in + fan_out) = 0.2; 800 draws each
    assert he.var() == pytest.approx(0.25, rel=0.12)
    assert xavier.var() == pytest.approx(0.2, rel=0.12)
    assert abs(he.mean()) < 0.06


def test_palminize_errors():
    W = np.ones((6, 4))
    with pytest.raises(ValueError, match="n_factors"):
        palminize(W, 0, 2)
    with pytest.raises(ValueError, match="sparsity=5 is larger"):
        palminize(W, 2, 5)
    with pytest.raises(ValueError, match="sparsity"):
        palminize(W, 2, 0)
    with pytest.raises(ValueError, match="init"):
        palminize(W, 2, 2, init="zeros")
    with pytest.raises(ValueError, match="factorizer"):
        palminize(W, 2, 2, factorizer="svd")
    with pytest.raises(ValueError, match="all zeros"):
        palminize(np.zeros((6, 4)), 2, 2)


def small_model(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential(
        [
            keras.Input((6, 6, 1)),
            keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="conv"),
            keras.layers.MaxPooling2D(2, name="pool"),
            keras.layers.Flatten(name="flat"),
            keras.layers.Dense(12, activation="relu", name="hidden"),
            keras.layers.Dense(3, name="out"),
        ]
    )


@pytest.fixture(scope="module")
def trained():
    rng = np.random.default_rng(0)
    x = rng.random((48, 6, 6, 1)).astype(np.float32)
    y = rng.integers(0, 3, 48)
    model = small_model()
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(True))
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    return model, x


def test_compress_report_matches_numpy_and_hand_counts(trained):
    model, x = trained
    small, report = compress(model, 2, 2, n_iter=30)
    assert [r.layer for r in report] == ["conv", "hidden", "out"]
    # K = 2 < min side for conv (9 x 8) and hidden (72 x 12); out is 12 x 3: 2 < 3, replaced
    assert [r.replaced for r in report] == [True, True, True]
    for r in report:
        old, new = model.get_layer(r.layer), small.get_layer(r.layer)
        W = np.asarray(old.kernel.value, dtype=np.float64).reshape(r.shape)
        P = new.get_factors()[0].astype(np.float64) @ new.get_factors()[1].astype(np.float64)
        assert r.relative_error == pytest.approx(np.sum((W - P) ** 2) / np.sum(W**2), rel=1e-9)
        n_out = r.shape[1]
        assert r.params_before == r.shape[0] * n_out + n_out  # kernel + bias, by hand
        nnz = sum(int(np.count_nonzero(m)) for m in new.get_masks())
        assert r.params_after == nnz + n_out
    assert [r.params_before for r in report] == [9 * 8 + 8, 72 * 12 + 12, 12 * 3 + 3]
    assert count_parameters(model) == 80 + 876 + 39 == model.count_params()
    assert count_parameters(small) == sum(r.params_after for r in report)
    # the compressed network computes t(r_S(X) S_1 S_2) ... in NumPy
    conv, hidden, out = (small.get_layer(n) for n in ("conv", "hidden", "out"))

    def prod(layer):
        return np.linalg.multi_dot([f.astype(np.float64) for f in layer.get_factors()])

    Xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    pt = np.stack(
        [Xp[:, i : i + 3, j : j + 3, :].reshape(len(x), -1) for i in range(6) for j in range(6)],
        axis=1,
    ).reshape(len(x), 6, 6, 9)
    h = np.maximum(pt @ prod(conv) + np.asarray(conv.bias.value), 0)
    h = h.reshape(len(x), 3, 2, 3, 2, 8).max(axis=(2, 4)).reshape(len(x), -1)
    h = np.maximum(h @ prod(hidden) + np.asarray(hidden.bias.value), 0)
    want = h @ prod(out) + np.asarray(out.bias.value)
    np.testing.assert_allclose(np.asarray(small(x)), want, rtol=1e-4, atol=1e-4)


def test_compress_keeps_ineligible_layers_and_the_original_model(trained):
    model, x = trained
    before = np.asarray(model(x))
    small, report = compress(model, 3, 8, init="reinit", n_iter=10)
    rows = {r.layer: r for r in report}
    assert not rows["conv"].replaced and "min(9, 8)" in rows["conv"].reason
    assert rows["hidden"].replaced and not rows["out"].replaced
    assert isinstance(small.get_layer("hidden"), SparseFactorsDense)
    assert type(small.get_layer("conv")) is keras.layers.Conv2D
    np.testing.assert_array_equal(
        np.asarray(small.get_layer("conv").kernel.value),
        np.asarray(model.get_layer("conv").kernel.value),
    )
    assert rows["out"].params_after == rows["out"].params_before == 39
    # fine-tuning the compressed model leaves the original untouched (no shared buffers)
    small.compile(optimizer="sgd", loss="mse")
    small.fit(x, np.zeros((len(x), 3), np.float32), epochs=1, verbose=0)
    np.testing.assert_array_equal(np.asarray(model(x)), before)
    only, report = compress(model, 2, 2, init="random", layers=["conv"])
    assert [r.replaced for r in report] == [True, False, False]
    assert isinstance(only.get_layer("conv"), SparseFactorsConv2D)
    assert report[1].reason == "not in layers"


def test_compress_round_trips_through_keras_file(trained, tmp_path):
    model, x = trained
    small, _ = compress(model, 2, 2, n_iter=10)
    small.save(tmp_path / "small.keras")
    loaded = keras.models.load_model(tmp_path / "small.keras")
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(small(x)))
    assert count_parameters(loaded) == count_parameters(small)


def test_compress_functional_model_and_subclassed_dense_left_alone():
    class MyDense(keras.layers.Dense):
        pass

    inp = keras.Input((10,))
    h = keras.layers.Dense(8, name="a")(inp)
    out = MyDense(6, name="b")(h)
    model = keras.Model(inp, out)
    small, report = compress(model, 2, 2, n_iter=10)
    assert [r.layer for r in report] == ["a"]
    assert isinstance(small.get_layer("a"), SparseFactorsDense)
    assert type(small.get_layer("b")) is MyDense


def test_compress_keeps_a_masked_model_masked():
    """Oracle: the uncompressed model (keras.layers.Dense propagates the mask to the pooling)
    with its Dense kernel set to the product of the compressed layer's factors."""
    keras.utils.set_random_seed(1)
    model = keras.Sequential(  # rebuilt layer by layer: each passes the mask on, or not
        [
            keras.Input((5,), dtype="int32"),
            keras.layers.Embedding(12, 8, mask_zero=True),
            keras.layers.Dense(6, name="hidden"),
            keras.layers.GlobalAveragePooling1D(),
        ]
    )
    small, report = compress(model, 2, 2, n_iter=20)
    assert report[0].replaced
    layer = small.get_layer("hidden")
    model.get_layer("hidden").kernel.assign(layer.get_kernel())
    x = np.array([[3, 4, 0, 0, 0], [5, 6, 7, 8, 0], [1, 2, 3, 4, 5]], dtype=np.int32)
    np.testing.assert_allclose(np.asarray(small(x)), np.asarray(model(x)), rtol=1e-5, atol=1e-6)


def test_random_state_seeds_the_random_supports(trained):
    """Oracle: determinism of numpy.random.default_rng(seed), the documented stream: the same
    seed gives the same supports, another seed others."""
    model, _ = trained

    def masks(seed):
        small, _ = compress(model, 2, 2, init="random", random_state=seed)
        return [m for n in ("conv", "hidden") for m in small.get_layer(n).get_masks()]

    first, again, other = masks(0), masks(0), masks(1)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_count_parameters_walks_nested_models():
    """Oracle: counts by hand, the non-zeros of the nested sparse layer's supports plus its
    bias, and the outer Dense layer's kernel plus bias."""
    inner = keras.Sequential(
        [keras.Input((10,)), SparseFactorsDense(6, n_factors=2, sparsity=2, seed=0)]
    )
    model = keras.Sequential([keras.Input((10,)), inner, keras.layers.Dense(3)])
    nnz = sum(int(np.count_nonzero(m)) for m in inner.layers[0].get_masks())
    assert nnz < 10 * 6 + 6 * 6
    assert count_parameters(model) == nnz + 6 + 6 * 3 + 3


def test_compress_errors(trained):
    model, _ = trained
    with pytest.raises(ValueError, match="n_factors"):
        compress(model, 0, 2)
    with pytest.raises(ValueError, match="sparsity"):
        compress(model, 2, 0)
    with pytest.raises(TypeError, match="keras.Model"):
        compress(keras.layers.Dense(3), 2, 2)
    with pytest.raises(ValueError, match=r"\['nope'\], which are not layers"):
        compress(model, 2, 2, layers=["nope"])
    with pytest.raises(TypeError, match="not a string"):
        compress(model, 2, 2, layers="conv")
    with pytest.raises(ValueError, match="init"):
        compress(model, 2, 2, init="he")

    class Sub(keras.Model):
        def __init__(self):
            super().__init__()
            self.d = keras.layers.Dense(3)

        def call(self, x):
            return self.d(x)

    sub = Sub()
    sub(np.ones((1, 4), np.float32))
    with pytest.raises(ValueError, match="subclassed"):
        compress(sub, 2, 2)
    with pytest.raises(ValueError, match="not built"):
        compress(keras.Sequential([keras.layers.Dense(3)]), 2, 2)


def test_random_supports_are_splincol_of_gaussians():
    cons = [RowColumnTopK((10, 6), 2, 3), RowColumnTopK((6, 6), 2)]
    got = random_supports(cons, np.random.default_rng(5))
    rng = np.random.default_rng(5)
    for m, p in zip(got, cons):
        G = rng.standard_normal(p.shape)
        A = np.abs(G)
        rows = A >= np.sort(A, axis=1)[:, [-p.k]]
        cols = A >= np.sort(A, axis=0)[[-p.k_col], :]
        assert np.array_equal(m, rows | cols)


def test_experiment_entry_point_at_tiny_sizes():
    from sklearn.datasets import load_digits

    from sparsekit.experiments import nn_compress as exp
    from sparsekit.run.tasks import TaskContext

    digits = load_digits()
    data = {"X": digits.data[:200], "y": digits.target[:200]}
    params = {
        "n_factors": 2,
        "sparsity": 2,
        "epochs": 1,
        "finetune_epochs": 1,
        "select_lr": False,
        "palm_iter": 5,
        "batch_size": 64,
        "experiment": "compress",
    }
    rows = exp.run_compress(TaskContext(data, {}, params, seed=0))
    assert [r["method"] for r in rows] == ["base", "palm", "reinit", "random"]
    base = rows[0]
    assert base["params"] == exp.lenet((8, 8, 1), 10).count_params() == 15466
    assert base["params_compressed"] == base["params"]  # K = 2: all five layers replaced
    for r in rows:
        assert set(r) == set(base) and 0 <= r["accuracy"] <= 1
        assert (r["n_factors"], r["sparsity"]) == (2, 2)
    palm, reinit, rand = rows[1:]
    assert palm["params"] == reinit["params"] < base["params"]  # same supports
    assert palm["n_replaced"] == 5 and palm["mean_error"] < reinit["mean_error"]
    # the three variants share one compiled model: a variant alone (its own model) trains the
    # same way
    alone = exp.run_compress(TaskContext(data, {}, {**params, "method": "random"}, seed=0))
    assert alone[1] | {"fit_time": 0} == rand | {"fit_time": 0}
    # K = 14 leaves conv1 (9 x 16) and out (32 x 10) dense; the base network is reused
    params.update(sparsity=14, method="palm", finetune_epochs=1, select_lr=True, select_epochs=1)
    rows14 = exp.run_compress(TaskContext(data, {}, params, seed=0))
    assert [r["method"] for r in rows14] == ["base", "palm"]
    assert rows14[0]["accuracy"] == base["accuracy"]
    assert rows14[1]["n_replaced"] == 3 and rows14[1]["lr"] in exp.LR_GRID
    assert rows14[0]["params_compressed"] == 4640 + 8256 + 2080
    with pytest.raises(ValueError, match="method"):
        exp.run_compress(TaskContext(data, {}, {**params, "method": "prune"}, seed=0))


def test_compress_is_the_function_after_its_module_is_imported():
    import sparsekit.nn
    from sparsekit.nn import compression

    assert sparsekit.nn.compress is compression.compress is compress


def test_compress_is_an_experiment_of_the_nn_task():
    """The spec examples/specs/nn_compress.toml runs in tests/run/test_runner.py."""
    from sparsekit.experiments import nn, nn_compress
    from sparsekit.run.tasks import get_task

    assert nn.experiment("compress") is nn_compress.COMPRESS
    assert nn_compress.COMPRESS.run is nn_compress.run_compress
    assert set(nn_compress.PARAMS) <= set(get_task("nn").params)


def _digits(n):
    from sklearn.datasets import load_digits

    digits = load_digits()
    return digits.data[:n], digits.target[:n]


def test_experiment_images_split_and_evaluate_against_numpy_and_sklearn():
    """Oracles: the digits' grey levels run from 0 to 16 (scikit-learn's description), so the
    images are the pixels / 16; the split is the permutation of ``default_rng`` cut by hand;
    accuracy and cross-entropy are scikit-learn's ``accuracy_score`` and ``log_loss`` of the
    network's predicted probabilities."""
    from sklearn.metrics import accuracy_score, log_loss

    from sparsekit.experiments import nn_compress as exp

    X, y = _digits(40)
    assert X.max() == 16
    imgs = exp.images(X)
    np.testing.assert_allclose(imgs, X.reshape(40, 8, 8, 1) / 16, rtol=1e-6)
    perm = np.random.default_rng(3).permutation(40)
    tr, va, te = exp.split(40, np.random.default_rng(3), 0.25, 0.15)
    n_test, n_val = int(0.25 * 40), int(0.15 * 30)
    np.testing.assert_array_equal(te, perm[:n_test])
    np.testing.assert_array_equal(va, perm[n_test : n_test + n_val])
    np.testing.assert_array_equal(tr, perm[n_test + n_val :])
    keras.utils.set_random_seed(0)
    model = exp.lenet((8, 8, 1), 10)
    prob = np.asarray(model.predict(imgs, verbose=0), dtype=np.float64)
    acc, loss = exp.evaluate(model, imgs, y)
    assert acc == pytest.approx(accuracy_score(y, prob.argmax(axis=1)))
    assert loss == pytest.approx(log_loss(y, prob, labels=range(10)), rel=1e-5)


def test_experiment_training_steps_rate_fresh_state_and_order_seed():
    """Oracles: RMSProp's step count is ceil(epochs · n / batch_size) and starts from zero on
    each call (a fresh optimizer state); its rate is the one asked for; the same seed gives
    the same weights, another seed another order and other weights."""
    from sparsekit.experiments import nn_compress as exp

    X, y = _digits(30)
    data = ((exp.images(X), y), None, None)
    keras.utils.set_random_seed(0)
    model = exp.lenet((8, 8, 1), 10)
    exp._compile(model, 1e-3)
    start = [np.array(w.value, copy=True) for w in model.weights]

    def train(seed):
        exp._train(model, data, start, 0.01, 2, 8, seed)
        assert int(model.optimizer.iterations) == int(np.ceil(2 * 30 / 8))
        assert float(model.optimizer.learning_rate) == pytest.approx(0.01)
        return np.concatenate([np.ravel(w.value) for w in model.weights])

    a = train(1)
    np.testing.assert_allclose(train(1), a, rtol=1e-5, atol=1e-6)
    assert not np.allclose(train(2), a, rtol=1e-5, atol=1e-6)


def test_finetune_selects_on_validation_ties_to_largest_and_runs_finetune_epochs(monkeypatch):
    """Oracle: the thesis' protocol (§3.4.4.3): the rate is chosen by the validation accuracy
    after ``select_epochs`` epochs, a tie going to the largest rate; then ``finetune_epochs``
    epochs (``epochs`` when not given)."""
    from sparsekit.experiments import nn_compress as exp

    trained, scored = [], []
    scores = iter([0.5, 0.5, 0.5, 0.1, 0.3, 0.3])
    monkeypatch.setattr(exp, "_train", lambda m, d, w, lr, e, b, s: trained.append((lr, e, b)))
    monkeypatch.setattr(exp, "accuracy", lambda m, X, y: scored.append(X) or next(scores))
    data = ((np.zeros(1), None), (np.ones(1), None), (np.full(1, 2.0), None))
    p = {**exp.PARAMS, "epochs": 7, "finetune_epochs": 3, "select_epochs": 2, "batch_size": 5}
    assert exp._finetune(None, [], data, p, 0) == 1e-3
    assert trained == [(lr, 2, 5) for lr in exp.LR_GRID] + [(1e-3, 3, 5)]
    assert all(X is data[1][0] for X in scored)
    trained.clear()
    assert exp._finetune(None, [], data, {**p, "finetune_epochs": None}, 0) == 1e-4
    assert trained[-1] == (1e-4, 7, 5)
    assert exp._finetune(None, [], data, {**p, "select_lr": False, "lr": 0.2}, 0) == 0.2


def test_experiment_rows_from_the_networks_and_base_retrained_per_setting(monkeypatch):
    """Oracles: scikit-learn's accuracy and cross-entropy of the networks' own predictions on
    the test images (the permutation of ``default_rng(seed)`` cut by hand): right after
    compression for ``accuracy_before``, after fine-tuning for ``accuracy`` and ``loss``; the
    errors are the mean and max of the compressed layers' errors; another batch size trains
    another base network."""
    from sklearn.metrics import accuracy_score, log_loss

    import sparsekit.nn.compression as compression
    from sparsekit.experiments import nn_compress as exp
    from sparsekit.run.tasks import TaskContext

    seen = {}
    real = compression.compress

    def spy(model, Q, K, **kw):
        out, report = real(model, Q, K, **kw)
        seen.update(kw=kw, model=out, report=report)
        seen["start"] = [np.array(w.value, copy=True) for w in out.weights]
        return out, report

    monkeypatch.setattr(compression, "compress", spy)
    X, y = _digits(120)
    data = {"X": X, "y": y}
    params = {
        "method": "random",
        "epochs": 1,
        "finetune_epochs": 2,
        "select_lr": False,
        "lr": 1e-2,
        "palm_iter": 4,
        "batch_size": 64,
    }
    rows = exp.run_compress(TaskContext(data, {}, params, seed=3))
    assert seen["kw"]["random_state"] == 3 and seen["kw"]["n_iter"] == 4
    te = np.random.default_rng(3).permutation(120)[: int(0.25 * 120)]
    Xte, yte = X[te].reshape(-1, 8, 8, 1) / 16, y[te]
    model = seen["model"]
    prob = np.asarray(model.predict(Xte, verbose=0), dtype=np.float64)
    row = rows[1]
    assert row["accuracy"] == pytest.approx(accuracy_score(yte, prob.argmax(axis=1)))
    assert row["loss"] == pytest.approx(log_loss(yte, prob, labels=range(10)), rel=1e-4)
    for var, w in zip(model.weights, seen["start"]):
        var.assign(w)
    before = np.asarray(model.predict(Xte, verbose=0)).argmax(axis=1)
    assert row["accuracy_before"] == pytest.approx(accuracy_score(yte, before))
    errors = [r.relative_error for r in seen["report"] if r.replaced]
    assert row["mean_error"] == pytest.approx(np.mean(errors))
    assert row["max_error"] == pytest.approx(np.max(errors))
    other = exp.run_compress(TaskContext(data, {}, {**params, "batch_size": 32}, seed=3))
    assert other[0]["loss"] != pytest.approx(rows[0]["loss"], rel=1e-6)
