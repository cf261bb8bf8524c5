"""SparseFactorsDense / SparseFactorsConv2D: values against sparsekit's SparseFactors, a plain
Keras Conv2D and a NumPy patch-matrix convolution; gradients against finite differences; the
frozen supports; saving and loading."""

import subprocess
import sys

import numpy as np
import pytest

keras = pytest.importorskip("keras")
jax = pytest.importorskip("jax")

from sparsekit.linalg import SparseFactors  # noqa: E402
from sparsekit.nn import SparseFactorsConv2D, SparseFactorsDense  # noqa: E402
from sparsekit.nn.palminize import (  # noqa: E402
    factor_shapes,
    random_supports,
    reinit_values,
    splincol_constraints,
)


def sparse_factors(shape, Q, K, seed):
    """Random supports of level K with N(0, 1) values, float32."""
    rng = np.random.default_rng(seed)
    masks = random_supports(splincol_constraints(shape, Q, K), rng)
    return [np.where(m, rng.standard_normal(m.shape), 0).astype(np.float32) for m in masks]


def patches(X, S):
    """r_S (thesis Eq. 1.28): every S × S patch of X (N, H, W, C), stride 1, zero padding
    S // 2, each flattened in (row, column, channel) order -> (N, H, W, S·S·C)."""
    p = S // 2
    Xp = np.pad(X, ((0, 0), (p, p), (p, p), (0, 0)))
    N, H, W, C = X.shape
    out = np.empty((N, H, W, S * S * C), dtype=np.float64)
    for i in range(H):
        for j in range(W):
            out[:, i, j] = Xp[:, i : i + S, j : j + S, :].reshape(N, -1)
    return out


def test_dense_forward_equals_sparse_factors_product():
    factors = sparse_factors((20, 12), 3, 2, seed=0)
    bias = np.random.default_rng(1).standard_normal(12).astype(np.float32)
    layer = SparseFactorsDense(12, n_factors=3, sparsity=2, factors=factors, bias=bias)
    x = np.random.default_rng(2).standard_normal((7, 20)).astype(np.float32)
    got = np.asarray(layer(x))
    op = SparseFactors(factors, dtype=np.float32)  # S_1 S_2 S_3, a 20 x 12 operator
    want = (op.T @ x.T).T + bias
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(layer.get_kernel(), op.toarray(), rtol=1e-6, atol=1e-6)


def test_conv_forward_equals_keras_conv_and_numpy_patches():
    S, C, F = 3, 4, 6
    factors = sparse_factors((S * S * C, F), 2, 2, seed=3)
    bias = np.random.default_rng(4).standard_normal(F).astype(np.float32)
    layer = SparseFactorsConv2D(
        F, S, padding="same", n_factors=2, sparsity=2, factors=factors, bias=bias
    )
    X = np.random.default_rng(5).standard_normal((2, 5, 6, C)).astype(np.float32)
    got = np.asarray(layer(X))
    W = SparseFactors(factors, dtype=np.float32).toarray()  # (S·S·C) x F
    plain = keras.layers.Conv2D(F, S, padding="same")
    plain.build(X.shape)
    plain.kernel.assign(W.reshape(S, S, C, F))
    plain.bias.assign(bias)
    np.testing.assert_allclose(got, np.asarray(plain(X)), rtol=1e-6, atol=1e-6)
    # thesis Eq. 1.31 / 3.26: t(r_S(X) W) + b
    np.testing.assert_allclose(got, patches(X, S) @ W + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer.get_kernel(), W.reshape(S, S, C, F), rtol=1e-6, atol=1e-6)


def test_conv_strides_valid_padding_and_channels_first():
    factors = sparse_factors((3 * 3 * 2, 5), 2, 2, seed=6)
    X = np.random.default_rng(7).standard_normal((2, 7, 7, 2)).astype(np.float32)
    W = SparseFactors(factors, dtype=np.float32).toarray().reshape(3, 3, 2, 5)
    last = SparseFactorsConv2D(5, 3, strides=2, padding="valid", factors=factors, use_bias=False)
    plain = keras.layers.Conv2D(5, 3, strides=2, padding="valid", use_bias=False)
    plain.build(X.shape)
    plain.kernel.assign(W)
    np.testing.assert_allclose(np.asarray(last(X)), np.asarray(plain(X)), rtol=1e-6, atol=1e-6)
    assert last.compute_output_shape(X.shape) == tuple(last(X).shape)
    bias = np.arange(5, dtype=np.float32)
    first = SparseFactorsConv2D(
        5, 3, strides=2, data_format="channels_first", factors=factors, bias=bias
    )
    Xf = np.transpose(X, (0, 3, 1, 2))
    want = np.transpose(np.asarray(plain(X)), (0, 3, 1, 2)) + bias[:, None, None]
    # the same convolution in the other layout (XLA's CPU convolution: float32 rounding)
    np.testing.assert_allclose(np.asarray(first(Xf)), want, rtol=1e-5, atol=1e-5)


def _loss_and_grads(layer, x, r):
    """loss(V) = Σ r ⊙ layer(x) as a function of the trainable values, and its JAX gradient."""
    trainable = [v.value for v in layer.trainable_variables]
    fixed = [v.value for v in layer.non_trainable_variables]

    def loss(tv):
        out, _ = layer.stateless_call(tv, fixed, x)
        return jax.numpy.sum(out * r)

    return loss, trainable, jax.grad(loss)(trainable)


@pytest.mark.parametrize("kind", ["dense", "conv"])
def test_gradients_equal_finite_differences_and_vanish_off_support(kind):
    rng = np.random.default_rng(8)
    if kind == "dense":
        factors = sparse_factors((10, 6), 3, 2, seed=9)
        layer = SparseFactorsDense(6, n_factors=3, sparsity=2, factors=factors, activation="tanh")
        x = rng.standard_normal((5, 10)).astype(np.float32)
    else:
        factors = sparse_factors((3 * 3 * 2, 4), 2, 2, seed=9)
        layer = SparseFactorsConv2D(
            4, 3, padding="same", n_factors=2, sparsity=2, factors=factors, activation="tanh"
        )
        x = rng.standard_normal((2, 4, 4, 2)).astype(np.float32)
    y = layer(x)
    r = rng.standard_normal(y.shape).astype(np.float32)
    loss, params, grads = _loss_and_grads(layer, x, r)
    masks = layer.get_masks()
    h = 1e-2
    for i, (p, g) in enumerate(zip(params, grads)):
        g = np.asarray(g)
        if i < len(masks):  # the factors' values; the last parameter is the bias
            assert np.all(g[~masks[i]] == 0)  # only the non-zeros are trained
            idx = list(zip(*np.nonzero(masks[i])))
        else:
            idx = list(np.ndindex(g.shape))
        for j in [idx[k] for k in rng.choice(len(idx), min(6, len(idx)), replace=False)]:
            step = np.zeros(p.shape, np.float32)
            step[j] = h
            up = [q + step if k == i else q for k, q in enumerate(params)]
            down = [q - step if k == i else q for k, q in enumerate(params)]
            fd = (float(loss(up)) - float(loss(down))) / (2 * h)
            assert abs(fd - g[j]) <= 2e-3 * max(1.0, abs(g[j])), (i, j, fd, g[j])


def test_training_keeps_the_support_frozen():
    rng = np.random.default_rng(10)
    factors = sparse_factors((12, 8), 2, 2, seed=11)
    masks = [f != 0 for f in factors]
    model = keras.Sequential(
        [
            keras.Input((12,)),
            SparseFactorsDense(8, n_factors=2, sparsity=2, factors=factors),
            keras.layers.Dense(3),
        ]
    )
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    x = rng.standard_normal((64, 12)).astype(np.float32)
    y = rng.standard_normal((64, 3)).astype(np.float32)
    model.fit(x, y, epochs=3, batch_size=16, verbose=0)
    layer = model.layers[0]
    after = layer.get_factors()
    for f0, f1, m, mask_after in zip(factors, after, masks, layer.get_masks()):
        assert np.array_equal(mask_after, m)
        assert np.all(f1[~m] == 0)
        assert not np.allclose(f1[m], f0[m])  # the values on the support did train
    for v, m in zip(layer.factor_values, masks):  # the stored values off the support never move
        assert np.all(np.asarray(v.value)[~m] == 0)


def test_save_and_load_round_trip(tmp_path):
    model = keras.Sequential(
        [
            keras.Input((6, 6, 2)),
            SparseFactorsConv2D(
                4,
                3,
                padding="same",
                n_factors=3,
                sparsity=2,
                seed=1,
                activation="relu",
                name="sfconv",
            ),
            keras.layers.Flatten(),
            SparseFactorsDense(5, n_factors=2, sparsity=3, seed=2, name="sfdense"),
        ]
    )
    x = np.random.default_rng(12).standard_normal((3, 6, 6, 2)).astype(np.float32)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(model(x)))
    for name in ("sfconv", "sfdense"):
        a, b = model.get_layer(name), loaded.get_layer(name)
        assert type(b) is type(a)
        for m0, m1 in zip(a.get_masks(), b.get_masks()):
            assert np.array_equal(m0, m1)
    cfg = loaded.get_layer("sfconv").get_config()
    assert (cfg["filters"], cfg["kernel_size"], cfg["n_factors"], cfg["sparsity"]) == (
        4,
        (3, 3),
        3,
        2,
    )


def test_fresh_layer_draws_random_supports_of_its_level():
    layer = SparseFactorsDense(8, n_factors=3, sparsity=2, seed=0)
    layer.build((None, 24))
    cons = splincol_constraints((24, 8), 3, 2)
    assert [m.shape for m in layer.get_masks()] == factor_shapes((24, 8), 3)
    for m, p in zip(layer.get_masks(), cons):
        assert np.all(m.sum(axis=1) >= p.k) and np.all(m.sum(axis=0) >= p.k_col)
    rng = np.random.default_rng(0)  # one stream: the supports, then the values
    want = reinit_values(random_supports(cons, rng), rng)
    for got, w in zip(layer.get_factors(), want):
        np.testing.assert_array_equal(got, w)
    assert layer.n_nonzero_params == sum(int(m.sum()) for m in layer.get_masks()) + 8


def test_from_layer_dense_keeps_bias_and_activation():
    dense = keras.layers.Dense(6, activation="relu")
    dense.build((None, 16))
    new, fact = SparseFactorsDense.from_layer(dense, 2, 2, n_iter=30)
    x = np.random.default_rng(13).standard_normal((4, 16)).astype(np.float32)
    want = np.maximum(x.astype(np.float64) @ fact.product() + np.asarray(dense.bias.value), 0)
    np.testing.assert_allclose(np.asarray(new(x)), want, rtol=1e-5, atol=1e-5)
    assert new.name == dense.name and new.activation is keras.activations.relu


def test_import_sparsekit_does_not_import_keras():
    code = "import sys, sparsekit\nassert 'keras' not in sys.modules and 'jax' not in sys.modules\n"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_bad_input_is_rejected_with_the_argument_named():
    with pytest.raises(ValueError, match="n_factors"):
        SparseFactorsDense(4, n_factors=0)
    with pytest.raises(ValueError, match="sparsity"):
        SparseFactorsDense(4, sparsity=0)
    with pytest.raises(TypeError, match="units"):
        SparseFactorsDense(2.5)
    with pytest.raises(ValueError, match="sparsity=5 is larger"):
        SparseFactorsDense(4, sparsity=5).build((None, 10))
    with pytest.raises(ValueError, match="factors has 1 arrays but n_factors=2"):
        SparseFactorsDense(4, factors=[np.ones((10, 4))])
    with pytest.raises(ValueError, match=r"factor 0 must have shape \(10, 4\)"):
        SparseFactorsDense(4, factors=[np.ones((9, 4)), np.ones((4, 4))]).build((None, 10))
    with pytest.raises(ValueError, match="use_bias=False"):
        SparseFactorsDense(4, use_bias=False, bias=np.zeros(4))
    with pytest.raises(ValueError, match="padding"):
        SparseFactorsConv2D(4, 3, padding="causal")
    conv = keras.layers.Conv2D(4, 3)
    with pytest.raises(TypeError, match="keras.layers.Dense"):
        SparseFactorsDense.from_layer(conv, 2, 2)
    with pytest.raises(ValueError, match="not built"):
        SparseFactorsConv2D.from_layer(conv, 2, 2)
    with pytest.raises(TypeError, match="keras.layers.Conv2D"):
        SparseFactorsConv2D.from_layer(keras.layers.Dense(3), 2, 2)
    grouped = keras.layers.Conv2D(4, 3, groups=2)
    grouped.build((None, 5, 5, 2))
    with pytest.raises(ValueError, match="groups"):
        SparseFactorsConv2D.from_layer(grouped, 2, 1)


def test_layers_pass_keras_layer_contract(run_layer_test):
    """Keras' own harness: masks pass through the dense layer as through keras.layers.Dense
    (not through Conv2D, as keras.layers.Conv2D), three trainable weights (two factors'
    values and the bias) and two frozen masks, a training step, mixed_float16."""
    run_layer_test(
        SparseFactorsDense,
        {"units": 4, "n_factors": 2, "sparsity": 2, "seed": 0},
        input_shape=(2, 3, 8),
        expected_output_shape=(2, 3, 4),
        expected_num_trainable_weights=3,
        expected_num_non_trainable_weights=2,
        supports_masking=keras.layers.Dense(4).supports_masking,
    )
    run_layer_test(
        SparseFactorsConv2D,
        {"filters": 4, "kernel_size": 3, "n_factors": 2, "sparsity": 2, "seed": 0},
        input_shape=(2, 5, 5, 2),
        expected_output_shape=(2, 3, 3, 4),
        expected_num_trainable_weights=3,
        expected_num_non_trainable_weights=2,
        supports_masking=keras.layers.Conv2D(4, 3).supports_masking,
    )


def _masked_model(layer):
    tokens = keras.Input((5,), dtype="int32")
    h = keras.layers.Embedding(12, 8, mask_zero=True, name="embed")(tokens)
    h = layer(h)
    return keras.Model(tokens, keras.layers.GlobalAveragePooling1D()(h))


def test_dense_propagates_masks_like_keras_dense():
    """Oracle: the same masked model with a keras.layers.Dense of the same kernel and bias
    (the average then runs over the unmasked steps only)."""
    factors = sparse_factors((8, 6), 2, 2, seed=20)
    bias = np.random.default_rng(21).standard_normal(6).astype(np.float32)
    sparse = _masked_model(
        SparseFactorsDense(6, n_factors=2, sparsity=2, factors=factors, bias=bias)
    )
    dense = _masked_model(keras.layers.Dense(6))
    dense.get_layer("embed").set_weights(sparse.get_layer("embed").get_weights())
    dense.layers[2].set_weights([sparse.layers[2].get_kernel(), bias])
    tokens = np.array([[3, 4, 0, 0, 0], [5, 6, 7, 8, 0], [1, 2, 3, 4, 5]], dtype=np.int32)
    want = np.asarray(dense(tokens))
    np.testing.assert_allclose(np.asarray(sparse(tokens)), want, rtol=1e-5, atol=1e-6)


def test_built_layers_refuse_inputs_of_another_width():
    """Oracle: keras.layers.Dense / Conv2D, which refuse a symbolic or eager input whose
    feature (channel) dimension differs from the one they were built for."""
    dense, sparse = keras.layers.Dense(4), SparseFactorsDense(4, seed=0)
    for layer in (dense, sparse):
        layer.build((None, 8))
        for wrong in (keras.Input((6,)), np.ones((2, 6), np.float32)):
            with pytest.raises(ValueError, match=r"value 8.*\(\w+, 6\)"):
                layer(wrong)
    with pytest.raises(ValueError, match="width 8.*width 6"):
        sparse.compute_output_spec(keras.KerasTensor((None, 6)))
    assert sparse.compute_output_spec(keras.KerasTensor((None, 3, 8))).shape == (None, 3, 4)
    conv, sparse_conv = keras.layers.Conv2D(4, 3), SparseFactorsConv2D(4, 3, seed=0)
    for layer in (conv, sparse_conv):
        layer.build((None, 5, 5, 2))
        for wrong in (keras.Input((5, 5, 3)), np.ones((1, 5, 5, 3), np.float32)):
            with pytest.raises(ValueError, match=r"value 2.*\(\w+, 5, 5, 3\)"):
                layer(wrong)
