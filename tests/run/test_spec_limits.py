"""Specs that would exhaust the process or escape the output folder are refused at validation:
TOML nested thousands deep, sweeps of billions of runs, output names that are paths."""

import functools
import os
import time

import pytest

import sparsekit.run.runner as runner
import sparsekit.run.spec as spec_mod
from sparsekit.cli import main
from sparsekit.run import SpecError, dry_run, load_spec, plan, run_spec

SPEC = """\
task = "nystrom"
[data]
source = "blobs"
n_samples = 60
[kernel]
name = "rbf"
gamma = 0.5
[params]
n_components = [5, 10]
n_eval = 60
"""


# -- TOML nested thousands deep ----------------------------------------------------------------


@pytest.mark.parametrize("depth", [40, 5000])
def test_deeply_nested_toml_is_malformed_toml(tmp_path, capsys, depth):
    """5000 levels overflow tomllib's recursion (a RecursionError before); 40 parse but are
    refused all the same, since JSON output of such values would overflow later."""
    nested = "[" * depth + "1" + "]" * depth
    spec_file = tmp_path / "deep.toml"
    spec_file.write_text(SPEC.replace("n_eval = 60", f"n_eval = {nested}"))
    with pytest.raises(SpecError, match=r"deep\.toml: malformed TOML: .*nested more than"):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert f"error: {spec_file}: malformed TOML" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_deeply_nested_set_value_is_malformed_toml(tmp_path, capsys):
    nested = "[" * 5000 + "]" * 5000
    with pytest.raises(SpecError, match=r"--set value: malformed TOML"):
        load_spec("s.toml", text=SPEC, overrides=[f"params.n_components={nested}"])
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(SPEC)
    assert main(["run", str(spec_file), "--set", f"params.n_components={nested}"]) == 2
    assert "malformed TOML" in capsys.readouterr().err


def test_ordinary_nesting_is_accepted():
    spec = load_spec(
        "s.toml",
        text=SPEC.replace('task = "nystrom"', 'task = "mmd"').replace(
            "n_components = [5, 10]\nn_eval = 60", "classes = [[0, 1], [1, 2]]"
        ),
    )
    assert [p["params"]["classes"] for p in runner.expand(spec)] == [[0, 1], [1, 2]]


# -- sweep size counted before the grid is built -----------------------------------------------

HUGE = (
    SPEC.replace("n_samples = 60", f"n_samples = {list(range(10, 1010))}")
    .replace("n_components = [5, 10]", f"n_components = {list(range(1, 1001))}")
    .replace("n_eval = 60", f"n_eval = {list(range(1, 1001))}")
    .replace('task = "nystrom"', 'task = "nystrom"\nrepeat = 20')
)


def _no_grid(*args, **kwargs):
    raise AssertionError("the grid was built")


def test_huge_sweep_is_refused_quickly_without_building_the_grid(tmp_path, monkeypatch, capsys):
    """2·10¹⁰ runs: refused from the list lengths (before: a MemoryError after minutes)."""
    monkeypatch.setattr(spec_mod, "expand", _no_grid)
    monkeypatch.setattr(runner, "expand", _no_grid)
    monkeypatch.setattr(runner, "plan", _no_grid)
    spec_file = tmp_path / "huge.toml"
    spec_file.write_text(HUGE)
    t0 = time.perf_counter()
    spec = load_spec(spec_file)
    message = r"20,000,000,000 runs, more than the limit of 200; pass --yes"
    with pytest.raises(SpecError, match=message):
        run_spec(spec, out=tmp_path / "o")
    with pytest.raises(SpecError, match=message):
        dry_run(spec)
    for extra in ([], ["--dry-run"]):
        assert main(["run", str(spec_file), "--out", str(tmp_path / "o"), *extra]) == 2
        err = capsys.readouterr().err
        assert "1,000,000,000 grid point(s) x 20 repeat(s) expands to 20,000,000,000 runs" in err
    # a bound for a hang only (the old code ran for minutes); the checks above are the test
    assert time.perf_counter() - t0 < 30.0
    assert not (tmp_path / "o").exists()


def test_dry_run_obeys_the_limit_and_yes_overrides_it(tmp_path, capsys):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text("max_runs = 3\n" + SPEC.replace("[5, 10]", "[2, 3, 4, 5]"))
    assert main(["run", str(spec_file), "--dry-run"]) == 2
    assert "4 runs, more than the limit of 3; pass --yes" in capsys.readouterr().err
    assert main(["run", str(spec_file), "--dry-run", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "4 grid point(s) x 1 repeat(s) = 4 run(s)" in out and "[3]" in out
    assert main(["run", str(spec_file), "--dry-run", "--repeat", "2", "--yes"]) == 0
    assert "= 8 run(s)" in capsys.readouterr().out
    assert main(["run", str(spec_file), "--dry-run", "--set", "max_runs=4"]) == 0


@pytest.mark.parametrize(
    "extra",
    [
        "",
        "repeat = 3\n",
        '[sweep]\nzip = [["data.n_samples", "params.n_components"]]\n',
        'repeat = 2\n[sweep]\nzip = [["data.n_samples", "params.n_components"]]\n',
    ],
)
def test_count_matches_the_plan(extra):
    """The count without the grid equals the length of the plan built from it (brute force)."""
    from sparsekit.run.spec import count_points, count_runs

    text = (
        SPEC.replace("n_samples = 60", "n_samples = [60, 70, 80]")
        .replace("[5, 10]", "[5, 10, 15]")
        .replace("gamma = 0.5", "gamma = [0.5, 1.0]")
    )
    if extra.startswith("repeat"):
        text = extra.split("\n", 1)[0] + "\n" + text
        extra = extra.split("\n", 1)[1]
    spec = load_spec("s.toml", text=text + extra)
    runs = plan(spec)
    assert count_runs(spec) == len(runs)
    assert count_points(spec) == len(runner.expand(spec)) == len(runs) // spec.repeat


# -- output names stay inside runs/ ------------------------------------------------------------


@pytest.mark.parametrize(
    "name, problem",
    [
        ('"../../escaped"', "path separator"),
        ('"/tmp/escaped"', "path separator"),
        ('"..\\\\escaped"', "path separator"),
        ('"C:escaped"', "path separator"),
        ('".."', "starts with '.'"),
        ('".hidden"', "starts with '.'"),
        ('"a\\u001b[2Jb"', "non-printable"),
        ('"a\\u0000b"', "non-printable"),
        ('"a\\nb"', "non-printable"),
        ('""', "non-empty string"),
        ("3", "non-empty string"),
    ],
)
def test_name_that_is_not_a_plain_folder_name_is_refused(name, problem):
    with pytest.raises(SpecError, match=rf"s\.toml, line 1: name .* {problem}.*--out"):
        load_spec("s.toml", text=f"name = {name}\n" + SPEC)


def test_escaping_name_writes_nothing_outside(tmp_path, monkeypatch, capsys):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    spec_file = work / "s.toml"
    spec_file.write_text('name = "../../escaped"\n' + SPEC)
    assert main(["run", str(spec_file)]) == 2
    assert "line 1: name '../../escaped' holds a path separator" in capsys.readouterr().err
    spec_file.write_text(SPEC)
    assert main(["run", str(spec_file), "--set", 'name="../../escaped"']) == 2
    assert not list(tmp_path.rglob("escaped*")) and not (work / "runs").exists()


def test_plain_names_are_accepted():
    for name in ("nystrom-samplers", "run 1", "mesures-été", "a.b", "x..y"):
        assert load_spec("s.toml", text=f'name = "{name}"\n' + SPEC).name == name


def test_default_name_from_a_file_stem_with_controls_is_escaped(tmp_path):
    spec_file = tmp_path / "\x1b[2Jspec.toml"
    spec_file.write_text(SPEC)
    assert load_spec(spec_file).name == "\\x1b[2Jspec"


# -- a spec cannot lift its own run limit ------------------------------------------------------


def test_spec_cannot_raise_its_own_max_runs(tmp_path, monkeypatch, capsys):
    """A spec's ``max_runs = 2·10¹⁰`` (before: obeyed, then the grid of 2·10¹⁰ runs was built
    until memory ran out) only lowers the caller's limit. Oracle: the run count is the product
    of the list lengths times ``repeat`` (1000³ x 20), and nothing is built (``expand`` and
    ``plan`` raise if called)."""
    monkeypatch.setattr(spec_mod, "expand", _no_grid)
    monkeypatch.setattr(runner, "expand", _no_grid)
    monkeypatch.setattr(runner, "plan", _no_grid)
    spec_file = tmp_path / "huge.toml"
    spec_file.write_text("max_runs = 20000000000\n" + HUGE)
    spec = load_spec(spec_file)
    message = r"20,000,000,000 runs, more than the limit of 200; pass --yes"
    with pytest.raises(SpecError, match=message):
        run_spec(spec, out=tmp_path / "o")
    with pytest.raises(SpecError, match=message):
        dry_run(spec)
    for extra in ([], ["--dry-run"], ["--set", "max_runs=20000000000"]):
        assert main(["run", str(spec_file), "--out", str(tmp_path / "o"), *extra]) == 2
        err = capsys.readouterr().err
        assert "20,000,000,000 runs, more than the limit of 200" in err
        assert "only lower" in err
    assert not (tmp_path / "o").exists()


def test_caller_limit_and_spec_limit(tmp_path, capsys):
    """The limit is the smaller of the caller's (``max_runs=``, ``--max-runs``; default 200)
    and the spec's own (brute force: 4 runs counted by the plan)."""
    spec_file = tmp_path / "s.toml"
    spec_file.write_text("max_runs = 1000\n" + SPEC.replace("[5, 10]", "[2, 3, 4, 5]"))
    spec = load_spec(spec_file)
    assert len(dry_run(spec, max_runs=4)) == len(plan(spec)) == 4
    with pytest.raises(SpecError, match="4 runs, more than the limit of 3"):
        dry_run(spec, max_runs=3)
    assert main(["run", str(spec_file), "--dry-run", "--max-runs", "3"]) == 2
    assert "more than the limit of 3" in capsys.readouterr().err
    assert main(["run", str(spec_file), "--dry-run", "--max-runs", "4"]) == 0
    spec_file.write_text("max_runs = 3\n" + SPEC.replace("[5, 10]", "[2, 3, 4, 5]"))
    assert main(["run", str(spec_file), "--dry-run", "--max-runs", "1000"]) == 2
    assert "more than the limit of 3" in capsys.readouterr().err
    assert main(["run", str(spec_file), "--dry-run", "--max-runs", "0"]) == 2
    assert "(--max-runs) must be an integer >= 1" in capsys.readouterr().err


def test_float_repeat_is_refused():
    """``repeat = 1e14`` is a float: refused at validation, before any count."""
    with pytest.raises(SpecError, match=r"repeat must be an integer >= 1, got 100000000000000\.0"):
        load_spec("s.toml", text="repeat = 1e14\n" + SPEC)


# -- size and dotted-key nesting checked before the TOML parser runs ---------------------------


def _deep_key(levels):
    return 'task = "nystrom"\n' + "a" + ".a" * levels + " = 1\n"


@pytest.mark.parametrize(
    "text",
    [
        _deep_key(100_000),  # a.a.a... = 1
        "[" + "a." * 100_000 + "a]\n",  # a table header
        "x = {" + "a." * 100_000 + "a = 1}\n",  # an inline table
    ],
    ids=["key", "header", "inline-table"],
)
def test_deep_dotted_key_is_refused_before_parsing(tmp_path, monkeypatch, capsys, text):
    """A 200 KB spec whose dotted key has 100,000 levels: tomllib's time and memory grow with
    the square of the levels (before: minutes and gigabytes, then refused by the depth check);
    now refused from the text. Oracle: the parser is never called (it raises if it is)."""

    def no_parse(*args, **kwargs):
        raise AssertionError("the TOML parser ran")

    monkeypatch.setattr(spec_mod.tomllib, "loads", no_parse)
    spec_file = tmp_path / "deep.toml"
    spec_file.write_text(text)
    message = r"deep\.toml: malformed TOML: dotted keys nested more than 32"
    with pytest.raises(SpecError, match=message):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--dry-run"]) == 2
    assert "more than 32" in capsys.readouterr().err
    with pytest.raises(SpecError, match=r"--set value: malformed TOML: .*more than 32"):
        spec_mod.parse_value("{" + "a." * 100_000 + "a = 1}")


def test_dots_in_strings_floats_and_comments_are_not_key_levels():
    """Brute force: 40 dots in floats, strings (one of them over several lines) and comments
    are no key levels: the spec loads as the parser reads it."""
    floats = ", ".join(f"{k}.5" for k in range(40))
    text = f'description = """a\n{"." * 40}\n"""\n# {"." * 40}\n' + SPEC.replace(
        "gamma = 0.5", f"gamma = [{floats}]  # {'.' * 40}"
    )
    plot = f'[[plot]]\nx = "params.n_components"\ny = "fit_time"\ntitle = "{"." * 40}"\n'
    spec = load_spec("s.toml", text=text + plot)
    assert len(spec.sections["kernel"]["gamma"]) == 40
    assert spec.description.endswith("." * 40 + "\n")
    assert spec.plots[0]["title"] == "." * 40


def test_oversized_spec_is_refused_unread(tmp_path):
    """A spec file over the size limit is refused from its size (a sparse file of 2 GB: never
    read, so this returns at once)."""
    spec_file = tmp_path / "big.toml"
    with open(spec_file, "wb") as fh:
        fh.truncate(2**31)
    with pytest.raises(SpecError, match=r"big\.toml: .*2,147,483,648 bytes.* limit of 1,048,576"):
        load_spec(spec_file)
    with pytest.raises(SpecError, match=r"limit of 1,048,576"):
        load_spec("s.toml", text=SPEC + "#" * 2**20)


# -- what the spec path names ------------------------------------------------------------------


def _within(func, seconds=20.0):
    import threading

    outcome = []

    def target():
        try:
            outcome.append(func())
        except Exception as exc:  # the outcome under test
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, "hangs"
    return outcome[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_spec_path_that_is_no_file_is_named_for_what_it_is(tmp_path, capsys):
    """A folder or a FIFO given as the spec (before: "does not exist", which it does); a FIFO
    is refused unread (opening it would wait for a writer)."""
    (tmp_path / "folder.toml").mkdir()
    os.mkfifo(tmp_path / "fifo.toml")
    for name, what in [("folder.toml", "a folder"), ("fifo.toml", "a FIFO")]:
        err = _within(functools.partial(load_spec, tmp_path / name))
        assert isinstance(err, SpecError)
        assert f"spec file {str(tmp_path / name)!r} is {what}, not a file" in str(err)
        assert _within(functools.partial(main, ["run", str(tmp_path / name), "--dry-run"])) == 2
        assert "does not exist" not in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_spec(tmp_path / "missing.toml")


@pytest.mark.parametrize("levels", [1, 2, 31, 32, 33, 40])
@pytest.mark.parametrize("padding", ["", " # " + "." * 40])
def test_key_levels_counts_the_parts_of_a_dotted_key(levels, padding):
    """Oracle: the parts of the key split at its dots, for a key alone (the fast path: few
    dots in the text) and next to a comment of 40 dots (the scan)."""
    key = ".".join(f"k{i}" for i in range(levels))
    assert min(spec_mod.key_levels(f"{key} = 1{padding}\n"), 33) == min(levels, 33)
    assert len(key.split(".")) == levels
