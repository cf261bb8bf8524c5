"""Spec parsing and validation: every error names the line and the closest valid name."""

import io

import pytest

from sparsekit.run import (
    Spec,
    SpecError,
    dry_run,
    expand,
    load_spec,
    plan,
)
from sparsekit.run.spec import key_line

BASE = """\
name = "t"
task = "nystrom"

[data]
source = "blobs"
n_samples = 100

[kernel]
name = "rbf"
gamma = 0.5

[sampler]
name = ["uniform", "dac-rls"]

[params]
n_components = [10, 20]
"""


def _load(text, **kw):
    return load_spec("spec.toml", text=text, **kw)


def test_product_sweep_and_repeat_expand():
    spec = _load(BASE)
    grid = expand(spec)
    assert [(g["sampler"]["name"], g["params"]["n_components"]) for g in grid] == [
        ("uniform", 10),
        ("uniform", 20),
        ("dac-rls", 10),
        ("dac-rls", 20),
    ]
    assert all(g["kernel"] == {"name": "rbf", "gamma": 0.5} for g in grid)


def test_zip_sweep_advances_together():
    spec = _load(BASE + '\n[sweep]\nzip = [["sampler.name", "params.n_components"]]\n')
    grid = expand(spec)
    assert [(g["sampler"]["name"], g["params"]["n_components"]) for g in grid] == [
        ("uniform", 10),
        ("dac-rls", 20),
    ]


def test_grid_order_zip_groups_first_then_the_spec_order_last_fastest():
    """Oracle: itertools.product over the axes in the documented order (the zip group, then
    data.n_samples and kernel.gamma as written), the last varying fastest."""
    import itertools

    text = BASE.replace("n_samples = 100", "n_samples = [100, 200]").replace(
        "gamma = 0.5", "gamma = [0.5, 1.0]"
    )
    grid = expand(_load(text + '\n[sweep]\nzip = [["sampler.name", "params.n_components"]]\n'))
    got = [
        (g["sampler"]["name"], g["params"]["n_components"], g["data"]["n_samples"])
        + (g["kernel"]["gamma"],)
        for g in grid
    ]
    want = [
        (name, m, n, gamma)
        for (name, m), n, gamma in itertools.product(
            [("uniform", 10), ("dac-rls", 20)], [100, 200], [0.5, 1.0]
        )
    ]
    assert got == want


def test_zip_lengths_must_match():
    text = (
        BASE.replace("[10, 20]", "[10, 20, 30]")
        + '[sweep]\nzip = ["sampler.name", "params.n_components"]\n'
    )
    with pytest.raises(SpecError, match="equal lengths"):
        _load(text)


def test_list_of_lists_is_one_value():
    spec = _load(
        BASE.replace('task = "nystrom"', 'task = "mmd"')
        .replace('[sampler]\nname = ["uniform", "dac-rls"]\n', "")
        .replace("n_components = [10, 20]", "classes = [[0, 1]]")
    )
    assert [g["params"]["classes"] for g in expand(spec)] == [[0, 1]]


def test_malformed_toml_gives_line_and_column():
    with pytest.raises(SpecError, match=r"line 6, column \d+"):
        _load(BASE.replace("n_samples = 100", "n_samples = = 100"))


def test_unknown_top_key_line_and_closest():
    with pytest.raises(SpecError, match=r"line 3: unknown key 'repaet'.*'repeat'"):
        _load(BASE.replace('task = "nystrom"\n', 'task = "nystrom"\nrepaet = 2\n'))


def test_unknown_component_name_line_and_closest():
    with pytest.raises(SpecError, match=r"line 13: .*'dac-rsl'.*Did you mean 'dac-rls'"):
        _load(BASE.replace('"dac-rls"]', '"dac-rsl"]'))


def test_unknown_component_parameter_line_and_closest():
    with pytest.raises(SpecError, match=r"line 10: kernel 'rbf' has no parameter 'gama'.*'gamma'"):
        _load(BASE.replace("gamma = 0.5", "gama = 0.5"))


def test_unknown_task_parameter_and_source():
    with pytest.raises(
        SpecError, match=r"line 16: task 'nystrom' has no parameter 'n_component'.*'n_components'"
    ):
        _load(BASE.replace("n_components =", "n_component ="))
    with pytest.raises(SpecError, match=r"line 5: unknown data source 'blob'.*'blobs'"):
        _load(BASE.replace('"blobs"', '"blob"'))
    with pytest.raises(
        SpecError, match=r"line 6: data source 'blobs' has no parameter 'n_sample'.*'n_samples'"
    ):
        _load(BASE.replace("n_samples", "n_sample"))


def test_unknown_task_and_foreign_section():
    with pytest.raises(SpecError, match=r"line 2: unknown task 'nystroem'.*'nystrom'"):
        _load(BASE.replace('task = "nystrom"', 'task = "nystroem"'))
    with pytest.raises(SpecError, match=r"takes no \[solver\]"):
        _load(BASE + '\n[solver]\nname = "omp"\n')


def test_overrides_set_values():
    spec = _load(BASE, overrides=["data.n_samples=7", "params.n_components=[3]", "repeat=2"])
    assert spec.sections["data"]["n_samples"] == 7 and spec.repeat == 2
    assert {g["params"]["n_components"] for g in expand(spec)} == {3}
    with pytest.raises(SpecError, match="KEY=VALUE"):
        _load(BASE, overrides=["data.n_samples"])


def test_key_line_finds_key_in_its_section():
    assert key_line(BASE, "kernel", "name") == 9
    assert key_line(BASE, "sampler", "name") == 13
    assert key_line(BASE, None, "task") == 2


def test_missing_spec_file():
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_spec("/nonexistent/spec.toml")


GRAM = 'task = "gram"\n[data]\nsource = "iris"\n[params]\n'


def test_zip_group_needs_two_keys():
    base = GRAM + "n_eig = [5, 10]\nwarm_up = [true, false]\n[sweep]\n"
    load_spec("s.toml", text=base + 'zip = ["params.n_eig", "params.warm_up"]\n')
    for zip_value in (
        '["params.n_eig"]',
        '[["params.n_eig"]]',
        '[["params.n_eig", "params.warm_up"], 3]',
    ):
        with pytest.raises(SpecError, match="each zip group is a list of at least two"):
            load_spec("s.toml", text=base + f"zip = {zip_value}\n")


def test_spec_built_in_python_runs_each_point_once():
    spec = Spec(
        name="s", task="gram", sections={"data": {"source": "iris"}, "params": {"n_eig": [5, 9]}}
    )
    runs = plan(spec)
    assert [(r["point"]["params"]["n_eig"], r["repeat"], r["seed"]) for r in runs] == [
        (5, 0, 0),
        (9, 0, 0),
    ]


def test_dry_run_lists_the_varying_keys_of_each_point():
    stream = io.StringIO()
    dry_run(load_spec("s.toml", text=GRAM + "n_eig = [5, 10]\n"), stream=stream)
    lines = stream.getvalue().splitlines()
    assert lines[1].endswith("seed=0 params.n_eig=5") and lines[2].endswith("params.n_eig=10")
    stream = io.StringIO()
    dry_run(load_spec("s.toml", text=GRAM + "n_eig = 5\n"), stream=stream)
    assert stream.getvalue().splitlines()[1].endswith("seed=0 (single point)")
