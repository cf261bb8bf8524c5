"""Start-up: a fresh process's first calls import nothing they do not use."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: modules that no CPU kernel, sampler, solver or Nystroem call needs; each costs 0.05-1 s of
#: CPU at import
HEAVY = (
    "numba.cuda",
    "sklearn",
    "pandas",
    "scipy.sparse.linalg",
    "scipy.optimize",
    "scipy.spatial",
    "dask",
)

#: first calls of the entry points of issue 18 (item 5), CPU path, an "auto" backend that asks
#: for the device (600 x 600 Gram matrices are above AUTO_CUDA_MIN_ENTRIES)
CHILD = """
import json, sys
import numpy as np
import sparsekit
rng = np.random.default_rng(0)
X = rng.random((600, 16))
D = rng.standard_normal((64, 256))
D /= np.linalg.norm(D, axis=0)
Y = D[:, :8] @ rng.random((8, 20))
rbf = sparsekit.get_kernel("rbf", gamma=0.5)
for name in ("rbf", "chi2", "laplacian"):
    sparsekit.get_kernel(name)(X)
for name in ("uniform", "rls", "dac-rls"):
    sparsekit.get_sampler(name).sample(X, rbf, 40, 0)
sparsekit.get_solver("omp", n_nonzero_coefs=8).solve(D, Y)
sparsekit.get_solver("mp", max_iter=8).solve(D, Y)
sparsekit.Nystroem("rbf", n_components=40, random_state=0).fit_transform(X)
sparsekit.SparseCoder(D.T, solver_params={"n_nonzero_coefs": 8}).fit_transform(Y.T)
print("MODULES " + json.dumps(sorted(sys.modules)))
"""


def _child_env():
    # the session's Numba cache (warm after the first run): the test is about imports
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_ENABLE_CUDASIM", None)  # the real probe, as a user's process runs it
    return env


def _modules(code):
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=_child_env(),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    line = [x for x in done.stdout.splitlines() if x.startswith("MODULES ")][-1]
    return set(json.loads(line[8:]))


def _numba_sees_a_device():
    code = "from numba import cuda; print(cuda.is_available())"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=_child_env(),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip() == "True"


def test_first_calls_import_no_heavy_module():
    loaded = _modules(CHILD)
    heavy = set(HEAVY)
    if _numba_sees_a_device():  # a CUDA machine: the probe rightly loads numba.cuda
        heavy.discard("numba.cuda")
    assert not sorted(m for m in loaded if m in heavy)


def test_driver_check_agrees_with_numba():
    # the cheap check may only say "no driver" where Numba finds none either
    code = (
        "from sparsekit.kernels.base import _cuda_driver_loadable\n"
        "from numba import cuda\n"
        "print(_cuda_driver_loadable(), cuda.is_available())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=_child_env(),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    loadable, available = done.stdout.split()
    assert loadable == "True" or available == "False"
