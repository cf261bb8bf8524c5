"""What ``sparsekit run`` and ``sparsekit list`` print holds no terminal controls: strings from
a spec or a plugin (``ESC[2J`` clears the screen, ``ESC]0;...BEL`` retitles the window, U+009B
is a CSI, U+202E reverses the text) print as visible escapes."""

import io
import json
import unicodedata

import pytest

import sparsekit.cli as cli
import sparsekit.registry
from sparsekit import Registry
from sparsekit.cli import main
from sparsekit.plugins import Registration, hookimpl
from sparsekit.run import Task

ATTACK = "\x1b[2J\x1b]0;pwned\x07"
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\x00")


def _clean(text):
    return not any(c in text for c in CONTROLS)


def test_printable_escapes_controls_only():
    from sparsekit._terminal import printable, printable_json

    assert printable("été ok |") == "été ok |"
    assert printable(ATTACK) == "\\x1b[2J\\x1b]0;pwned\\x07"
    assert printable("a\x9bb\u202ec\U000e0001") == "a\\x9bb\\u202ec\\U000e0001"
    assert printable("two\nlines", keep="\n") == "two\nlines"
    assert printable("two\nlines") == "two\\nlines"
    text = json.dumps(
        {"k\x9b": ["\u202e", "\U000e0001", ATTACK, "é"]}, ensure_ascii=False, indent=2
    )
    safe = printable_json(text)
    assert _clean(safe) and "\U000e0001" not in safe and "é" in safe
    assert json.loads(safe) == json.loads(text)


@pytest.fixture
def echo_task(private_registry):
    """A task that refuses a label other than "plain", in a private registry that stands in for
    the process-wide one (``sparsekit run`` looks there)."""

    def run(ctx):
        label = ctx.params["label"]
        if label != "plain":
            raise ValueError(f"cannot use label {label}")
        return {"label_out": label}

    private_registry(Task("test-echo", run, params={"label": "plain"}), process_wide=True)


def test_run_rows_print_spec_strings_escaped(tmp_path, capsys, echo_task):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(
        'task = "test-echo"\n[data]\nsource = "iris"\n[params]\n'
        'label = ["plain", "\\u001b[2J\\u001b]0;pwned\\u0007"]\n'
    )
    assert main(["run", str(spec_file), "--out", str(tmp_path / "o")]) == 1
    out = capsys.readouterr().out
    assert _clean(out)
    assert "cannot use label \\x1b[2J\\x1b]0;pwned\\x07" in out  # the error row
    assert main(["run", str(spec_file), "--dry-run"]) == 0
    assert _clean(capsys.readouterr().out)
    # the rows on disk keep the value as written
    lines = (tmp_path / "o" / "results.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert {r["params.label"] for r in rows} == {"plain", ATTACK}


def _evil_plugin():
    class Evil:
        @hookimpl
        def sparsekit_samplers(self):
            yield Registration(
                "evil" + ATTACK.lower(),
                object,
                aliases=("\x9b2Jalias",),
                summary="summary \u202e" + ATTACK,
            )

    reg = Registry(entry_points=False)
    reg.register(Evil(), name="plugin\x1b[31m")
    return reg


def test_run_error_naming_plugin_components_is_escaped(tmp_path, capsys, monkeypatch):
    """An unknown sampler: the message lists the registered names, a plugin's among them."""
    monkeypatch.setattr(sparsekit.registry, "default_registry", _evil_plugin)
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(
        'task = "nystrom"\n[data]\nsource = "blobs"\n[sampler]\nname = "unifrom\\u001b[2J"\n'
    )
    assert main(["run", str(spec_file), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "line 5: unknown sampler" in err and "evil\\x1b[2j\\x1b]0;pwned\\x07" in err
    assert _clean(err)


def test_list_escapes_plugin_names_aliases_and_summaries(capsys, monkeypatch):
    monkeypatch.setattr(cli, "default_registry", _evil_plugin)
    assert main(["list", "--family", "sampler"]) == 0
    out = capsys.readouterr().out
    assert _clean(out)
    row = next(line for line in out.splitlines() if "evil" in line)
    assert "evil\\x1b[2j\\x1b]0;pwned\\x07" in row and "plugin\\x1b[31m" in row
    assert "\\x9b2jalias" in row and "summary \\u202e\\x1b[2J" in row
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert len({line.count("|") for line in rows}) == 1  # the table keeps its columns


def test_list_json_escapes_controls_and_round_trips(capsys, monkeypatch):
    """json.dumps(ensure_ascii=False) escapes only the controls below U+0020: DEL, the C1
    controls and U+202E passed through raw."""
    monkeypatch.setattr(cli, "default_registry", _evil_plugin)
    assert main(["list", "--json", "--family", "sampler"]) == 0
    out = capsys.readouterr().out
    assert _clean(out)
    evil = next(c for c in json.loads(out)["components"] if c["name"].startswith("evil"))
    assert evil["name"] == "evil" + ATTACK.lower() and evil["plugin"] == "plugin\x1b[31m"
    assert evil["aliases"] == ["\x9b2jalias"] and evil["summary"] == "summary \u202e" + ATTACK


#: code points around every kind of non-printable character: C0, DEL, C1, NBSP, soft hyphen,
#: the line and paragraph separators, the bidi controls, BOM, specials, surrogates, private use,
#: tags, unassigned planes
SAMPLE = "".join(
    map(
        chr,
        [
            *range(0x00, 0x300),
            *range(0x2000, 0x2070),
            *range(0xD7FE, 0xE002),
            *range(0xFEFE, 0xFF00),
            *range(0xFFF0, 0x10000),
            *range(0x1F600, 0x1F602),
            *range(0xE0000, 0xE0082),
            0x10FFFF,
        ],
    )
)
#: Python's printable characters (``str.isprintable``), from the Unicode categories
_NOT_PRINTABLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}


def _is_printable(c):
    return c == " " or unicodedata.category(c) not in _NOT_PRINTABLE


def test_printable_escapes_what_unicode_calls_non_printable_as_repr_does():
    """Oracles: ``unicodedata.category`` says which characters are escaped (controls, format
    characters such as the bidi overrides, separators other than the space, surrogates,
    private use, unassigned), and ``repr`` how: Python's own escapes (``\\t``, ``\\x85``,
    ``\\u202e``, ``\\U000e0001``)."""
    from sparsekit._terminal import printable

    expected = "".join(c if _is_printable(c) else repr(c)[1:-1] for c in SAMPLE)
    assert printable(SAMPLE) == expected
    assert printable("tab\there\nand\rthere", keep="\n") == "tab\\there\nand\\rthere"
    assert printable(3) == "3" and printable(None) == "None"


def test_printable_json_leaves_only_printable_text_and_round_trips():
    """Oracles: ``json.loads`` (the escaped text decodes to the same object) and
    ``unicodedata.category`` (every character left is printable, or a newline of the layout)."""
    from sparsekit._terminal import printable_json

    # no lone surrogates: JSON reads two adjacent ones as one pair
    sample = "".join(c for c in SAMPLE if unicodedata.category(c) != "Cs")
    values = {sample[i : i + 40]: sample[i + 40 : i + 80] for i in range(0, len(sample), 80)}
    text = json.dumps(values, ensure_ascii=False, indent=2)
    safe = printable_json(text)
    assert all(_is_printable(c) or c == "\n" for c in safe)
    assert json.loads(safe) == values and safe.count("\n") == text.count("\n")


def test_printable_stream_escapes_keeps_newlines_and_flushes():
    """Oracle: ``repr`` of each control; a recording stream sees the flush."""
    from sparsekit._terminal import PrintableStream

    class Recording(io.StringIO):
        flushed = 0

        def flush(self):
            self.flushed += 1

    inner = Recording()
    stream = PrintableStream(inner)
    stream.write("a" + ATTACK + "\nb\x9b")
    stream.flush()
    assert inner.getvalue() == "a" + repr(ATTACK)[1:-1] + "\nb" + repr("\x9b")[1:-1]
    assert inner.flushed == 1 and stream.getvalue() == inner.getvalue()
