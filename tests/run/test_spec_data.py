"""Data files of a spec: checked before any run starts, paths relative to the spec's folder,
CSV columns read with the pandas installed (pandas 3 reads text as its own string dtype)."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from sparsekit.cli import main
from sparsekit.run import (
    SpecError,
    Task,
    data as data_mod,
    load_spec,
)


@pytest.fixture
def data_sum_task(private_registry):
    """A task reporting what it read: the oracle is NumPy on the same file. Registered in a
    private registry that stands in for the process-wide one (``sparsekit run`` looks there)."""

    def run(ctx):
        (X,) = ctx.need("X")
        return {"n": int(X.shape[0]), "total": float(X.sum())}

    private_registry(Task("test-data-sum", run, params={}), process_wide=True)
    return "test-data-sum"


def _spec(path, task="test-data-sum"):
    return f'task = "{task}"\n\n[data]\nsource = "file"\npath = {json.dumps(str(path))}\n'


def _rows(out):
    return [json.loads(line) for line in (Path(out) / "results.jsonl").read_text().splitlines()]


def test_missing_data_file_is_a_validation_error_with_its_line(tmp_path, capsys, data_sum_task):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(_spec("missing.npy") + "[params]\n")
    with pytest.raises(
        SpecError,
        match=r"s\.toml, line 5: data file .*missing\.npy' does not "
        r"exist \(a relative path is read from the spec's folder",
    ):
        load_spec(spec_file)
    assert main(["run", str(spec_file), "--out", str(tmp_path / "o"), "--repeat", "3"]) == 2
    err = capsys.readouterr().err
    assert "line 5: data file" in err and "does not exist" in err
    assert not (tmp_path / "o").exists()  # no rows, no folder


def test_missing_file_in_a_path_sweep_is_found_before_any_run(tmp_path, capsys, data_sum_task):
    np.save(tmp_path / "a.npy", np.ones((3, 2)))
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(
        f'task = "{data_sum_task}"\n[data]\nsource = "file"\npath = ["a.npy", "b.npy"]\n'
    )
    assert main(["run", str(spec_file), "--out", str(tmp_path / "o")]) == 2
    assert "line 4: data file" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_relative_path_is_read_from_the_spec_folder(tmp_path, monkeypatch, capsys, data_sum_task):
    X = np.random.default_rng(0).standard_normal((7, 3))
    (tmp_path / "project" / "data").mkdir(parents=True)
    np.save(tmp_path / "project" / "data" / "x.npy", X)
    spec_file = tmp_path / "project" / "s.toml"
    spec_file.write_text(_spec("data/x.npy"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["run", "../project/s.toml", "--out", "o"]) == 0, capsys.readouterr()
    (row,) = _rows(elsewhere / "o")
    assert row["status"] == "ok" and row["n"] == 7 and row["total"] == pytest.approx(X.sum())
    # spec.json records the path that was read
    resolved = json.loads((elsewhere / "o" / "spec.json").read_text())["data"]["path"]
    assert Path(resolved) == (tmp_path / "project" / "data" / "x.npy").resolve()


def test_absolute_path_still_works(tmp_path, monkeypatch, capsys, data_sum_task):
    X = np.arange(12.0).reshape(4, 3)
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "specs").mkdir()
    spec_file = tmp_path / "specs" / "s.toml"
    spec_file.write_text(_spec(tmp_path / "x.npy"))
    monkeypatch.chdir(tmp_path / "specs")
    assert main(["run", str(spec_file), "--out", str(tmp_path / "o")]) == 0, capsys.readouterr()
    (row,) = _rows(tmp_path / "o")
    assert row["n"] == 4 and row["total"] == X.sum()
    assert load_spec(spec_file).sections["data"]["path"] == str(tmp_path / "x.npy")


def test_spec_given_as_text_reads_from_base_or_current_folder(tmp_path, monkeypatch, data_sum_task):
    np.save(tmp_path / "x.npy", np.ones((2, 2)))
    spec = load_spec("s.toml", text=_spec("x.npy"), base=tmp_path)
    assert spec.sections["data"]["path"] == str(tmp_path / "x.npy")
    monkeypatch.chdir(tmp_path)
    spec = load_spec("s.toml", text=_spec("x.npy"))
    assert spec.sections["data"]["path"] == str(tmp_path / "x.npy")


def test_path_that_cannot_be_read_as_data_is_a_validation_error(tmp_path, data_sum_task):
    (tmp_path / "folder").mkdir()
    (tmp_path / "x.txt").write_text("1 2\n")
    spec_file = tmp_path / "s.toml"
    for path, message in [
        ("folder", "is a folder; path names a file"),
        ("x.txt", "unsupported file type '.txt'"),
    ]:
        spec_file.write_text(_spec(path))
        with pytest.raises(SpecError, match=rf"line 5: data file .*{message}"):
            load_spec(spec_file)
    spec_file.write_text(_spec("x").replace('"x"', "3"))
    with pytest.raises(SpecError, match="line 5: path must be a string"):
        load_spec(spec_file)


def test_graph_collection_path_is_relative_to_the_spec(tmp_path):
    import networkx as nx

    folder = tmp_path / "graphs"
    folder.mkdir()
    nx.write_edgelist(nx.path_graph(3), folder / "0.edgelist", data=False)
    spec_file = tmp_path / "g.toml"
    spec_file.write_text(
        'task = "gram"\n[data]\nsource = "graphs"\npath = "graphs"\n'
        '[kernel]\nname = "shortest-path"\n'
    )
    assert load_spec(spec_file).sections["data"]["path"] == str(folder)
    spec_file.write_text(spec_file.read_text().replace('"graphs"\n[kernel]', '"nope"\n[kernel]'))
    with pytest.raises(SpecError, match=r"line 4: graph collection .*nope' does not exist"):
        load_spec(spec_file)


# -- CSV columns with the installed pandas -----------------------------------------------------


def _csv_with_text(tmp_path):
    X = np.random.default_rng(1).standard_normal((6, 2))
    colour = ["red", "blue", "red", "green", "blue", "red"]
    path = tmp_path / "mixed.csv"
    with open(path, "w") as fh:
        fh.write("a,colour,b\n")
        for (a, b), c in zip(X, colour):
            fh.write(f"{float(a)!r},{c},{float(b)!r}\n")
    return path, X, colour


def test_csv_text_column_asks_for_target_with_installed_pandas(tmp_path):
    """pandas 3 reads text as StringDtype, which np.issubdtype cannot interpret (a TypeError
    before); the intended message names the column and the target key."""
    path, X, colour = _csv_with_text(tmp_path)
    with pytest.raises(
        ValueError,
        match=r"feature columns must be numeric; \['colour'\] are not "
        r"\(name a label column with target = ",
    ):
        data_mod.file(path)
    d = data_mod.file(path, target="colour")
    np.testing.assert_array_equal(d["X"], X)  # repr round-trips the floats exactly
    assert list(d["y"]) == colour


def test_pandas_extension_dtypes_are_read_by_kind(tmp_path):
    import pandas as pd

    frame = pd.DataFrame(
        {
            "a": pd.array([1, 2, 3], dtype="Int64"),
            "b": [0.5, 1.5, 2.5],
            "name": pd.array(["x", "y", "z"], dtype="string"),
            "flag": [True, False, True],
        }
    )
    frame.to_parquet(tmp_path / "t.parquet")
    with pytest.raises(ValueError, match=r"\['name', 'flag'\] are not"):
        data_mod.file(tmp_path / "t.parquet")
    frame.drop(columns=["name", "flag"]).to_parquet(tmp_path / "n.parquet")
    np.testing.assert_array_equal(
        data_mod.file(tmp_path / "n.parquet")["X"], [[1, 0.5], [2, 1.5], [3, 2.5]]
    )


# -- a graphs folder reads regular files only, of a bounded size -------------------------------


def _graph_folder(tmp_path):
    import networkx as nx

    folder = tmp_path / "g"
    folder.mkdir()
    nx.write_edgelist(nx.path_graph(4), folder / "0.edgelist", data=False)
    return folder


def _load_within(folder, seconds=20.0):
    """``data.graphs(folder)`` in a thread: its outcome, or a failure if it hangs (before: a
    FIFO waited for a writer forever)."""
    import threading

    outcome = []

    def target():
        try:
            outcome.append(data_mod.graphs(folder))
        except Exception as exc:  # the outcome under test
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"reading {folder} hangs"
    return outcome[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
@pytest.mark.parametrize("name", ["1.edgelist", "labels.txt"])
def test_fifo_in_a_graph_folder_is_refused_at_once(tmp_path, name):
    folder = _graph_folder(tmp_path)
    os.mkfifo(folder / name)
    err = _load_within(folder)
    assert isinstance(err, ValueError)
    assert f"{name}' is not a regular file (a FIFO)" in str(err)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_link_to_a_device_in_a_graph_folder_is_refused(tmp_path):
    """A link to ``/dev/zero`` (before: read until memory ran out) is no regular file; a link to
    a regular file is read as the file (oracle: networkx on the file itself)."""
    import networkx as nx

    folder = _graph_folder(tmp_path)
    nx.write_edgelist(nx.cycle_graph(5), tmp_path / "elsewhere.edgelist", data=False)
    (folder / "1.edgelist").symlink_to(tmp_path / "elsewhere.edgelist")
    d = _load_within(folder)
    want = nx.read_edgelist(tmp_path / "elsewhere.edgelist", nodetype=int)
    assert sorted(d["graphs"][1].edges) == sorted(want.edges)
    (folder / "2.txt").symlink_to("/dev/zero")
    err = _load_within(folder)
    assert isinstance(err, ValueError) and "2.txt' is not a regular file (a device)" in str(err)


def test_oversized_graph_file_is_refused_unread(tmp_path):
    """A sparse file past the size limit (never read, so this returns at once)."""
    folder = _graph_folder(tmp_path)
    with open(folder / "1.edgelist", "wb") as fh:
        fh.truncate(data_mod.MAX_GRAPH_FILE_BYTES + 1)
    err = _load_within(folder)
    assert isinstance(err, ValueError)
    assert f"more than the limit of {data_mod.MAX_GRAPH_FILE_BYTES:,} bytes" in str(err)
    (folder / "1.edgelist").unlink()
    (folder / "labels.txt").write_text("0\n")
    assert list(_load_within(folder)["y"]) == [0]


def test_moved_project_resumes_without_running_again(tmp_path, capsys, data_sum_task):
    """A project folder (spec, data, runs) moved elsewhere: the run ids and the spec's identity
    use the data path as the spec writes it, relative to its folder (before: the absolute path,
    so a resume ran every run again and recorded it twice). Oracle: the row count."""
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    np.save(project / "data" / "x.npy", np.ones((3, 2)))
    spec_file = project / "s.toml"
    spec_file.write_text("repeat = 2\n" + _spec("data/x.npy"))
    assert main(["run", str(spec_file), "--out", str(project / "runs")]) == 0
    moved = tmp_path / "moved"
    project.rename(moved)
    capsys.readouterr()
    assert main(["run", str(moved / "s.toml"), "--out", str(moved / "runs")]) == 0
    assert "2 run(s), 2 already in" in capsys.readouterr().out
    rows = _rows(moved / "runs")
    assert len(rows) == 2 and {r["status"] for r in rows} == {"ok"}
    # the path read is the moved one, as spec.json records
    resolved = json.loads((moved / "runs" / "spec.json").read_text())["data"]["path"]
    assert Path(resolved) == (moved / "data" / "x.npy").resolve()


@pytest.mark.parametrize("pandas", [True, False], ids=["pandas", "no-pandas"])
def test_table_with_a_header_and_no_rows_says_so(tmp_path, monkeypatch, pandas):
    """A CSV holding its header only (before: "feature columns must be numeric", as pandas reads
    empty columns as text), and an .npy of zero rows: "has no rows"."""
    if not pandas:
        monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails
    (tmp_path / "empty.csv").write_text("a,b,label\n")
    with pytest.raises(ValueError, match=r"empty\.csv: the data has no rows"):
        data_mod.file(tmp_path / "empty.csv")
    with pytest.raises(ValueError, match=r"empty\.csv: the data has no rows"):
        data_mod.file(tmp_path / "empty.csv", target="label")
    np.save(tmp_path / "empty.npy", np.zeros((0, 3)))
    with pytest.raises(ValueError, match=r"empty\.npy: the data has no rows"):
        data_mod.file(tmp_path / "empty.npy")
    (tmp_path / "one.csv").write_text("a,b,label\n1,2,0\n")  # one row is data
    assert data_mod.file(tmp_path / "one.csv", target="label")["X"].tolist() == [[1.0, 2.0]]


@pytest.mark.parametrize("pandas", [True, False], ids=["pandas", "no-pandas"])
def test_error_about_columns_echoes_a_few_names_only(tmp_path, monkeypatch, pandas):
    """A CSV of 5,000 columns with long names and a missing ``target`` (before: the whole
    header line, 500 KB, in the message and in the error row of every run): the message names
    a few columns and counts them."""
    if not pandas:
        monkeypatch.setitem(sys.modules, "pandas", None)
    names = [f"column_{i:05d}_" + "x" * 90 for i in range(5000)]
    path = tmp_path / "wide.csv"
    path.write_text(",".join(names) + "\n" + ",".join("1" for _ in names) + "\n")
    with pytest.raises(ValueError) as info:
        data_mod.file(path, target="label")
    message = str(info.value)
    assert "no column 'label'" in message and "5,000 columns" in message
    assert names[0][:20] in message and len(message) < 1000 + len(str(path))


def test_error_about_text_columns_echoes_a_few_names_only(tmp_path):
    pytest.importorskip("pandas")
    names = [f"text_{i:04d}_" + "y" * 90 for i in range(3000)]
    path = tmp_path / "text.csv"
    path.write_text(",".join(names) + "\n" + ",".join("a" for _ in names) + "\n")
    with pytest.raises(ValueError, match="feature columns must be numeric") as info:
        data_mod.file(path)
    assert "3,000 columns" in str(info.value) and len(str(info.value)) < 1000 + len(str(path))
