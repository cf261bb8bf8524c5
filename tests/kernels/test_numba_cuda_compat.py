"""numba-cuda on NumPy >= 2.5: its array overloads load with ``numpy.row_stack`` aliased."""

import importlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sparsekit.kernels import _numba_cuda_compat as compat

# a module that, like numba-cuda's numba.cuda.np.arrayobj, uses numpy.row_stack at import time
FAKE_OVERLOADS = "import numpy\nALIAS = numpy.row_stack\n"


@pytest.fixture
def fake_overloads(tmp_path, monkeypatch):
    name = f"fake_overloads_{tmp_path.name}".replace("-", "_")
    (tmp_path / f"{name}.py").write_text(FAKE_OVERLOADS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_without_the_alias_the_import_fails_and_with_it_succeeds(fake_overloads, monkeypatch):
    monkeypatch.delattr(np, "row_stack", raising=False)  # as on NumPy 2.5
    with pytest.raises(AttributeError, match="row_stack"):
        importlib.import_module(fake_overloads)
    sys.modules.pop(fake_overloads, None)
    module = compat.import_with_row_stack(fake_overloads)
    assert module.ALIAS is np.vstack
    assert not hasattr(np, "row_stack")  # the alias lived only during the import
    assert compat.import_with_row_stack(fake_overloads) is module  # imported once


def test_numpy_with_row_stack_is_left_alone(fake_overloads, monkeypatch):
    sentinel = object()
    monkeypatch.setattr(np, "row_stack", sentinel, raising=False)
    assert compat.import_with_row_stack(fake_overloads).ALIAS is sentinel
    assert np.row_stack is sentinel


def test_a_missing_module_is_skipped(monkeypatch):
    monkeypatch.delattr(np, "row_stack", raising=False)
    assert compat.import_with_row_stack("sparsekit_no_such_module.arrayobj") is None
    assert compat.import_with_row_stack("numba.cuda.no_such_package.arrayobj") is None
    assert not hasattr(np, "row_stack")


def test_cuda_modules_load_the_overloads_before_their_kernels(tmp_path):
    # a fresh interpreter without numpy.row_stack: importing the CUDA modules runs the
    # compatibility import first, and their kernels then run (on the simulator here)
    (tmp_path / "fake_overloads_fresh.py").write_text(FAKE_OVERLOADS)
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import sparsekit  # (and SciPy) with the NumPy of this machine; _cuda is not loaded yet
        from sparsekit.kernels import _numba_cuda_compat
        assert "sparsekit.kernels._cuda" not in sys.modules
        # Numba's CPU overloads test the NumPy version (older than 2.5 here) before using
        # row_stack: load them with the real NumPy
        import numba.np.arrayobj
        if hasattr(np, "row_stack"):  # as NumPy 2.5: neither the attribute nor in __all__
            del np.row_stack
            np.__all__ = [name for name in np.__all__ if name != "row_stack"]
        _numba_cuda_compat.ARRAY_OVERLOADS = "fake_overloads_fresh"
        from sparsekit.kernels import _cuda
        assert sys.modules["fake_overloads_fresh"].ALIAS is np.vstack
        assert not hasattr(np, "row_stack")
        _cuda.probe()
        X = np.random.default_rng(0).random((40, 3))
        K = sparsekit.get_kernel("rbf", gamma=0.5, backend="cuda")(X)
        want = sparsekit.get_kernel("rbf", gamma=0.5, backend="cpu")(X)
        assert np.allclose(K, want, rtol=1e-12), abs(K - want).max()
        print("ok")
    """)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_graph_cuda_module_loads_the_overloads_before_its_kernels(tmp_path):
    # as the vector kernels' CUDA module does (the test above): importing the
    # shortest-path CUDA module alone runs the compatibility import before its kernel compiles
    (tmp_path / "fake_overloads_graph.py").write_text("import numpy\nALIAS = numpy.row_stack\n")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import sparsekit
        from sparsekit.kernels import _numba_cuda_compat
        import numba.np.arrayobj
        if hasattr(np, "row_stack"):
            del np.row_stack
            np.__all__ = [name for name in np.__all__ if name != "row_stack"]
        _numba_cuda_compat.ARRAY_OVERLOADS = "fake_overloads_graph"
        assert "sparsekit.kernels._cuda" not in sys.modules
        from sparsekit.kernels.graph import _apsp_cuda
        assert "sparsekit.kernels._cuda" not in sys.modules
        assert sys.modules["fake_overloads_graph"].ALIAS is np.vstack
        assert not hasattr(np, "row_stack")
        print("ok")
    """)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
