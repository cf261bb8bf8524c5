"""Memory estimates before a dense n x n allocation: warn, or refuse with the cheaper choice.

Available memory is ``MemAvailable`` of ``/proc/meminfo`` (Linux), else the free physical pages
(``os.sysconf``); where neither is readable nothing is checked.
"""
from __future__ import annotations

import os
import warnings

#: Warn when an allocation needs more than this fraction of the available memory ...
WARN_FRACTION = 0.5
#: ... and refuse it above this fraction (it would swap or be killed).
RAISE_FRACTION = 0.9


class LargeAllocationWarning(UserWarning):
    """An allocation will take a large part of the available memory."""


class InsufficientMemoryError(MemoryError):
    """An allocation would not fit in the available memory."""


def available_memory() -> int | None:
    """Bytes of memory available to new allocations, or ``None`` when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.1f} GiB"


def check_allocation(nbytes: int, what: str, instead: str) -> None:
    """Warn (:class:`LargeAllocationWarning`) or raise (:class:`InsufficientMemoryError`) when
    ``nbytes`` exceeds ``WARN_FRACTION`` / ``RAISE_FRACTION`` of the available memory.

    ``what`` names the computation, ``instead`` the cheaper way (both end up in the message).
    """
    available = available_memory()
    if available is None or nbytes <= WARN_FRACTION * available:
        return
    message = (f"{what} needs about {_gib(nbytes)} for an n x n matrix and {_gib(available)} of "
               f"memory is available; {instead}")
    if nbytes > RAISE_FRACTION * available:
        raise InsufficientMemoryError(message)
    warnings.warn(message, LargeAllocationWarning, stacklevel=3)


def dense_gram_bytes(n: int, itemsize: int = 8) -> int:
    """Bytes of an n x n float64 Gram matrix, plus the kernel's own block when it is float32
    (it is converted to float64 for LAPACK)."""
    return n * n * (8 + (itemsize if itemsize != 8 else 0))
