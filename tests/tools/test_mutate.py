"""tools/mutate.py: the mutants it makes from a small module (ids, operators, valid code)."""

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mutate():
    spec = importlib.util.spec_from_file_location("mutate_tool", ROOT / "tools" / "mutate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(spec.name, None)


SOURCE = textwrap.dedent('''\
    """Module docstring: 1 < 2 is not mutated."""
    import warnings

    LIMIT = 10


    def f(a, b, *, scale=1.0):
        """Docstring."""
        if a < b and b != 0:
            return a + b * 2
        warnings.warn("careful", stacklevel=2)
        out = -a
        out /= scale
        raise ValueError(f"bad {a + 1}")


    def g(x):
        return x == 0  # pragma: no mutate
    ''')


def test_mutants_of_a_small_module(mutate, tmp_path):
    path = tmp_path / "mod.py"
    path.write_text(SOURCE)
    mutants = mutate.collect(path)
    p = path.as_posix()
    # ids: line and column of the changed token (a binary operator's right operand, a keyword's
    # name, the second operand of and/or)
    expected = {
        "7:22:1.0->0.0",
        "9:8:negate-condition",
        "9:12:<-><=",
        "9:18:and->or",
        "9:23:!=->==",
        "9:23:0->1",
        "10:9:return-None",
        "10:20:+->-",
        "10:24:*->/",
        "10:24:2->3",
        "11:5:drop-call",
        "11:30:drop-kwarg-stacklevel",
        "11:41:2->3",
        "12:11:drop-minus",
        "13:5:/=->*=",
        "13:5:drop-augassign",
        "14:5:drop-raise",
    }
    assert {m.id[len(p) + 1 :] for m in mutants} == expected  # docstrings, f-strings, module
    # constants, import lines and the `pragma: no mutate` line give no mutant
    assert len({m.id for m in mutants}) == len(mutants)
    original = SOURCE.encode()
    for m in mutants:
        mutated = mutate.apply(original, m)
        compile(mutated, "mod.py", "exec")
        changed = [
            i for i, (a, b) in enumerate(zip(original.splitlines(), mutated.splitlines())) if a != b
        ]
        assert changed == [m.line - 1], m.id
    by_id = {m.id[len(p) + 1 :]: m for m in mutants}
    assert b"if (a <= b) and b != 0:" in mutate.apply(original, by_id["9:12:<-><="])
    assert b"warnings.warn('careful')" in mutate.apply(
        original, by_id["11:30:drop-kwarg-stacklevel"]
    )
    assert b"out /= scale\n    pass\n" in mutate.apply(original, by_id["14:5:drop-raise"])


def test_equivalent_list_reads_ids_and_reasons(mutate, tmp_path):
    path = tmp_path / "eq.txt"
    path.write_text("# comment\n\na.py:1:2:op  # a reason\nb.py:3:4:other\n")
    assert mutate.read_equivalent(path) == {"a.py:1:2:op": "a reason", "b.py:3:4:other": ""}
    listed = mutate.read_equivalent(ROOT / "tools" / "mutation_equivalent.txt")
    assert listed and all(reason for reason in listed.values())  # every entry says why


def test_max_total_draws_one_sample_from_all_targets(mutate, tmp_path, capsys):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text(SOURCE)
    b.write_text(SOURCE)
    every = {m.id for m in mutate.collect(a)} | {m.id for m in mutate.collect(b)}

    def listed(*options):
        argv = [str(a), str(b), "--tests", "tests/tools", "--list", *options]
        assert mutate.main(argv) == 0
        return capsys.readouterr().out.split()

    assert set(listed()) == every
    sample = listed("--max-total", "7", "--seed", "3")
    assert len(sample) == len(set(sample)) == 7 and set(sample) <= every
    assert sample == listed("--max-total", "7", "--seed", "3")  # the seed fixes the sample
    assert sample != listed("--max-total", "7", "--seed", "4")
    # one pool, not N per module: a sample of all but one mutant leaves out one mutant in all
    assert len(listed("--max-total", str(len(every) - 1))) == len(every) - 1
    assert {p.split(":")[0] for p in listed("--max-total", str(len(every) - 1))} == {str(a), str(b)}


def test_report_adds_a_total_row_over_several_modules(mutate, capsys):
    from types import SimpleNamespace

    rows = [
        ("p/a.py:1:1:x", "p/a.py", "killed"),
        ("p/a.py:2:1:x", "p/a.py", "survived"),
        ("p/b.py:1:1:x", "p/b.py", "timeout"),
        ("p/b.py:2:1:x", "p/b.py", "survived"),  # listed as equivalent below
        ("p/b.py:3:1:x", "p/b.py", "killed"),
    ]
    results = [mutate.Result(i, mod, 1, "x", st, 0.1, "") for i, mod, st in rows]
    plan = {mutate.ROOT / "p/a.py": [], mutate.ROOT / "p/b.py": []}
    args = SimpleNamespace(json=None, fail_under=0.0)
    assert mutate.report(results, plan, {"p/b.py:2:1:x": "why"}, args) == 0
    lines = capsys.readouterr().out.splitlines()
    total = next(line for line in lines if line.startswith("total"))
    assert total.split() == ["total", "5", "3", "1", "1", "75.0%"]  # 3 killed of 5 - 1
