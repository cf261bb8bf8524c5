"""The ``label-cost`` and ``nystrom-classifier`` tasks (Cherfaoui 2022, Exp. 3.C; Giffon 2020,
Table 3.3) against NumPy and scikit-learn recomputations."""

import itertools

import numpy as np
import pytest

from sparsekit.experiments.label_cost import label_cost_table, label_draws
from sparsekit.kernels import RBFKernel
from sparsekit.run import data as data_mod, run_task
from sparsekit.samplers import ExactRLSSampler

KERNEL = {"name": "rbf", "bandwidth": "mean-sq-dist"}


def _numpy_rls(X, gamma, lam):
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-gamma * sq)
    return np.diag(K @ np.linalg.inv(K + lam * np.eye(len(X))))


def test_labels_are_drawn_in_proportion_to_exact_rls():
    """Oracle: the exact ridge leverage scores l_i = (K (K + λI)⁻¹)_ii from NumPy's inverse, and
    the successive-draw law without replacement enumerated by brute force. One label is drawn
    ∝ l (frequencies within 4 binomial standard deviations over 6,000 draws); two labels have
    P({i, j}) = q_i q_j / (1 − q_i) + q_j q_i / (1 − q_j) with q = l / Σ l. Three clustered
    points share their leverage (q from 0.11 to 0.21): a uniform draw is 6 deviations off."""
    X = np.array([[0.0, 0.0], [0.2, 0.0], [0.0, 0.2], [3.0, 0.0], [0.0, 3.0], [4.0, 4.0]])
    gamma, lam = 1.0, 0.1
    kernel = RBFKernel(gamma=gamma)
    q = _numpy_rls(X, gamma, lam)
    q = q / q.sum()
    sampler = ExactRLSSampler(lam=lam)
    n_draws = 6_000
    ones = np.zeros(6)
    pairs = {}
    for seed in range(n_draws):
        (one, two), _ = label_draws(X, kernel, sampler, [1 / 6, 2 / 6], seed)
        ones[one] += 1
        pairs[tuple(two)] = pairs.get(tuple(two), 0) + 1
    sd = np.sqrt(n_draws * q * (1 - q))
    assert np.all(np.abs(ones - n_draws * q) < 4 * sd), (ones / n_draws, q)
    for i, j in itertools.combinations(range(6), 2):
        p = q[i] * q[j] / (1 - q[i]) + q[j] * q[i] / (1 - q[j])
        got = pairs.get((i, j), 0)
        assert abs(got - n_draws * p) < 4 * np.sqrt(n_draws * p * (1 - p)) + 1, (i, j)


def _hand_scores(X, y, seed, budgets, alpha, classify):
    """One repetition with uniform labels, recomputed with scikit-learn: split, standardization,
    γ = 1 / (2 σ²) with σ² the mean pairwise squared distance, the s largest of the uniforms
    (the same generator), ``KernelRidge(alpha = λ s)`` on the labelled points."""
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics import accuracy_score, mean_squared_error
    from sklearn.model_selection import train_test_split

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
    mu, sd = Xtr.mean(0), Xtr.std(0)
    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    sigma2 = np.mean(((Xtr[:, None, :] - Xtr[None, :, :]) ** 2).sum(-1))
    gamma = 1.0 / (2.0 * sigma2)
    rng = np.random.default_rng(seed)
    out = []
    for b in budgets:
        s = int(round(b * len(Xtr)))
        idx = np.sort(np.argsort(-rng.random(len(Xtr)))[:s])
        krr = KernelRidge(alpha=alpha * s, kernel="rbf", gamma=gamma)
        if classify:
            classes = np.unique(ytr[idx])
            t = np.where(ytr[idx] == classes[1], 1.0, -1.0)
            pred = classes[(krr.fit(Xtr[idx], t).predict(Xte) > 0).astype(int)]
            out.append(accuracy_score(yte, pred))
        else:
            shift = ytr[idx].mean()
            pred = krr.fit(Xtr[idx], ytr[idx] - shift).predict(Xte) + shift
            out.append(mean_squared_error(yte, pred))
    return out


@pytest.mark.parametrize("source", ["diabetes", "breast-cancer"])
def test_score_per_budget_equals_a_scikit_learn_recomputation(source):
    """Oracle: scikit-learn's ``train_test_split``, ``KernelRidge`` and metric on one
    repetition (:func:`_hand_scores`), to 1e-6 relative."""
    data = data_mod.SOURCES[source](n_samples=200, seed=0)
    budgets, seed, alpha = [0.1, 0.3], 4, 1e-3
    rows = run_task(
        "label-cost",
        {"budgets": budgets, "alpha": alpha},
        data,
        {"kernel": KERNEL, "sampler": "uniform"},
        seed=seed,
    )
    classify = source == "breast-cancer"
    metric = "accuracy" if classify else "mse"
    expected = _hand_scores(data["X"], data["y"], seed, budgets, alpha, classify)
    assert [r["budget"] for r in rows] == budgets
    assert [r["n_labels"] for r in rows] == [14, 42]  # round(b · 140)
    assert [r[metric] for r in rows] == pytest.approx(expected, rel=1e-6)


def test_budgets_and_repetitions_are_not_ignored():
    """Oracle: the table's cells are the task's runs with seeds 0, 1, 2 (one per repetition),
    one column per budget, with round(b · n_train) labels; repetitions differ (other splits)."""
    data = data_mod.SOURCES["breast-cancer"](n_samples=120, seed=1)
    budgets = [0.1, 0.5]
    table = label_cost_table(
        data["X"], data["y"], samplers=["uniform", "dac-rls"], budgets=budgets, repetitions=3
    )
    assert table.metric == "accuracy" and table.budgets == budgets
    assert set(table.scores) == {(s, b) for s in ("uniform", "dac-rls") for b in budgets}
    for j in range(3):
        rows = run_task(
            "label-cost",
            {"budgets": budgets},
            data,
            {"kernel": KERNEL, "sampler": "dac-rls"},
            seed=j,
        )
        assert [r["n_labels"] for r in rows] == [8, 42]  # n_train = 120 − ⌈0.3 · 120⌉ = 84
        assert [r["accuracy"] for r in rows] == pytest.approx(
            [table.scores[("dac-rls", b)][j] for b in budgets], abs=1e-12
        )
    assert len(set(table.scores[("uniform", 0.1)])) > 1
    one, listed = (
        run_task("label-cost", {"budgets": b}, data, {"kernel": KERNEL, "sampler": "uniform"})
        for b in (0.5, [0.5])
    )  # one budget alone, as a spec's sweep gives it, is a list of one
    assert len(one) == len(listed) == 1 and one[0]["n_labels"] == 42
    assert one[0]["accuracy"] == listed[0]["accuracy"]
    text = table.format()
    assert "10%" in text and "50%" in text and "3 repetitions" in text
    assert text.splitlines()[-1].startswith("| best")


def test_budget_and_table_arguments_are_checked():
    """A budget outside (0, 1] is named when a spec is loaded; no repetition is refused."""
    from sparsekit.run import get_task

    with pytest.raises(ValueError, match=r"budgets must be a fraction in \(0, 1\], got 1.5"):
        get_task("label-cost").check({"budgets": [0.1, 1.5]})
    with pytest.raises(ValueError, match="repetitions must be an integer >= 1"):
        label_cost_table(np.zeros((10, 2)), np.zeros(10), repetitions=0)


def test_nystrom_classifier_rows_per_landmark_choice():
    """Oracle: with as many landmarks as training points, uniform landmarks are every point and
    the classifier is scikit-learn's ``KernelRidge`` on ±1 targets (the sign picks the class);
    k-means centroids give one row each, with ``n_components`` landmarks."""
    from sklearn.kernel_ridge import KernelRidge

    from sparsekit.experiments.quickmeans import split

    data = data_mod.SOURCES["breast-cancer"](n_samples=100, seed=0)
    seed, alpha = 2, 1e-6
    (row,) = run_task(
        "nystrom-classifier",
        {"landmarks": ["uniform"], "n_components": 80, "alpha": alpha},
        data,
        {"kernel": {"name": "rbf", "gamma": 0.05}},
        seed=seed,
    )
    Xtr, ytr, Xte, yte = split(data["X"], data["y"], np.random.default_rng(seed), 0.2)
    mu, sd = Xtr.mean(0), Xtr.std(0)
    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    krr = KernelRidge(alpha=alpha * 80, kernel="rbf", gamma=0.05).fit(Xtr, 2.0 * ytr - 1)
    assert row["n_landmarks"] == 80
    assert row["accuracy"] == pytest.approx(np.mean((krr.predict(Xte) > 0) == yte), abs=1e-12)
    rows = run_task(
        "nystrom-classifier",
        {"landmarks": ["kmeans", "uniform"], "n_components": 5},
        data,
        {"kernel": KERNEL},
        seed=seed,
    )
    assert [r["landmarks"] for r in rows] == ["kmeans", "uniform"]
    assert all(r["n_landmarks"] == 5 and 0 <= r["accuracy"] <= 1 for r in rows)
