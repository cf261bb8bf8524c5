"""README.md as written: its tour runs and prints what its comments say, its two quick-start
commands are the ones the installation guide gives, its list of extras is setup.cfg's, and its
relative links name files of the repository."""

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PRINT = re.compile(r"^print\(.*\)\s+#\s*(.+)$")


def fenced(lang):
    return re.findall(rf"^```{lang}\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)


def test_tour_runs_and_prints_what_it_says():
    blocks = fenced("python")
    assert blocks, "the README has no python code block"
    outputs = []

    def record(*args, **kwargs):
        outputs.append(" ".join(str(a) for a in args))

    namespace = {"__name__": "__readme__", "print": record}
    for code in blocks:
        top_prints = [line for line in code.splitlines() if line.startswith("print(")]
        outputs.clear()
        exec(compile(code, "README.md", "exec"), namespace)
        assert len(outputs) == len(top_prints), code
        for line, out in zip(top_prints, outputs):
            m = PRINT.match(line)
            assert m, f"README: {line!r} states no output"
            assert m.group(1).strip().startswith(out), f"README: {line!r} printed {out!r}"


def test_quick_start_commands_match_the_installation_guide():
    """The two commands are the ones users copy: the guide's are the same, letter for letter."""
    commands = [
        line
        for block in fenced("bash")
        for line in block.splitlines()
        if line.startswith("python3 -m venv .venv")
    ]
    assert commands == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/sparsekit demo",
        'python3 -m venv .venv && .venv/bin/pip install ".[test]" '
        "./plugins/sparsekit-extra-kernels ./plugins/sparsekit-example-plugin && "
        ".venv/bin/python -m pytest",
    ]
    guide = (ROOT / "docs" / "guide" / "install.rst").read_text(encoding="utf-8")
    for command in commands:
        assert f"   {command}\n" in guide, command
    # CI runs the test command of step 2 (after installing the same packages)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\npython -m pytest\n" in ci
    assert "./plugins/sparsekit-extra-kernels ./plugins/sparsekit-example-plugin" in ci


def test_relative_links_name_files_of_the_repository():
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert relative, "the README links into the documentation"
    missing = [link for link in relative if not (ROOT / link.split("#")[0]).exists()]
    assert not missing, missing


def test_extras_listed_are_those_of_setup_cfg():
    """The README's "Extras:" sentence names every extra and no other; the oracle is
    setup.cfg's ``[options.extras_require]``, read with configparser."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    extras = set(cfg["options.extras_require"])
    sentence = re.search(r"Extras: (.*?)\.\n", README, flags=re.DOTALL)
    assert sentence, "the README lists no extras"
    named = set(re.findall(r"`([a-z]+)`(?: \(|,|$)", sentence.group(1).replace("\n", " ")))
    assert named == extras, (sorted(extras - named), sorted(named - extras))
