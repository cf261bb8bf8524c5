"""The CI's mypy baseline check: normalised entries, multiset comparison, new errors fail."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "mypy_baseline.py"

OUTPUT = """\
sparsekit/a.py:12: error: Need type annotation for "out"  [var-annotated]
sparsekit/a.py:40:5: error: Need type annotation for "out"  [var-annotated]
sparsekit/a.py:41: note: Perhaps you need "Callable[...]"?
sparsekit\\b.py:7: error: Name "f" already defined on line 3  [no-redef]
Found 3 errors in 2 files (checked 2 source files)

"""


def _module():
    spec = importlib.util.spec_from_file_location("mypy_baseline", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_normalise_drops_line_numbers_notes_and_summary():
    mb = _module()
    assert mb.normalise(OUTPUT.splitlines()) == [
        'sparsekit/a.py: var-annotated: Need type annotation for "out"',
        'sparsekit/a.py: var-annotated: Need type annotation for "out"',
        'sparsekit/b.py: no-redef: Name "f" already defined on line N',
    ]


def test_moved_lines_match_the_baseline():
    mb = _module()
    baseline = mb.read_baseline(mb.format_baseline(mb.normalise(OUTPUT.splitlines())))
    moved = OUTPUT.replace(":12:", ":112:").replace(":7:", ":9:").replace("line 3", "line 5")
    assert mb.compare(mb.normalise(moved.splitlines()), baseline) == ([], [])


def test_compare_is_a_multiset_difference():
    mb = _module()
    baseline = ["p: c: x", "p: c: x", "p: c: y"]
    # a third copy of x is new even though x is in the baseline; y is gone: fixed
    new, fixed = mb.compare(["p: c: x", "p: c: x", "p: c: x", "q: c: z"], baseline)
    assert new == ["p: c: x", "q: c: z"]
    assert fixed == ["p: c: y"]


def test_read_baseline_skips_comments_and_blank_lines():
    mb = _module()
    text = "# header\n\np: c: x\n  p: c: y  \n"
    assert mb.read_baseline(text) == ["p: c: x", "p: c: y"]


def test_main_fails_on_new_errors_and_reports_fixed(tmp_path, monkeypatch, capsys):
    mb = _module()
    baseline = tmp_path / "mypy-baseline.txt"
    baseline.write_text(mb.format_baseline(["sparsekit/a.py: var-annotated: gone"]))
    monkeypatch.setattr(mb, "BASELINE", baseline)
    monkeypatch.setattr(mb, "run_mypy", lambda: OUTPUT.splitlines())
    assert mb.main([]) == 1
    out = capsys.readouterr().out
    assert "1 baseline error(s) no longer occur" in out
    assert "sparsekit/a.py: var-annotated: gone" in out
    assert "3 new mypy error(s)" in out

    assert mb.main(["--update"]) == 0
    capsys.readouterr()
    assert mb.main([]) == 0
    assert "no new errors (3 known, baseline 3)" in capsys.readouterr().out
