"""Progress of the slow paths, and the memory check before n x n allocations."""

import configparser
import io
import sys
import threading
import time
import types
import warnings

import numpy as np
import pytest

import sparsekit
from sparsekit._runtime import memory as _memory, progress as _progress
from sparsekit._runtime.progress import Progress, iterate, progress_mode, show_progress, tracked
from sparsekit.samplers import (
    DACRLSSampler,
    ExactRLSSampler,
    GreedyTraceSampler,
    RecursiveRLSSampler,
)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_forced_progress_prints_plain_lines_off_a_terminal():
    stream = io.StringIO()
    with Progress(3, "blocks of work", unit="block", verbose=True, stream=stream) as bar:
        for _ in range(3):
            bar.update()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("blocks of work: 0/3 block (")
    assert lines[-1].startswith("blocks of work: 3/3 block in ") and lines[-1].endswith(" s")


def test_auto_is_silent_off_a_terminal_and_for_quick_work_on_one(monkeypatch):
    monkeypatch.delenv("SPARSEKIT_PROGRESS", raising=False)
    stream = io.StringIO()
    with Progress(3, "quiet", stream=stream) as bar:
        bar.update(3)
    assert not bar.active and stream.getvalue() == ""
    tty = _Terminal()
    with Progress(3, "quick", stream=tty) as bar:  # tqdm waits DELAY_S before drawing
        bar.update(3)
    assert tty.getvalue().strip() == ""


def test_forced_progress_on_a_terminal_draws_a_tqdm_bar():
    pytest.importorskip("tqdm")
    tty = _Terminal()
    with Progress(4, "drawing", unit="step", verbose=True, stream=tty) as bar:
        bar.update(4)
    assert "drawing" in tty.getvalue() and "4/4" in tty.getvalue()


def test_mode_precedence(monkeypatch):
    monkeypatch.setenv("SPARSEKIT_PROGRESS", "1")
    assert progress_mode() is True
    with show_progress(False):
        assert progress_mode() is False
        assert progress_mode(verbose=True) is True
    monkeypatch.setenv("SPARSEKIT_PROGRESS", "off")
    assert progress_mode() is False
    monkeypatch.setenv("SPARSEKIT_PROGRESS", "auto")
    assert progress_mode() == "auto"
    assert sparsekit.show_progress is show_progress


def test_tracked_counts_calls_from_threads_and_closes():
    calls = []
    with show_progress():
        work = tracked(calls.append, 40, "threads")
    workers = [
        threading.Thread(target=lambda i=i: [work(i * 10 + j) for j in range(10)]) for i in range(4)
    ]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert sorted(calls) == list(range(40))
    assert work.__closure__ is not None
    bar = next(c.cell_contents for c in work.__closure__ if isinstance(c.cell_contents, Progress))
    assert bar.count == 40 and not bar.active


def test_iterate_closes_on_break(capsys):
    with show_progress():
        for i in iterate(range(10), "loop"):
            if i == 3:
                break
    err = capsys.readouterr().err
    assert "loop: 3/10 it in" in err  # closed at the break, three items done


@pytest.fixture
def data():
    return np.random.default_rng(0).normal(size=(100, 3))


@pytest.mark.parametrize(
    "sampler, expected",
    [
        (ExactRLSSampler(lam=1e-2), "exact RLS, n=100 (Gram, Cholesky): 2/2 step in"),
        (DACRLSSampler(lam=1e-2, block_size=10, n_jobs=2), "dac-rls blocks: 10/10 block in"),
        (RecursiveRLSSampler(lam=1e-2, level_size=10), "recursive-rls levels: "),
        (GreedyTraceSampler(), "greedy-trace landmarks: 5/5 landmark in"),
    ],
)
def test_slow_samplers_report_progress_when_asked(sampler, expected, data, capsys):
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    sampler.sample(data, kernel, 5, random_state=0)
    assert capsys.readouterr().err == ""  # auto, not a terminal: silent
    with show_progress():
        sampler.sample(data, kernel, 5, random_state=0)
    err = capsys.readouterr().err
    assert expected in err
    if isinstance(sampler, RecursiveRLSSampler):
        done = [line for line in err.splitlines() if " in " in line][-1]
        count, total = done.split(": ")[1].split()[0].split("/")
        assert count == total and int(total) >= 2


# -- memory ------------------------------------------------------------------------------------
def test_available_memory_reads_the_system():
    avail = _memory.available_memory()
    assert avail is not None and 0 < avail
    with open("/proc/meminfo") as f:
        total = next(int(r.split()[1]) * 1024 for r in f if r.startswith("MemTotal:"))
    assert avail <= total


def test_exact_rls_refuses_and_names_the_cheaper_samplers(monkeypatch, data):
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    need = _memory.dense_gram_bytes(100)
    monkeypatch.setattr(_memory, "available_memory", lambda: int(need / 0.95))  # 95% of RAM
    with pytest.raises(
        _memory.InsufficientMemoryError, match="exact RLS .*'dac-rls' or 'recursive-rls'"
    ):
        ExactRLSSampler().scores(data, kernel)
    monkeypatch.setattr(_memory, "available_memory", lambda: int(need / 0.6))  # 60% of RAM
    with pytest.warns(_memory.LargeAllocationWarning, match="needs about 0.0 GiB"):
        scores = ExactRLSSampler(lam=1.0).scores(data, kernel)
    assert scores.shape == (100,)
    monkeypatch.setattr(_memory, "available_memory", lambda: int(need / 0.4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ExactRLSSampler(lam=1.0).scores(data, kernel)
    assert isinstance(_memory.InsufficientMemoryError("x"), MemoryError)


def test_float32_gram_counts_its_conversion():
    assert _memory.dense_gram_bytes(10, 4) == 10 * 10 * 12
    assert _memory.dense_gram_bytes(10, 8) == 10 * 10 * 8


def test_greedy_cached_gram_refuses_and_names_streaming(monkeypatch, data):
    monkeypatch.setattr(_memory, "available_memory", lambda: 1000)
    kernel = sparsekit.get_kernel("rbf", gamma=0.5)
    with pytest.raises(MemoryError, match="use cache_gram=False"):
        GreedyTraceSampler(cache_gram=True).sample(data, kernel, 3)
    assert len(GreedyTraceSampler().sample(data, kernel, 3)) == 3  # streaming needs no n x n


def test_unknown_available_memory_checks_nothing(monkeypatch):
    monkeypatch.setattr(_memory, "available_memory", lambda: None)
    _memory.check_allocation(10**18, "anything", "nothing")


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


def test_auto_mode_asks_the_bars_own_stream_whether_it_is_a_terminal(monkeypatch):
    """Oracle: ``isatty`` of the stream given — a terminal stream gets a bar although standard
    output is not one, and a pipe gets nothing although standard output is a terminal."""
    pytest.importorskip("tqdm")
    monkeypatch.delenv("SPARSEKIT_PROGRESS", raising=False)
    monkeypatch.setattr(sys, "stdout", _Stream(tty=False))
    bar = Progress(3, "work", stream=_Stream(tty=True))
    assert bar.active
    bar.close()
    monkeypatch.setattr(sys, "stdout", _Stream(tty=True))
    pipe = _Stream(tty=False)
    with Progress(3, "work", stream=pipe) as quiet:
        quiet.update(3)
    assert not quiet.active and pipe.getvalue() == ""


def test_nested_show_progress_restores_the_outer_setting(monkeypatch):
    """Oracle: the rule "the innermost show_progress context" — leaving the inner block brings
    back the outer one, not the environment's setting."""
    monkeypatch.setenv("SPARSEKIT_PROGRESS", "auto")
    with show_progress(False):
        with show_progress(True):
            assert progress_mode() is True
        assert progress_mode() is False
    assert progress_mode() == "auto"


# -- the rules of the module docstring, with a fake clock and a fake tqdm ----------------------
_STATES = configparser.ConfigParser.BOOLEAN_STATES


@pytest.mark.parametrize(
    "value, expected",
    [
        *_STATES.items(),
        *[(f" {v.upper()} ", state) for v, state in _STATES.items()],
        *[(v.title(), state) for v, state in _STATES.items()],
        *[(v, "auto") for v in ("auto", "", "maybe")],
    ],
)
def test_environment_values(monkeypatch, value, expected):
    """Oracle: ``configparser``'s boolean spellings (``1``/``yes``/``true``/``on`` and their
    opposites), in any case, surrounding blanks ignored; anything else is ``auto``."""
    monkeypatch.setenv("SPARSEKIT_PROGRESS", value)
    assert progress_mode() == expected and type(progress_mode()) is type(expected)


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_plain_lines_at_most_one_per_interval_with_a_fake_clock(monkeypatch):
    """Oracle: a fake clock. A line at the start, one whenever ``PLAIN_INTERVAL_S`` (boundary
    included) has passed since the last line, none for the update that completes the work (the
    final line says it), and the counts add the ``n`` of each update."""
    clock = _Clock()
    monkeypatch.setattr(_progress.time, "perf_counter", clock)
    stream = io.StringIO()
    interval = _progress.PLAIN_INTERVAL_S
    bar = Progress(10, "work", verbose=True, stream=stream)
    for dt, n in [(interval, 2), (interval * 0.95, 1), (interval * 0.1, 3), (interval * 1.5, 4)]:
        clock.now += dt  # at 1.0, 1.95, 2.05 and 3.55 intervals: lines at 1.0 and 2.05
        bar.update(n)
    bar.close()
    bar.close()  # a second close writes nothing
    t = [f"{k * interval:.1f}" for k in (1.0, 2.05, 3.55)]
    assert stream.getvalue().splitlines() == [
        "work: 0/10 it (0.0 s)",
        f"work: 2/10 it ({t[0]} s)",
        f"work: 6/10 it ({t[1]} s)",
        f"work: 10/10 it in {t[2]} s",
    ]


class _FakeTqdm:
    """Stands in for ``tqdm.auto.tqdm``: records its arguments, and whether two threads were
    ever inside ``update`` at once (tqdm's own counters are not thread-safe)."""

    made = []

    def __init__(self, **kwargs):
        self.kwargs, self.n, self.closed = kwargs, 0, False
        self.inside = self.overlap = False
        _FakeTqdm.made.append(self)

    def update(self, n):
        if self.inside:
            self.overlap = True
        self.inside = True
        time.sleep(1e-4)
        self.n += n
        self.inside = False

    def close(self):
        self.closed = True


@pytest.fixture
def fake_tqdm(monkeypatch):
    module = types.ModuleType("tqdm.auto")
    module.tqdm = _FakeTqdm
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", module)
    monkeypatch.setattr(_FakeTqdm, "made", [])
    return _FakeTqdm.made


def test_terminal_bars_delay_and_leave_by_mode(fake_tqdm, monkeypatch):
    """Oracle: tqdm's documented ``delay`` and ``leave`` arguments. On a terminal, ``auto``
    waits ``DELAY_S`` and clears its bar; a forced bar draws at once and stays; ``False``
    (although a terminal) shows nothing."""
    monkeypatch.delenv("SPARSEKIT_PROGRESS", raising=False)
    for verbose, delay, leave in [(None, _progress.DELAY_S, False), (True, 0.0, True)]:
        with Progress(3, "d", unit="u", verbose=verbose, stream=_Terminal()) as bar:
            bar.update(3)
        made = fake_tqdm.pop()
        assert made.kwargs["delay"] == delay and made.kwargs["leave"] is leave
        assert made.kwargs["total"] == 3 and made.n == 3 and made.closed
    tty = _Terminal()
    with Progress(3, "off", verbose=False, stream=tty) as bar:
        bar.update(3)
    assert not bar.active and not fake_tqdm and tty.getvalue() == ""


def test_update_from_threads_enters_the_bar_one_at_a_time(fake_tqdm):
    """Oracle: a fake bar that notes two threads inside its ``update`` at once."""
    bar = Progress(64, "threads", verbose=True, stream=_Terminal())
    workers = [threading.Thread(target=lambda: [bar.update() for _ in range(8)]) for _ in range(8)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    bar.close()
    (made,) = fake_tqdm
    assert not made.overlap and made.n == 64 and bar.count == 64


def test_a_stream_without_isatty_is_not_a_terminal(monkeypatch):
    """Oracle: a write-only object, like a logging handler's stream: ``auto`` stays silent."""
    monkeypatch.delenv("SPARSEKIT_PROGRESS", raising=False)

    class WriteOnly:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    stream = WriteOnly()
    with Progress(3, "log", stream=stream) as bar:
        assert not bar.active
        bar.update(3)
    assert stream.text == ""
