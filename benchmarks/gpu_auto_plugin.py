"""pytest plugin of ``gpu_checks.sh``: ``backend="auto"`` sends every Gram matrix to the GPU.

``backend="auto"`` keeps Gram matrices under ``AUTO_CUDA_MIN_ENTRIES`` entries on the CPU, and
test data is small, so without this plugin the "auto" tests would never reach the device. It
sets the threshold to 0 for the session, refuses to run without a usable device, counts the
Gram matrices and Nyström transforms computed on the device and fails the session if there are
none. Used only by ``gpu_checks.sh`` (``python -m pytest -p gpu_auto_plugin ...`` with this
folder on ``PYTHONPATH``).
"""

import pytest

_counts = {"grams": 0, "nystroem": 0}


def pytest_configure(config):
    from sparsekit.features import _nystrom_cuda
    from sparsekit.kernels import base

    if not base.cuda_usable():
        raise pytest.UsageError("gpu_auto_plugin: no usable CUDA device (cuda_usable() is False)")
    base.AUTO_CUDA_MIN_ENTRIES = 0
    from sparsekit.kernels import _cuda

    gram_init = _cuda.DeviceGram.__init__

    def counted_init(self, *args, **kwargs):
        _counts["grams"] += 1
        gram_init(self, *args, **kwargs)

    _cuda.DeviceGram.__init__ = counted_init
    transform = _nystrom_cuda.transform_on_device

    def counted_transform(*args, **kwargs):
        _counts["nystroem"] += 1
        return transform(*args, **kwargs)

    _nystrom_cuda.transform_on_device = counted_transform


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"backend='auto' free to use the GPU: {_counts['grams']} Gram matrices computed on "
        f"the GPU (DeviceGram), "
        f"{_counts['nystroem']} Nystroem transforms on the device (CuPy)"
    )


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0 and _counts["grams"] == 0:
        session.exitstatus = 1
