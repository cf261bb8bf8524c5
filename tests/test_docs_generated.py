"""The pages that the documentation generates from the code list everything they should.

``docs/_ext/sparsekit_docs.py`` writes the API module pages (every name of every ``__all__``),
the ``sparsekit run`` reference (every built-in task with its parameters, every data source with
its parameters) and the table of built-in components; these tests run it without Sphinx.
"""

import importlib
import importlib.util
from pathlib import Path

import pytest

EXT = Path(__file__).resolve().parents[1] / "docs" / "_ext" / "sparsekit_docs.py"


@pytest.fixture(scope="module")
def ext():
    spec = importlib.util.spec_from_file_location("sparsekit_docs", EXT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_pages_list_every_name_of_every_all(ext, tmp_path):
    ext.write_api(tmp_path)
    modules = ext.public_modules()
    assert {"sparsekit", "sparsekit.stats", "sparsekit.run", "sparsekit.kernels"} <= set(modules)
    assert "sparsekit.solvers.omp" in modules and "sparsekit.solvers" in modules
    index = (tmp_path / "api" / "index.rst").read_text()
    for name in modules:
        assert f"   {name}\n" in index
        page = (tmp_path / "api" / f"{name}.rst").read_text()
        expected = {n for n in importlib.import_module(name).__all__ if not n.startswith("__")}
        if not expected:  # a package of modules only: its page is its docstring
            assert ".. autosummary::" not in page, name
            continue
        listed = {line.strip() for line in page.split(".. autosummary::")[1].splitlines()[3:]}
        assert expected <= listed, name


def test_each_object_has_one_primary_listing(ext):
    modules = ext.public_modules()
    primary = ext.primary_listings(modules)
    assert "sparsekit.linalg.sparse_factors.SparseFactors" in primary  # its home module
    assert "sparsekit.linalg.SparseFactors" not in primary
    assert "sparsekit.SparseFactors" not in primary
    assert "sparsekit.features.nystrom.Nystroem" in primary
    assert "sparsekit.Nystroem" not in primary
    # no object is primary twice
    seen = {}
    for full in primary:
        module, _, item = full.rpartition(".")
        obj = getattr(importlib.import_module(module), item)
        if not isinstance(obj, (int, float, str, tuple)):
            assert id(obj) not in seen, (full, seen.get(id(obj)))
            seen[id(obj)] = full


def test_run_reference_lists_every_builtin_task_and_source(ext, tmp_path):
    from sparsekit.run import data, tasks

    ext.write_run_reference(tmp_path)
    text = (tmp_path / "guide" / "_generated" / "run_reference.rst").read_text()
    for name in tasks.task_names():
        task = tasks.get_task(name)
        if task.run.__module__.startswith("sparsekit."):
            assert f"\n``{name}``\n" in text
            for param in task.params:
                assert f"``{param}``" in text
    for name in data.source_names():
        assert f"``{name}``" in text
        for param in data.source_parameters(name):
            assert f"``{param}" in text


def test_components_table_lists_every_builtin_component(ext, tmp_path):
    import sparsekit

    ext.write_components(tmp_path)
    text = (tmp_path / "guide" / "_generated" / "components.rst").read_text()
    builtin = [i for i in sparsekit.list_components() if str(i.plugin).startswith("sparsekit.")]
    assert builtin
    for info in builtin:
        assert f"``{info.name}``" in text
