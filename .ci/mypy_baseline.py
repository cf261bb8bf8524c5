"""Run mypy over the package and fail only on errors that are not in the committed baseline.

mypy is configured in pyproject.toml ([tool.mypy]). Each error line is normalised to
``path: code: message`` (no line or column numbers, so an unrelated edit that moves code does not
break the check) and compared, as a multiset, with ``.ci/mypy-baseline.txt``:

- an error that is not in the baseline (or occurs more often than it lists) is NEW: it is printed
  and the script exits with status 1;
- a baseline entry that no longer occurs is FIXED: it is printed so that the baseline can shrink
  (``python .ci/mypy_baseline.py --update`` rewrites it from the current errors).

Usage: ``python .ci/mypy_baseline.py [--update]`` from the repository root.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

BASELINE = Path(__file__).with_name("mypy-baseline.txt")

# path:line[:column]: error: message  [code]
_ERROR = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+)(?::\d+)?: error: (?P<msg>.*?)\s+\[(?P<code>[a-z0-9-]+)\]\s*$"
)
# messages that quote a line number ("defined on line 12") would break on unrelated edits too
_LINE_REF = re.compile(r"\bline \d+\b")


def normalise(output: Iterable[str]) -> list[str]:
    """Return the error lines of mypy's ``output`` as ``path: code: message`` entries.

    Notes, summaries and blank lines are dropped; paths use forward slashes.
    """
    entries = []
    for line in output:
        match = _ERROR.match(line.rstrip("\r\n"))
        if match is None:
            continue
        path = match["path"].replace("\\", "/")
        msg = _LINE_REF.sub("line N", match["msg"])
        entries.append(f"{path}: {match['code']}: {msg}")
    return entries


def read_baseline(text: str) -> list[str]:
    """Return the entries of a baseline file's ``text`` (blank lines and ``#`` comments skipped)."""
    return [s for s in (line.strip() for line in text.splitlines()) if s and not s.startswith("#")]


def compare(current: Iterable[str], baseline: Iterable[str]) -> tuple[list[str], list[str]]:
    """Compare two multisets of entries.

    Returns
    -------
    new : list of str
        Entries of ``current`` beyond their count in ``baseline`` (sorted, repeated as often as
        they are in excess).
    fixed : list of str
        Entries of ``baseline`` beyond their count in ``current``.
    """
    cur, base = Counter(current), Counter(baseline)
    return sorted((cur - base).elements()), sorted((base - cur).elements())


def format_baseline(entries: Iterable[str]) -> str:
    """Return the text of a baseline file holding ``entries`` (sorted, with a header)."""
    header = (
        "# mypy errors accepted in CI (see .ci/mypy_baseline.py); shrink it, never grow it.\n"
        "# Regenerate with: python .ci/mypy_baseline.py --update\n"
    )
    return header + "".join(f"{e}\n" for e in sorted(entries))


def run_mypy() -> list[str]:
    """Run mypy with the configuration of pyproject.toml; return its output lines."""
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-pretty", "--no-error-summary"],
        capture_output=True,
        text=True,
    )
    # 0: no errors, 1: type errors; anything else is a crash or a usage error
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"mypy failed to run (exit status {proc.returncode})")
    return proc.stdout.splitlines()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--update", action="store_true", help="rewrite the baseline from the current errors"
    )
    args = parser.parse_args(argv)

    current = normalise(run_mypy())
    if args.update:
        BASELINE.write_text(format_baseline(current))
        print(f"{BASELINE}: {len(current)} entries")
        return 0

    baseline = read_baseline(BASELINE.read_text()) if BASELINE.exists() else []
    new, fixed = compare(current, baseline)
    if fixed:
        print(f"{len(fixed)} baseline error(s) no longer occur; remove them from {BASELINE.name}:")
        print("".join(f"  {e}\n" for e in fixed), end="")
    if new:
        print(f"{len(new)} new mypy error(s) (not in {BASELINE.name}):")
        print("".join(f"  {e}\n" for e in new), end="")
        return 1
    print(f"mypy: no new errors ({len(current)} known, baseline {len(baseline)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
