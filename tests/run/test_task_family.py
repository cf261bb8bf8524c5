"""Tasks are a registry family: the sparsekit_tasks hook, the registry's rules (clash, disable
list, skipped()) and `sparsekit list --family task`."""

import numpy as np
import pytest

import sparsekit
from sparsekit.cli import main
from sparsekit.exceptions import ComponentConflictWarning, UnknownComponentError
from sparsekit.plugins import hookimpl
from sparsekit.registry import Registry
from sparsekit.run import Task, get_task, run_task, task_names

BUILTIN_TASKS = {
    "nystrom",
    "sampler",
    "sparse-coding",
    "kernel-kmeans",
    "mmd",
    "three-sample",
    "quickmeans",
    "palm4msa",
    "gram",
    "out-of-sample",
    "omp-forest",
    "kernel-ridge",
    "frank-wolfe-recovery",
    "nn",
    "label-cost",
    "nystrom-classifier",
}


def _mean(ctx):
    (X,) = ctx.need("X")
    return {"scaled_mean": float(ctx.params["scale"] * X.mean())}


MEAN = Task("test-mean-hook", _mean, params={"scale": 1.0}, summary="scaled mean of X")


class _TaskPlugin:
    def __init__(self, *tasks):
        self.tasks = tasks

    @hookimpl
    def sparsekit_tasks(self):
        for task in self.tasks:
            yield task.registration()


def test_builtin_tasks_are_registered_through_the_hook():
    infos = Registry(entry_points=False).list("task")
    assert {i.name for i in infos} == BUILTIN_TASKS
    assert {i.plugin for i in infos} == {"sparsekit.run._plugin", "sparsekit.experiments._plugin"}
    assert {i.name for i in infos if i.plugin == "sparsekit.experiments._plugin"} == {
        "quickmeans",
        "frank-wolfe-recovery",
        "nn",
        "label-cost",
        "nystrom-classifier",
    }
    assert BUILTIN_TASKS <= set(task_names())


def test_list_family_task_shows_the_tasks(capsys):
    assert main(["list", "--family", "task"]) == 0
    out = capsys.readouterr().out
    for name in BUILTIN_TASKS:
        row = next(line for line in out.splitlines() if f"| {name} " in line)
        assert "| task " in row
    assert main(["list"]) == 0  # and in a table of their own under the components
    out = capsys.readouterr().out
    assert "tasks of `sparsekit run`" in out and "| frank-wolfe-recovery " in out


def test_plugin_task_runs_and_names_are_case_and_dash_insensitive():
    reg = Registry(entry_points=False, plugins=[_TaskPlugin(MEAN)])
    X = np.arange(6.0).reshape(3, 2)
    assert run_task("Test_Mean_Hook", {"scale": 2.0}, {"X": X}, registry=reg) == {
        "scaled_mean": pytest.approx(2 * X.mean())
    }
    assert get_task("test-mean-hook", reg) is MEAN
    with pytest.raises(
        UnknownComponentError, match="unknown task 'test-mean-hok'.*Did you mean 'test-mean-hook'"
    ):
        get_task("test-mean-hok", reg)


def test_plugin_task_claiming_a_builtin_name_is_skipped_with_a_warning():
    clash = Task("nystrom", _mean, params={"scale": 1.0})
    reg = Registry(entry_points=False, plugins=[_TaskPlugin(clash)])
    with pytest.warns(ComponentConflictWarning, match="'nystrom' is already taken by built-in"):
        task = get_task("nystrom", reg)
    assert task is not clash and task.run.__module__ == "sparsekit.run.task_nystrom"
    assert [(s.family, s.name) for s in reg.skipped()] == [("task", "nystrom")]


def test_kernel_functions_are_wrapped_by_get_kernel_not_by_the_registry():
    from sparsekit.kernels.base import CallableKernel

    X = np.arange(6.0).reshape(3, 2)
    k = sparsekit.get_kernel(lambda A, B: A @ B.T)
    assert isinstance(k, CallableKernel)
    np.testing.assert_allclose(k(X, X), X @ X.T)
    with pytest.raises(TypeError, match=r"registered name \(str\), got function; .*resolve"):
        Registry(entry_points=False).get("kernel", lambda A, B: A @ B.T)


def test_one_rule_for_names_and_hints():
    from sparsekit._names import closest_match, did_you_mean, normalize_name
    from sparsekit._validation import check_option

    assert normalize_name(" Sparse_Coding ") == "sparse-coding"
    assert closest_match("nystrm", ["nystrom", "sampler"]) == "nystrom"
    assert closest_match(3, [1, 2, 30]) == 30  # options returned as given
    assert did_you_mean("zzz", ["nystrom"]) == ""
    assert check_option("Line_Search", "step", ["line-search", "2/(k+2)"]) == "line-search"
    with pytest.raises(ValueError, match="Did you mean 'line-search'"):
        check_option("line-serch", "step", ["line-search", "2/(k+2)"])
