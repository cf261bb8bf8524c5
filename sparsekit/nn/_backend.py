"""Keras' backend for :mod:`sparsekit.nn`, chosen before Keras is first imported.

Keras 3 reads its backend from ``KERAS_BACKEND``, else from ``keras.json`` (in ``KERAS_HOME``,
default ``~/.keras``), else uses TensorFlow, and fails to import when that backend is not
installed. The ``nn`` extra installs JAX, not TensorFlow, so a plain ``pip install
sparsekit[nn]`` would leave ``import sparsekit.nn`` failing. Decision: where Keras is not
imported yet, ``KERAS_BACKEND`` is unset and the backend Keras would pick is not installed, set
``KERAS_BACKEND=jax`` (when JAX is installed). A working configuration is never changed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

#: the package each Keras backend imports
BACKEND_PACKAGES = {
    "tensorflow": "tensorflow",
    "jax": "jax",
    "torch": "torch",
    "numpy": "numpy",
    "openvino": "openvino",
}


def configured_backend() -> str:
    """The backend Keras would use: ``KERAS_BACKEND``, else ``keras.json``'s, else
    ``"tensorflow"`` (Keras' own default)."""
    if os.environ.get("KERAS_BACKEND"):
        return os.environ["KERAS_BACKEND"]
    home = os.environ.get("KERAS_HOME") or str(Path.home() / ".keras")
    try:
        with open(Path(home) / "keras.json", encoding="utf-8") as fh:
            return str(json.load(fh).get("backend", "tensorflow"))
    except (OSError, ValueError):
        return "tensorflow"


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def choose_backend() -> str:
    """Set ``KERAS_BACKEND=jax`` where Keras would otherwise fail to import (module
    docstring); returns the backend Keras will use."""
    backend = configured_backend()
    if "keras" in sys.modules or os.environ.get("KERAS_BACKEND"):
        return backend
    if not _installed(BACKEND_PACKAGES.get(backend, backend)) and _installed("jax"):
        os.environ["KERAS_BACKEND"] = "jax"
        return "jax"
    return backend
