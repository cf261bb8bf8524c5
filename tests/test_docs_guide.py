"""The ``python`` code blocks of the documentation's user guide run as written.

Each page's blocks run in order in one namespace (a page is one session). A top-level
``print(...)  # text`` line states what it prints: the printed line must begin the comment
(``# (3000, 100) True`` or ``# True: symmetric``), so the values shown on the pages are checked.
"""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted([DOCS / "index.rst", *(DOCS / "guide").glob("*.rst")])
BLOCK = re.compile(r"^\.\. code-block:: python\n\n((?:(?:   .*)?\n)+)", re.MULTILINE)
PRINT = re.compile(r"^print\(.*\)\s+#\s*(.+)$")


def blocks(page):
    return [
        re.sub(r"^   ", "", b, flags=re.MULTILINE) for b in BLOCK.findall(page.read_text("utf-8"))
    ]


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
def test_guide_page_code_runs(page):
    outputs = []

    def record(*args, **kwargs):
        outputs.append(" ".join(str(a) for a in args))

    namespace = {"__name__": "__docs__", "print": record}
    for code in blocks(page):
        top_prints = [line for line in code.splitlines() if line.startswith("print(")]
        outputs.clear()
        exec(compile(code, f"{page.name}", "exec"), namespace)
        assert len(outputs) == len(top_prints), code
        for line, out in zip(top_prints, outputs):
            m = PRINT.match(line)
            if m:
                assert m.group(1).strip().startswith(out), f"{page.name}: {line!r} printed {out!r}"


def test_every_guide_page_has_a_snippet():
    """Each guide page opens with runnable Python code (the plugin guide is docs/plugins.md,
    whose code blocks tests/test_plugins.py checks; the experiments page opens with commands;
    the benchmark tables are benchmarks/README.md)."""
    for page in (DOCS / "guide").glob("*.rst"):
        if page.name in {"index.rst", "experiments.rst", "benchmarks.rst"}:
            continue
        assert blocks(page), page.name


def test_performance_page_quotes_ratios_of_the_benchmark_tables():
    """ "Threads and performance" is a page to read: it includes no table file, and each headline
    ratio it quotes is in the section of benchmarks/README.md that names the ratio's script
    (the oracle), whose tables have their own page."""
    page = (DOCS / "guide" / "performance.rst").read_text("utf-8")
    assert ".. include::" not in page and len(page.split()) < 2500
    assert "benchmarks/README.md" in (DOCS / "guide" / "benchmarks.rst").read_text("utf-8")
    readme = (DOCS.parent / "benchmarks" / "README.md").read_text("utf-8")
    sections = re.split(r"^### ", readme, flags=re.MULTILINE)[1:]
    rows = re.findall(
        r"^   \* - (.+)\n     - (.+)\n     - ([\d.–]+)×\n     - ``(\w+\.py)``$", page, re.MULTILINE
    )
    assert len(rows) >= 5
    for what, anchor, ratio, script in rows:
        section = "\n".join(s for s in sections if f"`{script}`" in s.splitlines()[0])
        assert section, script
        for value in ratio.split("–"):
            assert re.search(rf"\b{re.escape(value)}[x×]", section), (what, anchor, value, script)
