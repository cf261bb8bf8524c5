"""Problems of a spec that used to surface only when it ran, found when it is loaded (and so by
``--dry-run``): missing optional packages, bad parameter values, ``[[plot]]`` columns that no
run reports, a bad ``--scheduler`` or ``--set`` value."""

import re
import sys

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

import pytest

from sparsekit.cli import main
from sparsekit.run import SpecError, load_spec

SPEC = """\
task = "nystrom"
[data]
source = "blobs"
n_samples = 60
[kernel]
name = "rbf"
gamma = 0.5
[params]
n_components = [5, 10]
n_eval = 60
"""
GRAM = 'task = "gram"\n[data]\nsource = "uniform"\nn_samples = 20\n[kernel]\nname = "rbf"\n'


# -- optional packages -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, hidden, where",
    [
        (SPEC, "sklearn", "line 3: data source 'blobs'"),
        (SPEC.replace('"blobs"', '"uniform"'), "sklearn", "line 1: task 'nystrom'"),
        (GRAM + '[[plot]]\nx = "data.n_samples"\ny = "time"\n', "matplotlib", "line 7: \\[\\[plot"),
    ],
    ids=["data-source", "task", "plot"],
)
def test_missing_optional_package_is_named_at_load(
    tmp_path, monkeypatch, capsys, text, hidden, where
):
    """A package a task, data source or plot imports, hidden (``sys.modules[name] = None``: its
    import fails as if it were not installed): before, every run failed alike with a bare
    ``ModuleNotFoundError`` (and the plot after the sweep); now the spec is refused with the
    ``pip install`` line."""
    monkeypatch.setitem(sys.modules, hidden, None)
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(text)
    with pytest.raises(SpecError, match=rf"s\.toml, {where}.* needs the package '{hidden}'"):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "pip install" in err and "Traceback" not in err


def test_installed_packages_pass():
    spec = load_spec("s.toml", text=SPEC + '[[plot]]\nx = "params.n_components"\ny = "fit_time"\n')
    assert spec.task == "nystrom"


# -- component parameter values, through the component's own checks ----------------------------


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("gamma = 0.5", "gamma = -1", r"line 7: kernel 'rbf': gamma must be > 0, got -1"),
        ("gamma = 0.5", 'gamma = [0.5, "abc"]', r"line 7: kernel 'rbf': gamma must be a real"),
        ("[params]", '[sampler]\nname = "dac-rls"\nlam = -1\n[params]', r"line 10: .*lam must"),
    ],
    ids=["negative", "in-a-sweep", "sampler"],
)
def test_bad_component_value_is_refused_at_load(tmp_path, capsys, old, new, message):
    """Oracle: the component's own constructor (``RBF(gamma=-1)`` raises the same message);
    before, the spec loaded, ``--dry-run`` listed its runs and every run failed alike."""
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SPEC.replace('"blobs"', '"uniform"').replace(old, new))
    with pytest.raises(SpecError, match=message):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--dry-run"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_good_component_values_load():
    spec = load_spec("s.toml", text=SPEC.replace("gamma = 0.5", "gamma = [0.5, 1, 2.5]"))
    assert spec.sections["kernel"]["gamma"] == [0.5, 1, 2.5]


# -- [[plot]] columns --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "plot, message",
    [
        ('x = "params.n_component"\ny = "fit_time"', r"x = 'params.n_component' .*params\.n_comp"),
        ('x = "params.n_components"\ny = "fit_tim"', r"y = 'fit_tim' .*Did you mean 'fit_time'"),
        ('x = "params.n_components"\ny = "fit_time"\ngroup = "sampler.name"', r"group = 'samp"),
    ],
    ids=["swept-key", "metric", "group"],
)
def test_plot_column_that_no_run_reports_is_refused_at_load(tmp_path, capsys, plot, message):
    """Before: the sweep ran, then "plot not drawn" (exit 0). Oracle for the columns: the rows
    of a real run (the example specs' small runs check that a task's declared metrics hold
    every column it reports)."""
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SPEC + "[[plot]]\n" + plot + "\n")
    with pytest.raises(SpecError, match=r"line 1[2-4]: \[\[plot\]\] " + message):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--dry-run"]) == 2
    assert "is not a column of the results" in capsys.readouterr().err


def test_plot_of_an_undeclared_task_checks_the_dotted_columns_only():
    """A task that declares no metrics (``metrics=None``): its metric columns are unknown until
    it runs, so only the spec's dotted columns are checked."""
    from sparsekit.run import get_task

    text = 'task = "out-of-sample"\n[data]\nsource = "uniform"\nn_samples = 20\n[[plot]]\n'
    assert get_task("out-of-sample").metrics is None
    load_spec("s.toml", text=text + 'x = "data.n_samples"\ny = "anything"\n')
    with pytest.raises(SpecError, match="x = 'data.n_sample' is not a column"):
        load_spec("s.toml", text=text + 'x = "data.n_sample"\ny = "anything"\n')


# -- --scheduler and --set values --------------------------------------------------------------


@pytest.mark.parametrize(
    "scheduler, message",
    [
        ("bogus", "not a Dask scheduler address"),
        ("tcp://host", "not a Dask scheduler address .*missing port"),
        ("xyz://a:1", "not a Dask scheduler address .*unknown address scheme"),
        ("local:0", "expected local:N with N an integer >= 1"),
        ("local:four", "expected local:N"),
        ("local:100000", "worker processes on a machine with"),
    ],
)
def test_dry_run_checks_the_scheduler(tmp_path, capsys, scheduler, message):
    """Before: ``--dry-run`` listed the runs (exit 0) and only the real run found the
    scheduler bad. Oracle for the addresses: Dask's own parser."""
    pytest.importorskip("distributed")
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(GRAM)
    assert main(["run", str(spec_file), "--dry-run", "--scheduler", scheduler]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err


def test_dry_run_accepts_good_scheduler_values(tmp_path, capsys):
    pytest.importorskip("distributed")
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(GRAM)
    for scheduler in ("tcp://127.0.0.1:8786", "127.0.0.1:8786", "local:1"):
        assert main(["run", str(spec_file), "--dry-run", "--scheduler", scheduler]) == 0


@pytest.mark.parametrize("value", ["[1, 2", "{a = 1", '"rbf', "'rbf"])
def test_malformed_set_value_is_refused(tmp_path, capsys, value):
    """A ``--set`` value that opens a list, table or string and is no TOML (before: kept as
    the text itself, so ``--dry-run`` passed and every run failed)."""
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(GRAM)
    assert main(["run", str(spec_file), "--dry-run", "--set", f"params.n_eig={value}"]) == 2
    assert "malformed TOML" in capsys.readouterr().err


def test_set_values_as_toml_or_bare_words():
    spec = load_spec(
        "s.toml", text=GRAM, overrides=["kernel.name=laplacian", "kernel.gamma=[0.5, 2]"]
    )
    assert spec.sections["kernel"] == {"name": "laplacian", "gamma": [0.5, 2]}


def test_parquet_file_without_pandas_is_refused_at_load(tmp_path, monkeypatch):
    """Reading Parquet needs pandas: named at load (before: each run failed alike)."""
    (tmp_path / "x.parquet").write_bytes(b"PAR1")
    text = 'task = "gram"\n[data]\nsource = "file"\npath = "x.parquet"\n[kernel]\nname = "rbf"\n'
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(SpecError, match=r"line 4: a Parquet data file needs the package 'pandas'"):
        load_spec("s.toml", text=text, base=tmp_path)


# -- task parameters and data-source parameters ------------------------------------------------

BAD_PARAMS = [  # the line, the spec's text, the bad value, the message
    (9, "n_components = -3", ("n_components", -3), "n_components must be an integer >= 1"),
    (9, "n_components = [5, 2.5]", ("n_components", 2.5), "n_components must be an integer"),
    (10, 'n_eval = "all"', ("n_eval", "all"), "n_eval must be an integer"),
    (10, "n_eval = 0", ("n_eval", 0), "n_eval must be an integer >= 1"),
    (11, "n_eval = 60\ntest_fraction = 1.5", ("test_fraction", 1.5), "test_fraction must be a"),
]


@pytest.mark.parametrize("line, new, bad, message", BAD_PARAMS)
def test_bad_task_parameter_is_refused_at_load(tmp_path, capsys, line, new, bad, message):
    """Oracle: the task itself, run on that value (``run_task``), fails; before, the spec
    loaded, ``--dry-run`` listed its runs (exit 0) and every run failed alike."""
    from sparsekit.run import run_task
    from sparsekit.run.data import load

    key, value = bad
    data = load({"source": "blobs", "n_samples": 60})
    with pytest.raises((ValueError, TypeError, IndexError)):
        run_task("nystrom", {"n_eval": 60, key: value}, data=data, components={"kernel": "rbf"})
    old = "n_components = [5, 10]" if key == "n_components" else "n_eval = 60"
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SPEC.replace(old, new))
    with pytest.raises(SpecError, match=rf"s\.toml, line {line}: task 'nystrom': {message}"):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert key in err and "Traceback" not in err


def test_bad_task_parameter_from_set_is_refused(tmp_path, capsys):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(GRAM)
    assert main(["run", str(spec_file), "--dry-run", "--set", "params.n_eig=-1"]) == 2
    assert "n_eig must be an integer >= 1, got -1" in capsys.readouterr().err


def test_task_check_runs_once_per_value_not_per_grid_point():
    """A plugin task's ``check`` hook, on a sweep of 3 x 4 x 5 points: it sees the first point
    (defaults filled in), then one point per other value (1 + 2 + 3 + 4 calls), as the
    component checks; and its ValueError is a SpecError with the line of the key it names."""
    from sparsekit.plugins import hookimpl
    from sparsekit.registry import Registry
    from sparsekit.run import Task

    seen = []

    def check(params):
        seen.append(params)
        if params["c"] == "bad":
            raise ValueError("c must not be 'bad'")

    task = Task("counted", lambda ctx: {}, {"a": 1, "b": 1.0, "c": "x", "d": True}, check=check)

    class Plugin:
        @hookimpl
        def sparsekit_tasks(self):
            yield task.registration()

    registry = Registry(plugins=[Plugin()])
    text = 'task = "counted"\n[data]\nsource = "uniform"\n[params]\na = [1, 2, 3]\n'
    sweep = text + 'b = [1, 2.5, 3, 4]\nc = ["x", "y", "z", "w", "v"]\n'
    load_spec("s.toml", text=sweep, registry=registry)
    assert len(seen) == 1 + 2 + 3 + 4
    assert seen[0] == {"a": 1, "b": 1, "c": "x", "d": True}
    with pytest.raises(SpecError, match=r"line 7: task 'counted': c must not be 'bad'"):
        load_spec("s.toml", text=sweep.replace('"v"', '"bad"'), registry=registry)
    with pytest.raises(SpecError, match=r"line 6: task 'counted': b must be a number"):
        load_spec("s.toml", text=text + 'b = [1, "2"]\n', registry=registry)
    with pytest.raises(SpecError, match=r"line 6: task 'counted': d must be true or false"):
        load_spec("s.toml", text=text + "d = 1\n", registry=registry)


BAD_DATA = [
    ('"uniform"\nn_samples = 20', '"blobs"\nn_samples = -5', 4, "n_samples must be an integer >="),
    ("n_samples = 20", 'n_samples = "many"', 4, "n_samples must be an integer"),
    ('"uniform"\nn_samples = 20', '"hadamard"\nn = [16, 12]', 4, "n must be a power of two"),
    (
        '"uniform"\nn_samples = 20',
        '"blobs"\ncluster_std = -1',
        4,
        "cluster_std must be a number >= 0",
    ),
    ('"uniform"\nn_samples = 20', '"file"', 2, "'file' needs path = "),
]


@pytest.mark.parametrize("old, new, line, message", BAD_DATA)
def test_bad_data_parameter_is_refused_at_load(tmp_path, capsys, old, new, line, message):
    """Oracle: the data source itself, called with that value (``data.load``), fails; before,
    every run failed alike."""
    from sparsekit.run.data import load

    text = GRAM.replace(old, new)
    table = tomllib.loads(text)["data"]
    table = {k: v[-1] if isinstance(v, list) else v for k, v in table.items()}
    with pytest.raises((ValueError, TypeError)):
        load(table)
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(text)
    with pytest.raises(SpecError, match=rf"s\.toml, line {line}: data source .*{message}"):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--dry-run"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_good_parameter_values_load():
    """Values of the right type and range, a float given as an int, ``n_init = "auto"`` (the
    task's rule takes over its default's type) and a list parameter's items."""
    spec = load_spec(
        "s.toml",
        text=SPEC.replace("n_eval = 60", "n_eval = 60\ntest_fraction = 0.5\nridge_alpha = 0"),
    )
    assert spec.sections["params"]["ridge_alpha"] == 0
    load_spec(
        "s.toml",
        text='task = "kernel-kmeans"\n[data]\nsource = "blobs"\n[params]\nn_init = ["auto", 2]\n',
    )
    load_spec(
        "s.toml",
        text='task = "three-sample"\n[data]\nsource = "uniform"\n[params]\nn = [[10, 20]]\n',
    )


@pytest.mark.parametrize(
    "task, params, message",
    [
        ("quickmeans", "test_fraction = 0", "test_fraction must be a number in \\(0, 1\\)"),
        ("quickmeans", "n_clusters = [8, 0]", "n_clusters must be an integer >= 1, got 0"),
        ("frank-wolfe-recovery", "outside_factors = [[2, -5]]", "outside_factors must be a"),
        ("frank-wolfe-recovery", "n_signals = 2.5", "n_signals must be an integer >= 1"),
        (
            "three-sample",
            'methods = [["exact", "nystrm"]]',
            "methods must be one of 'exact', .*"
            "got 'nystrm'. Did you mean 'nystrom'\\? Change it in \\[params\\]\\.",
        ),
    ],
)
def test_experiment_task_values_are_refused_at_load(tmp_path, capsys, task, params, message):
    """The theses' protocols: a test split of no point, no cluster, a negative radius factor
    (β = factor · ‖x*‖₁ is a radius) or a fraction of a signal cannot run; before, the spec
    loaded and every run failed (or ran on nonsense)."""
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(f'task = "{task}"\n[data]\nsource = "uniform"\n[params]\n{params}\n')
    with pytest.raises(SpecError, match=rf"s\.toml, line 5: task '{task}': {message}"):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--dry-run"]) == 2
    assert "Traceback" not in capsys.readouterr().err
