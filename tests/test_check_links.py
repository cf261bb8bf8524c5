"""The CI's internal-link check of the built site finds missing targets and nothing else."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "check_links.py"


def _module():
    spec = importlib.util.spec_from_file_location("check_links", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_links_reports_missing_targets_only(tmp_path, capsys):
    (tmp_path / "api").mkdir()
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "style.css").write_text("")
    (tmp_path / "api" / "page.html").write_text(
        '<a href="../index.html#top">home</a><img src="../_static/missing.png">'
    )
    (tmp_path / "index.html").write_text(
        '<link href="_static/style.css"><a href="api/page.html?x=1">api</a>'
        '<a href="https://example.org/">out</a><a href="#here">here</a><p id="top">'
        '<a href="mailto:a@b.c">mail</a><a href="api/gone.html">gone</a><h2 id="here">'
    )
    check = _module()
    assert check.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "broken link: api/page.html: ../_static/missing.png" in out
    assert "broken link: index.html: api/gone.html" in out
    assert "6 internal links checked, 2 broken" in out
    (tmp_path / "_static" / "missing.png").write_text("")
    (tmp_path / "api" / "gone.html").write_text("")
    assert check.main([str(tmp_path)]) == 0


def test_check_links_reports_missing_anchors_and_external_resources(tmp_path, capsys):
    """A fragment must name an ``id`` (or ``<a name>``) of its page; a script or stylesheet from
    another host fails the site, a plain link to another site does not."""
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "page.html").write_text(
        '<dt id="sparsekit.Nystroem"></dt><a name="legacy"></a>'
        '<a href="#sparsekit.Nystroem">self</a><a href="#gone">self, gone</a>'
    )
    (tmp_path / "index.html").write_text(
        '<a href="api/page.html#sparsekit.Nystroem">ok</a>'
        '<a href="api/page.html#legacy">ok too</a>'
        '<a href="api/page.html#sparsekit.features.nystrom.Nystroem">moved</a>'
        '<a href="https://example.org/page#x">another site</a>'
        '<script src="https://code.jquery.com/jquery.js"></script>'
        '<link rel="stylesheet" href="//cdn.example.org/style.css">'
        '<link rel="icon" href="https://example.org/icon.png">'
    )
    check = _module()
    assert check.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert sorted(out[:-1]) == [
        "broken link: api/page.html: #gone (no such anchor)",
        "broken link: index.html: api/page.html#sparsekit.features.nystrom.Nystroem"
        " (no such anchor)",
        "broken link: index.html: external <link> //cdn.example.org/style.css",
        "broken link: index.html: external <script> https://code.jquery.com/jquery.js",
    ]
    assert out[-1] == "5 internal links checked, 4 broken"
