"""Shared test configuration.

CUDA kernels are tested against the CPU ones on every run through Numba's simulator; on a
machine with a GPU, run the suite with NUMBA_ENABLE_CUDASIM=0 to test the real device.
The variable must be set before Numba is first imported, hence at the top of this file.
"""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    """The two floating dtypes the library computes in: each test that takes it runs for both."""
    return request.param


@pytest.fixture
def private_registry(monkeypatch):
    """``private_registry(*tasks, process_wide=False)``: a new registry of the built-in
    components (no installed plugin) with ``tasks`` (``sparsekit.run.Task``) registered in it.

    A test registers its tasks there, never in the process-wide registry. ``process_wide=True``
    makes it stand in for the process-wide registry until the test ends, for the code that takes
    no ``registry=``: ``sparsekit run`` on the command line and the worker threads of an
    in-process Dask cluster.
    """
    from sparsekit.plugins import Registry, hookimpl

    class TaskPlugin:
        @hookimpl
        def sparsekit_tasks(self):
            return [task.registration() for task in self.tasks]

    def make(*tasks, process_wide=False):
        plugin = TaskPlugin()
        plugin.tasks = tasks
        registry = Registry(entry_points=False, plugins=[plugin])
        if process_wide:
            monkeypatch.setattr("sparsekit.registry._default", registry)
        return registry

    return make
