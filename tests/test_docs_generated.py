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


def _autosummaries(page):
    """``[(has a toctree, names)]`` of the autosummary directives of an API module page."""
    blocks = []
    for block in page.split(".. autosummary::")[1:]:
        lines = []
        for line in block.splitlines()[1:]:
            if line and not line.startswith("   "):
                break
            lines.append(line.strip())
        names = {line for line in lines if line and not line.startswith(":")}
        blocks.append((":toctree: generated/" in lines, names))
    return blocks


def test_api_pages_list_every_name_of_every_all(ext, tmp_path):
    ext.write_api(tmp_path)
    modules = ext.public_modules()
    assert {"sparsekit", "sparsekit.stats", "sparsekit.run", "sparsekit.kernels"} <= set(modules)
    assert "sparsekit.solvers.omp" in modules and "sparsekit.solvers" in modules
    index = (tmp_path / "api" / "index.rst").read_text()
    pages = {}  # object -> the listings that get a page
    for name in modules:
        assert f"   {name}\n" in index
        page = (tmp_path / "api" / f"{name}.rst").read_text()
        module = importlib.import_module(name)
        expected = {n for n in module.__all__ if not n.startswith("__")}
        if not expected:  # a package of modules only: its page is its docstring
            assert ".. autosummary::" not in page, name
            continue
        blocks = _autosummaries(page)
        assert set().union(*(names for _, names in blocks)) == expected, name
        for item in set().union(*(names for toctree, names in blocks if toctree)):
            pages.setdefault(ext._object_key(name, item), []).append(f"{name}.{item}")
    # one page per object (no duplicate search hits), at its public path
    assert all(len(listings) == 1 for listings in pages.values()), [
        v for v in pages.values() if len(v) > 1
    ]
    found = {listing for listings in pages.values() for listing in listings}
    assert {"sparsekit.Nystroem", "sparsekit.SparseFactors"} <= found
    assert "sparsekit.features.nystrom.Nystroem" not in found


def test_each_object_has_one_primary_listing_at_its_public_path(ext):
    """Oracle: brute force over every listing of every object: the primary listing is in a
    module with the fewest dotted parts, among the listings not named like a module."""
    modules = ext.public_modules()
    primary = ext.primary_listings(modules)
    assert "sparsekit.Nystroem" in primary
    assert "sparsekit.features.nystrom.Nystroem" not in primary
    assert "sparsekit.features.Nystroem" not in primary
    assert "sparsekit.dask.gram.gram" in primary  # sparsekit.dask.gram is a module
    listings = {}
    for name in modules:
        for item in importlib.import_module(name).__all__:
            if not item.startswith("__"):
                listings.setdefault(ext._object_key(name, item), []).append(f"{name}.{item}")
    for names in listings.values():
        chosen = [n for n in names if n in primary]
        assert len(chosen) == 1, names
        names = [n for n in names if n not in modules] or names  # a module's name: passed over
        depth = min(n.count(".") for n in names)
        assert chosen[0].count(".") == depth, (chosen, names)
    aliases = ext.listing_aliases(modules)
    assert aliases["sparsekit.features.nystrom.Nystroem"] == "sparsekit.Nystroem"
    assert not set(aliases) & primary


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
