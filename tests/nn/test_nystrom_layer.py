"""The adaptive Nyström layer (:class:`sparsekit.nn.NystromLayer`) on Keras' JAX backend.

Oracles: scikit-learn's pairwise kernels (forward pass), central finite differences in float64
(gradients), ``numpy.linalg.pinv`` (the Nyström approximation K_XL K_LL^+ K_LX).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import jax  # installed with keras by the nn extra (the tests run on its backend)
import keras
import numpy as np
import pytest
from sklearn.metrics import pairwise

import sparsekit
from sparsekit.nn import NystromLayer
from sparsekit.nn._landmarks import class_shares, select_landmarks

ROOT = Path(__file__).resolve().parents[2]

#: (sparsekit kernel, scikit-learn's formula with the same constants)
KERNELS = {
    "linear": (sparsekit.get_kernel("linear"), pairwise.linear_kernel),
    "polynomial": (
        sparsekit.get_kernel("polynomial", degree=3, gamma=0.5, coef0=1.0),
        lambda A, B: pairwise.polynomial_kernel(A, B, degree=3, gamma=0.5, coef0=1.0),
    ),
    "rbf": (
        sparsekit.get_kernel("rbf", gamma=0.7),
        lambda A, B: pairwise.rbf_kernel(A, B, gamma=0.7),
    ),
    "laplacian": (
        sparsekit.get_kernel("laplacian", gamma=0.3),
        lambda A, B: pairwise.laplacian_kernel(A, B, gamma=0.3),
    ),
    "additive-chi2": (sparsekit.get_kernel("additive-chi2"), pairwise.additive_chi2_kernel),
    "chi2": (
        sparsekit.get_kernel("chi2", gamma=0.8),
        lambda A, B: pairwise.chi2_kernel(A, B, gamma=0.8),
    ),
}
PSD = ["linear", "polynomial", "rbf", "laplacian", "chi2"]


def _np(t):
    return np.asarray(keras.ops.convert_to_numpy(t), dtype=np.float64)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = rng.random((40, 5)) + 0.05  # positive (chi2), away from the kinks of |.|
    y = np.repeat([0, 1, 2, 3], 10)
    return x, y


def test_import_sparsekit_imports_no_keras():
    code = (
        "import sys, sparsekit\n"
        "sparsekit.get_kernel('rbf')\n"
        "from sparsekit.registry import default_registry\n"
        "default_registry().get('task', 'nn')\n"
        "import sparsekit.experiments.nn, sparsekit.experiments.nn_nystrom\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('keras', 'jax', 'tensorflow', 'torch')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_import_selects_jax_only_where_keras_would_fail(tmp_path):
    code = (
        "import os, sparsekit.nn, keras\n"
        "print(os.environ.get('KERAS_BACKEND'), keras.backend.backend())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    env.update(PYTHONPATH=str(ROOT), KERAS_HOME=str(tmp_path))
    for configured, expected in (("tensorflow-not-installed", "jax jax"), ("jax", "None jax")):
        (tmp_path / "keras.json").write_text(json.dumps({"backend": configured}))
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().splitlines()[-1] == expected


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_vectors_equal_the_kernel_in_float32(name, data):
    x, y = data
    kernel, reference = KERNELS[name]
    layer = NystromLayer.from_data(x, 8, kernel=kernel, y=y, random_state=0)
    assert layer.compute_dtype == "float32"
    L = x[layer.landmark_indices_]
    K = reference(x, L)
    kv = _np(layer.kernel_vectors(x.astype(np.float32))[0])
    assert np.max(np.abs(kv - K)) <= 1e-6 * max(1.0, np.abs(K).max())
    out = _np(layer(x.astype(np.float32)))
    np.testing.assert_allclose(
        out, K @ layer.initial_w_[0], rtol=0, atol=1e-4 * np.abs(K @ layer.initial_w_[0]).max()
    )


def test_rbf_bandwidth_rule_is_resolved_on_the_training_features(data):
    x, y = data
    layer = NystromLayer.from_data(
        x, 6, kernel=sparsekit.get_kernel("rbf", bandwidth="mean-sq-dist"), random_state=0
    )
    sq = pairwise.euclidean_distances(x, squared=True)
    gamma = 1.0 / (2.0 * sq.mean())  # the library's rule, sigma^2 = mean squared distance
    assert layer.kernels_[0].gamma == pytest.approx(gamma, rel=1e-10)
    K = pairwise.rbf_kernel(x, x[layer.landmark_indices_], gamma=gamma)
    assert np.max(np.abs(_np(layer.kernel_vectors(x.astype(np.float32))[0]) - K)) <= 1e-6


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_gradients_match_finite_differences(name, data):
    x, _ = data
    x = x[:12]
    rng = np.random.default_rng(1)
    with jax.enable_x64(True):
        import jax.numpy as jnp

        layer = NystromLayer.from_data(
            x, 4, kernel=KERNELS[name][0], random_state=0, dtype="float64"
        )
        layer(x)
        R = jnp.asarray(rng.standard_normal((len(x), 4)))
        ntv = [v.value for v in layer.non_trainable_variables]

        def loss(w, z):
            return jnp.sum(layer.stateless_call([w], ntv, z)[0] * R)

        w0 = layer.trainable_variables[0].value
        # inputs off the landmarks: |z_k - l_k| has no derivative at 0 (laplacian)
        z0 = jnp.asarray(x + 1e-3 * rng.random(x.shape))
        gw, gz = jax.grad(loss, argnums=(0, 1))(w0, z0)
        h = 1e-6
        for grad, arg in ((gw, 0), (gz, 1)):
            point = [w0, z0]
            base = np.asarray(point[arg])
            for idx in [(0, 0), (1, 2), (3, 1)]:
                e = np.zeros_like(base)
                e[idx] = h
                plus, minus = list(point), list(point)
                plus[arg], minus[arg] = jnp.asarray(base + e), jnp.asarray(base - e)
                fd = (float(loss(*plus)) - float(loss(*minus))) / (2 * h)
                assert float(grad[idx]) == pytest.approx(fd, rel=1e-5, abs=1e-6), (arg, idx)


@pytest.mark.parametrize("name", PSD)
def test_non_adaptive_inner_products_are_the_nystrom_approximation(name, data):
    x, y = data
    kernel, reference = KERNELS[name]
    # 7 landmarks in 5 dimensions: the linear kernel's K_LL is singular (rank 5)
    with jax.enable_x64(True):
        layer = NystromLayer.from_data(
            x, 7, kernel=kernel, y=y, adaptive=False, random_state=0, dtype="float64"
        )
        phi = _np(layer(x))
    L = x[layer.landmark_indices_]
    K_xl = reference(x, L)
    approx = K_xl @ np.linalg.pinv(reference(L, L), hermitian=True) @ K_xl.T
    np.testing.assert_allclose(phi @ phi.T, approx, rtol=0, atol=1e-8 * np.abs(approx).max())
    if name == "linear":  # a linear kernel of rank 5 is reproduced exactly
        np.testing.assert_allclose(phi @ phi.T, x @ x.T, atol=1e-8 * (x @ x.T).max())


def _model(layer, d, n_classes=4):
    model = keras.Sequential([keras.Input((d,)), layer, keras.layers.Dense(n_classes)])
    model.compile(
        optimizer=keras.optimizers.Adam(0.05),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


@pytest.mark.parametrize("adaptive", [True, False])
def test_adaptive_w_trains_and_frozen_w_does_not(adaptive, data):
    x, y = data
    layer = NystromLayer.from_data(x, 8, kernel="rbf", y=y, adaptive=adaptive, random_state=0)
    model = _model(layer, x.shape[1])
    w0 = _np(layer.w[0])
    np.testing.assert_allclose(w0, layer.initial_w_[0], atol=1e-6 * np.abs(w0).max())
    dense0 = _np(model.layers[-1].kernel)
    model.fit(x.astype(np.float32), y, epochs=3, batch_size=20, verbose=0)
    assert len(layer.trainable_weights) == (1 if adaptive else 0)
    moved = np.abs(_np(layer.w[0]) - w0).max()
    assert (moved > 1e-4) if adaptive else (moved == 0.0)
    assert np.abs(_np(model.layers[-1].kernel) - dense0).max() > 1e-4  # the classifier trains
    assert np.array_equal(_np(layer.landmarks), x[layer.landmark_indices_].astype(np.float32))


def test_multiple_kernels_are_concatenated(data):
    x, y = data
    layer = NystromLayer.from_data(
        x, 8, kernel=["rbf", "linear", KERNELS["chi2"][0]], y=y, random_state=0
    )
    out = _np(layer(x.astype(np.float32)))
    assert out.shape == (len(x), 24) and len(layer.w) == 3
    L = x[layer.landmark_indices_]
    blocks = [
        pairwise.rbf_kernel(x, L, gamma=1 / 5),
        x @ L.T,
        pairwise.chi2_kernel(x, L, gamma=0.8),
    ]
    for m, K in enumerate(blocks):
        ref = K @ layer.initial_w_[m]
        np.testing.assert_allclose(out[:, 8 * m : 8 * (m + 1)], ref, atol=1e-4 * np.abs(ref).max())


def test_landmarks_go_through_the_feature_extractor(data):
    x, y = data
    images = x.reshape(40, 5, 1)
    extractor = keras.Sequential(
        [keras.Input((5, 1)), keras.layers.Flatten(), keras.layers.Dense(3, activation="relu")]
    )
    layer = NystromLayer.from_data(
        images, 6, kernel="rbf", y=y, feature_extractor=extractor, random_state=0
    )
    feats = _np(extractor(images.astype(np.float32)))
    K = pairwise.rbf_kernel(feats, feats[layer.landmark_indices_], gamma=1 / 3)
    kv = _np(layer.kernel_vectors(images.astype(np.float32))[0])
    assert np.max(np.abs(kv - K)) <= 1e-6
    assert _np(layer(images.astype(np.float32))).shape == (40, 6)


def test_model_saves_and_loads_as_keras_file(data, tmp_path):
    x, y = data
    images = x.reshape(40, 5, 1).astype(np.float32)
    extractor = keras.Sequential(
        [keras.Input((5, 1)), keras.layers.Flatten(), keras.layers.Dense(4, activation="relu")]
    )
    layer = NystromLayer.from_data(
        images,
        6,
        kernel=[sparsekit.get_kernel("rbf", bandwidth="median"), "linear"],
        y=y,
        feature_extractor=extractor,
        random_state=0,
    )
    feats = _np(extractor(images))  # before training: the rule is resolved at construction
    med = np.median(pairwise.euclidean_distances(feats)[np.triu_indices(40, 1)])
    model = keras.Sequential([keras.Input((5, 1)), layer, keras.layers.Dense(4)])
    model.compile(
        optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    model.fit(images, y, epochs=1, verbose=0)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(_np(loaded(images)), _np(model(images)))
    restored = loaded.layers[0]
    assert isinstance(restored, NystromLayer) and restored.adaptive
    assert restored.get_config()["kernel"] == layer.get_config()["kernel"]
    gamma = restored.get_config()["kernel"][0]["params"]["gamma"]
    assert gamma == pytest.approx(1 / (2 * med**2), rel=1e-6)  # the rule, on the training set


def test_landmarks_given_directly(data):
    x, _ = data
    L = x[[1, 5, 9]]
    layer = NystromLayer("laplacian", landmarks=L)
    assert layer.landmark_indices_ is None and layer.n_landmarks == 3
    K = pairwise.laplacian_kernel(x, L, gamma=1 / 5)
    assert np.max(np.abs(_np(layer.kernel_vectors(x.astype(np.float32))[0]) - K)) <= 1e-6


def test_stratified_draw_is_class_balanced(data):
    x, _ = data
    rng = np.random.default_rng(0)
    share = class_shares(np.array([2, 50, 50]), 10, rng)
    assert share.sum() == 10 and share[0] == 2 and sorted(share[1:]) == [4, 4]
    y = np.repeat([0, 1, 2, 3], [4, 12, 12, 12])
    idx = select_landmarks(x, 10, KERNELS["rbf"][0], sparsekit.get_sampler("uniform"), y, rng)
    assert len(np.unique(idx)) == 10
    assert sorted(np.bincount(y[idx])) == [2, 2, 3, 3]
    # any registered sampler draws within each class
    idx = select_landmarks(x, 8, KERNELS["rbf"][0], sparsekit.get_sampler("rls", lam=0.1), y, rng)
    assert list(np.bincount(y[idx])) == [2, 2, 2, 2]
    layer = NystromLayer.from_data(x, 8, kernel="rbf", y=y, sampler="dac-rls", random_state=0)
    assert list(np.bincount(y[layer.landmark_indices_])) == [2, 2, 2, 2]


def test_bad_input_is_refused_clearly(data):
    x, y = data
    with pytest.raises(ValueError, match="Did you mean 'laplacian'"):
        NystromLayer.from_data(x, 4, kernel="laplacain")
    with pytest.raises(TypeError, match="graphs"):
        NystromLayer.from_data(x, 4, kernel="shortest-path")
    with pytest.raises(TypeError, match="no differentiable"):
        NystromLayer.from_data(x, 4, kernel=sparsekit.get_kernel(lambda A, B: A @ B.T))
    with pytest.raises(TypeError, match="kernel must be"):
        NystromLayer.from_data(x, 4, kernel=3.0)
    with pytest.raises(ValueError, match="at most 40 landmarks"):
        NystromLayer.from_data(x, 41, kernel="rbf")
    with pytest.raises(ValueError, match="exactly one of landmarks"):
        NystromLayer("rbf", landmarks=x[:3], landmarks_shape=(3, 5))
    with pytest.raises(ValueError, match=r"from_data\(x, n_landmarks"):
        NystromLayer("rbf")
    with pytest.raises(ValueError, match="Unrecognized keyword.*n_landmarks"):  # config only
        NystromLayer("rbf", n_landmarks=3, x=x)
    with pytest.raises(ValueError, match=r"y must have shape \(40,\)"):
        NystromLayer.from_data(x, 3, kernel="rbf", y=y[:-1])
    with pytest.raises(ValueError, match="2-D"):
        NystromLayer.from_data(x.reshape(40, 5, 1), 3, kernel="rbf")
    with pytest.raises(ValueError, match="2-D"):
        NystromLayer("rbf", landmarks=x[:3].reshape(3, 5, 1))
    with pytest.raises(ValueError, match="non-negative|negative"):
        NystromLayer.from_data(x - 1.0, 3, kernel="chi2")
    layer = NystromLayer.from_data(x, 3, kernel="rbf")
    with pytest.raises(ValueError, match=r"each input must have shape \(5,\)"):
        layer(np.zeros((2, 4), dtype=np.float32))
    with pytest.raises(TypeError, match="adaptive"):
        NystromLayer.from_data(x, 3, kernel="rbf", adaptive="yes")


@pytest.mark.parametrize("name", ["additive-chi2", "chi2"])
def test_chi2_terms_with_zero_sums_count_zero_with_finite_gradients(name, data):
    x, y = data
    x = x.copy()
    x[:, :2] = 0.0  # z_k + l_k = 0 in two coordinates of every pair
    kernel, reference = KERNELS[name]
    layer = NystromLayer.from_data(x, 4, kernel=kernel, random_state=0)
    L = x[layer.landmark_indices_]
    kv = _np(layer.kernel_vectors(x.astype(np.float32))[0])
    K = reference(x, L)
    assert np.max(np.abs(kv - K)) <= 1e-6 * max(1.0, np.abs(K).max())
    grad = jax.grad(lambda z: keras.ops.sum(layer(z)))(x.astype(np.float32))
    assert np.all(np.isfinite(np.asarray(grad)))


def test_forward_pass_runs_on_another_keras_backend():
    """keras.ops only: the layer's forward pass on Keras' NumPy backend (inference only) equals
    the kernel computed by scikit-learn, in a process of its own."""
    code = (
        "import numpy as np\n"
        "from sklearn.metrics import pairwise\n"
        "from sparsekit.nn import NystromLayer\n"
        "import keras\n"
        "assert keras.backend.backend() == 'numpy'\n"
        "x = np.random.default_rng(0).random((30, 4)) + 0.05\n"
        "refs = (('rbf', lambda A, B: pairwise.rbf_kernel(A, B, gamma=0.25)),\n"
        "        ('additive-chi2', pairwise.additive_chi2_kernel),\n"
        "        ('laplacian', lambda A, B: pairwise.laplacian_kernel(A, B, gamma=0.25)))\n"
        "for name, ref in refs:\n"
        "    layer = NystromLayer.from_data(x, 5, kernel=[name, 'linear'], random_state=0)\n"
        "    out = np.asarray(layer(x.astype('float32')), dtype=float)\n"
        "    L = x[layer.landmark_indices_]\n"
        "    want = ref(x, L) @ layer.initial_w_[0]\n"
        "    assert np.abs(out[:, :5] - want).max() < 1e-4 * np.abs(want).max(), name\n"
        "    want = (x @ L.T) @ layer.initial_w_[1]\n"
        "    assert np.abs(out[:, 5:] - want).max() < 1e-4 * np.abs(want).max(), name\n"
        "print('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KERAS_BACKEND": "numpy"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "ok"


def _extractor(shape, width):
    return keras.Sequential(
        [keras.Input(shape), keras.layers.Flatten(), keras.layers.Dense(width, activation="relu")]
    )


def test_layer_passes_keras_layer_contract(run_layer_test, data):
    """Keras' own harness (serialization, build, symbolic and eager calls, a training step,
    mixed_float16: the output has the declared dtype and the weights stay float32), without
    and with a feature extractor."""
    x, _ = data
    x = x.astype(np.float32)
    run_layer_test(
        NystromLayer,
        {"kernel": ["rbf", "chi2"], "landmarks": x[:4]},
        input_data=x[:6],
        expected_output_shape=(6, 8),
        expected_num_trainable_weights=2,
        expected_num_non_trainable_weights=1,
    )
    images = x.reshape(40, 5, 1)
    run_layer_test(
        NystromLayer,
        {
            "kernel": "rbf",
            "landmarks": images[:4],
            "feature_extractor": _extractor((5, 1), 3),
        },
        input_data=images[:6],
        expected_output_shape=(6, 4),
    )


def test_feature_extractor_follows_the_mixed_precision_policy(data):
    """Oracle: keras.layers.Dense under the same mixed_float16 policy (float16 output, float32
    weights) and the float32 layer's values to float16 precision."""
    x, _ = data
    images = x.reshape(40, 5, 1).astype(np.float32)
    extractor = _extractor((5, 1), 3)
    kwargs = {"landmarks": images[:5], "feature_extractor": extractor}
    mixed = NystromLayer("rbf", dtype="mixed_float16", **kwargs)
    full = NystromLayer("rbf", **kwargs)
    dense = keras.layers.Dense(5, dtype="mixed_float16")
    want_dtype = keras.backend.standardize_dtype(dense(images.reshape(40, 5)).dtype)
    assert mixed.compute_dtype == dense.compute_dtype == want_dtype == "float16"
    out = mixed(images)
    assert keras.backend.standardize_dtype(out.dtype) == want_dtype
    assert mixed.compute_output_spec(keras.KerasTensor((None, 5, 1))).dtype == want_dtype
    assert all(keras.backend.standardize_dtype(w.dtype) == "float32" for w in mixed.weights)
    kv = _np(full.kernel_vectors(images)[0])
    np.testing.assert_allclose(_np(mixed.kernel_vectors(images)[0]), kv, rtol=0, atol=4e-3)
    # W = K_LL^{-1/2} has large entries here: the float16 error bound of k W is relative to |k||W|
    W = full.initial_w_[0]
    assert np.all(np.abs(_np(out) - kv @ W) <= 1e-2 * (np.abs(kv) @ np.abs(W)))


SCALED = {  # kernel at gamma (for data of scale c) -> scikit-learn's kernel on data / c
    "rbf": lambda c: (
        sparsekit.get_kernel("rbf"),  # gamma = 1/3: k = 1 at distance 0, else exp(-huge) = 0
        lambda A, B: np.exp(-(((A[:, None] - B[None]) * c) ** 2).sum(-1) / 3),
    ),
    "laplacian": lambda c: (
        sparsekit.get_kernel("laplacian", gamma=1 / c),
        lambda A, B: pairwise.laplacian_kernel(A, B, gamma=1.0),
    ),
    "chi2": lambda c: (
        sparsekit.get_kernel("chi2", gamma=1 / c),
        lambda A, B: pairwise.chi2_kernel(A, B, gamma=1.0),
    ),
    "additive-chi2": lambda c: (
        sparsekit.get_kernel("additive-chi2"),
        lambda A, B: c * pairwise.additive_chi2_kernel(A, B),
    ),
}


@pytest.mark.parametrize("name", sorted(SCALED))
@pytest.mark.parametrize(("c", "dtype"), [(1e300, "float64"), (3e38, "float32")])
def test_data_near_the_largest_float_gives_the_kernel_not_nan(name, c, dtype):
    """Oracle: scikit-learn's kernel on the data divided by c (rbf: exp(-||x - l||^2 / 3) by
    direct differences, 1 on the landmarks and 0 elsewhere; laplacian and chi2 are
    homogeneous of degree 1 in the data, so gamma / c at scale c is gamma at scale 1)."""
    x0 = np.random.default_rng(3).random((20, 3)) + 0.05
    kernel, reference = SCALED[name](c)
    x = (x0 * c).astype(dtype)
    with jax.enable_x64(dtype == "float64"), np.errstate(over="ignore"):
        layer = NystromLayer.from_data(x, 5, kernel=kernel, random_state=0, dtype=dtype)
        kv = _np(layer.kernel_vectors(x)[0])
        out = _np(layer(x))
        grad_w = jax.grad(
            lambda w: keras.ops.sum(layer.stateless_call([w], [layer.landmarks.value], x)[0])
        )(layer.w[0].value)
        K = reference(x.astype(np.float64) / c, x[layer.landmark_indices_].astype(np.float64) / c)
    finite = np.abs(K) < np.finfo(dtype).max / 2  # additive-chi2 may leave the float32 range
    assert np.all(np.isfinite(kv[finite]))
    eps = np.finfo(dtype).eps
    scale = np.abs(K[finite]).max()
    np.testing.assert_allclose(kv[finite], K[finite], rtol=0, atol=100 * eps * scale)
    if finite.all():  # W's gradient is the kernel vectors' column sums
        assert np.all(np.isfinite(np.asarray(grad_w)))
        want = K @ layer.initial_w_[0]
        np.testing.assert_allclose(out, want, rtol=0, atol=1e3 * eps * np.abs(want).max())


@pytest.mark.parametrize(("exponent", "dtype"), [(510, "float64"), (62, "float32")])
def test_rbf_is_scale_invariant_where_the_squared_norms_overflow(exponent, dtype):
    """Oracle: k_{gamma / c^2}(c x, c l) = k_gamma(x, l) (scikit-learn's rbf_kernel on the data at
    scale 1). With c = 2^exponent the centred squared norms, about 32 c^2, exceed the largest
    float while gamma = 2^-2 exponent is a normal number."""
    rng = np.random.default_rng(4)
    x0 = np.repeat([[4.0, 4.0], [-4.0, -4.0]], 10, axis=0) + 0.3 * rng.standard_normal((20, 2))
    c = 2.0**exponent
    x = (x0 * c).astype(dtype)
    kernel = sparsekit.get_kernel("rbf", gamma=c**-2)
    with jax.enable_x64(dtype == "float64"):
        layer = NystromLayer.from_data(x, 6, kernel=kernel, random_state=0, dtype=dtype)
        kv = _np(layer.kernel_vectors(x)[0])
    K = pairwise.rbf_kernel(x0, x0[layer.landmark_indices_], gamma=1.0)
    assert np.any((K > 0.05) & (K < 0.95))  # neither 0 nor 1: the scales meet inside the range
    # the expanded squared distance errs by about eps * max ||x - mean||^2 (times gamma = 1)
    atol = 8 * np.finfo(dtype).eps * np.max(np.sum((x0 - x0.mean(axis=0)) ** 2, axis=1))
    np.testing.assert_allclose(kv, K, rtol=0, atol=atol)


def test_the_remainder_goes_to_classes_drawn_at_random():
    """The documented rule (sparsekit.nn._landmarks): n_landmarks // n_classes each, and
    n_landmarks % n_classes classes drawn at random get one more, so over many draws every
    class gets the extra one sometimes; stratified indices come back sorted."""
    extra = np.zeros(4, dtype=int)
    for seed in range(30):
        share = class_shares(np.full(4, 50), 6, np.random.default_rng(seed))
        assert sorted(share) == [1, 1, 2, 2]
        extra += share == 2
    assert np.all(extra > 0) and extra.sum() == 60
    x = np.random.default_rng(5).random((40, 3))
    y = np.tile([0, 1, 2, 3], 10)
    idx = select_landmarks(
        x, 9, KERNELS["rbf"][0], sparsekit.get_sampler("uniform"), y, np.random.default_rng(0)
    )
    assert np.all(np.diff(idx) > 0) and sorted(np.bincount(y[idx])) == [2, 2, 2, 3]


def test_random_state_seeds_the_landmark_draw(data):
    """Oracle: the uniform sampler's own draw from numpy.random.default_rng(seed)."""
    x, _ = data
    kernel, sampler = KERNELS["rbf"][0], sparsekit.get_sampler("uniform")
    for seed in (0, 1):
        layer = NystromLayer.from_data(x, 8, kernel="rbf", random_state=seed)
        want = select_landmarks(x, 8, kernel, sampler, None, np.random.default_rng(seed))
        np.testing.assert_array_equal(layer.landmark_indices_, want)
    assert not np.array_equal(
        NystromLayer.from_data(x, 8, kernel="rbf", random_state=0).landmark_indices_,
        NystromLayer.from_data(x, 8, kernel="rbf", random_state=1).landmark_indices_,
    )


def test_bandwidth_rule_uses_x_in_from_data_and_a_fitted_kernel_keeps_its_gamma(data):
    """Oracle: the rule sigma^2 = mean squared distance over the rows of x (scikit-learn's
    euclidean_distances), not over the 4 landmarks; a kernel fitted by the caller keeps its
    gamma when given to the constructor with explicit landmarks."""
    x, _ = data
    rule = sparsekit.get_kernel("rbf", bandwidth="mean-sq-dist")
    gamma = 1.0 / (2.0 * pairwise.euclidean_distances(x, squared=True).mean())
    drawn = NystromLayer.from_data(x, 4, kernel=rule, random_state=0)
    assert drawn.kernels_[0].gamma == pytest.approx(gamma, rel=1e-10)
    second = NystromLayer.from_data(x, 4, kernel=["linear", rule], random_state=0)
    assert second.kernels_[1].gamma == pytest.approx(gamma, rel=1e-10)
    given = NystromLayer(rule.fit(x), landmarks=x[:4])
    assert given.kernels_[0].gamma == pytest.approx(gamma, rel=1e-10)
    on_landmarks = NystromLayer(sparsekit.get_kernel("rbf", bandwidth="mean-sq-dist"), x[:4])
    g4 = 1.0 / (2.0 * pairwise.euclidean_distances(x[:4], squared=True).mean())
    assert on_landmarks.kernels_[0].gamma == pytest.approx(g4, rel=1e-10)


def test_eigen_floor_drops_the_eigenvalues_at_or_below_it(data):
    """Oracle: numpy.linalg.eigh of scikit-learn's K_LL, K_LL^{-1/2} over the eigenvalues above
    the floor only."""
    x, _ = data
    L = x[:6]
    K = pairwise.rbf_kernel(L, L, gamma=0.7)
    lam, V = np.linalg.eigh(K)
    floor = float(np.sqrt(lam[1] * lam[2]))  # between the second and third smallest
    keep = lam > floor
    want = (V[:, keep] / np.sqrt(lam[keep])) @ V[:, keep].T
    layer = NystromLayer(KERNELS["rbf"][0], landmarks=L, eigen_floor=floor, adaptive=False)
    np.testing.assert_allclose(layer.initial_w_[0], want, rtol=0, atol=1e-8 * np.abs(want).max())
    full = NystromLayer(KERNELS["rbf"][0], landmarks=L, adaptive=False)
    assert np.abs(full.initial_w_[0] - want).max() > 1e-3 * np.abs(want).max()
