"""What ``import sparsekit`` does to the process environment (the user guide's "Threads")."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (
    "import os, subprocess, sys\n"
    "import sparsekit\n"
    "child = subprocess.run([sys.executable, '-c', "
    "'import os; print(os.environ.get(\"OMP_WAIT_POLICY\"))'], capture_output=True, "
    "text=True).stdout.strip()\n"
    "print(os.environ.get('OMP_WAIT_POLICY'), child)\n"
)


@pytest.mark.parametrize(
    "given, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE"), ("passive", "passive")]
)
def test_import_sets_omp_wait_policy_unless_given(given, expected):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.split()
    assert out == [expected, expected]  # in this process and inherited by a child process
