"""Progress of long computations: a ``tqdm`` bar on a terminal, plain lines when asked.

Whether progress shows, first rule that applies:

1. a ``verbose=True/False`` argument of the call;
2. the innermost :func:`show_progress` context (``with sparsekit.show_progress(): ...``);
3. the environment variable ``SPARSEKIT_PROGRESS`` (``1``/``0``, or ``auto``);
4. ``auto``: a bar when standard error is a terminal, shown only once the work has lasted
   ``DELAY_S`` seconds (quick calls print nothing); never in a pipe, a log file or a test.

On a terminal the bar is ``tqdm``'s when it is installed (an optional dependency); elsewhere, or
without ``tqdm``, progress that was asked for explicitly is printed as plain lines, at most one
every ``PLAIN_INTERVAL_S`` seconds and one at the end.
"""

from __future__ import annotations

import contextvars
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

ENV = "SPARSEKIT_PROGRESS"
DELAY_S = 1.0
PLAIN_INTERVAL_S = 2.0

_MODE: contextvars.ContextVar = contextvars.ContextVar("sparsekit_progress", default=None)


@contextmanager
def show_progress(enabled: bool = True) -> Iterator[None]:
    """Show (or, with ``False``, hide) progress bars of the calls made inside the block.

    Parameters
    ----------
    enabled : bool, default True
        Show (True) or hide (False) the progress bars.

    Yields
    ------
    None
        Nothing: use it as ``with sparsekit.show_progress(): ...``.
    """
    token = _MODE.set(bool(enabled))
    try:
        yield
    finally:
        _MODE.reset(token)


def progress_mode(verbose=None):
    """``True``, ``False`` or ``"auto"`` for a call with argument ``verbose`` (module rules)."""
    if verbose is not None:
        return bool(verbose)
    mode = _MODE.get()
    if mode is not None:
        return mode
    env = os.environ.get(ENV, "auto").strip().lower()
    if env in ("1", "true", "yes", "on"):
        return True
    if env in ("0", "false", "no", "off"):
        return False
    return "auto"


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """A progress counter: ``update(n)`` from any thread, ``close()`` (or a ``with`` block).

    Parameters
    ----------
    total : int
        Units of work in all.
    desc : str
        What is being done (``"dac-rls blocks"``).
    unit : str
    verbose : bool, optional
        Force progress on or off (see the module rules).
    stream : file, optional
        Default ``sys.stderr``.
    """

    def __init__(self, total, desc, unit="it", verbose=None, stream=None):
        self.total, self.desc, self.unit = int(total), desc, unit
        self.count = 0
        self._stream = sys.stderr if stream is None else stream
        self._lock = threading.Lock()
        self._bar = None
        self._plain = False
        self._t0 = self._last = time.perf_counter()
        mode = progress_mode(verbose)
        terminal = _is_terminal(self._stream)
        if mode is False or (mode == "auto" and not terminal):
            return
        if terminal:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(
                    total=self.total,
                    desc=desc,
                    unit=unit,
                    file=self._stream,
                    delay=DELAY_S if mode == "auto" else 0.0,
                    leave=mode is True,
                    dynamic_ncols=True,
                )
                return
        self._plain = mode is True
        if self._plain:
            self._write()

    @property
    def active(self) -> bool:
        """Whether anything is shown."""
        return self._bar is not None or self._plain

    def _write(self, final=False):
        elapsed = time.perf_counter() - self._t0
        end = f" in {elapsed:.1f} s" if final else f" ({elapsed:.1f} s)"
        print(
            f"{self.desc}: {self.count}/{self.total} {self.unit}{end}",
            file=self._stream,
            flush=True,
        )

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.count += n
            if self._bar is not None:
                self._bar.update(n)
            elif self._plain:
                now = time.perf_counter()
                if now - self._last >= PLAIN_INTERVAL_S and self.count < self.total:
                    self._last = now
                    self._write()

    def describe(self, desc: str) -> None:
        """Show ``desc`` as the bar's description from now on (a bar only)."""
        with self._lock:
            if self._bar is not None:
                self._bar.set_description(desc)

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
            elif self._plain:
                self._plain = False
                self._write(final=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def progress(total, desc, unit="it", verbose=None) -> Progress:
    """A :class:`Progress` for ``total`` units of ``desc`` (use it in a ``with`` block)."""
    return Progress(total, desc, unit=unit, verbose=verbose)


def iterate(iterable, desc, total=None, unit="it", verbose=None):
    """Yield from ``iterable``, counting each item (closes when the loop ends or breaks)."""
    if total is None:
        total = len(iterable)
    with Progress(total, desc, unit=unit, verbose=verbose) as bar:
        for item in iterable:
            yield item
            bar.update()


def tracked(work, total, desc, unit="it", verbose=None):
    """``work`` wrapped to count its calls (from any thread); the bar closes after ``total``."""
    bar = Progress(total, desc, unit=unit, verbose=verbose)
    if not bar.active:
        return work

    def counted(*args, **kwargs):
        out = work(*args, **kwargs)
        bar.update()
        if bar.count >= bar.total:
            bar.close()
        return out

    return counted
