"""Mutation testing of one module (or package folder) against chosen tests.

Usage (from the repository root)::

    python tools/mutate.py sparsekit/projections/base.py --tests tests/projections
    python tools/mutate.py sparsekit/linalg --tests tests/linalg --max 80 --seed 1
    python tools/mutate.py sparsekit/dask --tests tests/dask --max-total 60   # one package sample

Each mutant is a small, plausible bug made on the module's syntax tree: a comparison swapped
(``<`` and ``<=``, ``>`` and ``>=``, ``==`` and ``!=``, ``is``/``in`` and their negations), an
arithmetic or bitwise operator swapped (``+``/``-``, ``*``/``/``, ``//`` to ``*``, ``|``/``&``,
also in augmented assignments), a constant changed (``0``/``1``, ``n`` to ``n + 1``,
``True``/``False``), a condition negated, ``and``/``or`` swapped, a unary minus or ``not``
removed, a keyword argument removed from a call (an ignored parameter), ``return x`` made
``return None``, or a statement dropped (``raise``, a call such as ``warnings.warn``, an
augmented or attribute/item assignment, ``break``): a safeguard or a step that no test checks.

The package (``sparsekit/``), the tests and the pytest configuration are copied once to a
temporary folder; each mutant is written there (never in the working tree), the tests run with
``pytest -x -q`` under a time limit, and the module is restored. A mutant is *killed* when the
tests fail (or do not even import), *timeout* when they run past the limit (counted as killed),
and *survived* when they pass. Numba's on-disk cache lives in the temporary folder; every
mutated file gets a fresh modification time, so neither Python's bytecode cache nor Numba's
cache can serve a previous mutant's code.

Mutant ids are ``path:line:col:operator`` (1-based line and column of the changed token) and
are stable while the module's text does not change. Mutants judged equivalent (no input can
tell them from the original) are listed in ``tools/mutation_equivalent.txt``, one id per line
followed by ``#`` and the reason; they are left out of the score. A line with the comment
``pragma: no mutate`` is not mutated.

The score of a module is ``killed / (mutants - equivalent)`` (timeouts count as killed). The
run prints a table and each surviving, non-equivalent mutant with its diff; ``--json`` writes
every result. Exit status: 0 when every module reaches ``--fail-under`` (default 0), else 1.
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_EQUIVALENT = ROOT / "tools" / "mutation_equivalent.txt"
COPIED = (
    "sparsekit",
    "tests",
    "setup.cfg",
    "pyproject.toml",
    "README.md",
    "plugins",
    "examples",
    "benchmarks",
    "docs",
)

COMPARE_SWAP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
BINOP_SWAP = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.Pow: ast.Mult,
    ast.Mod: ast.FloorDiv,
}
SYMBOL = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is-not",
    ast.In: "in",
    ast.NotIn: "not-in",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.Pow: "**",
    ast.Mod: "%",
    ast.And: "and",
    ast.Or: "or",
}


@dataclass
class Mutant:
    id: str
    path: str
    line: int
    operator: str
    start: tuple  # (line, byte column) of the replaced source segment
    end: tuple
    replacement: str


@dataclass
class Result:
    id: str
    module: str
    line: int
    operator: str
    status: str  # killed | timeout | survived | equivalent-killed
    seconds: float
    diff: str


# -- mutant generation ----------------------------------------------------------------------------
class _Collector:
    """Walks a module's tree (annotations, f-strings and ``raise`` arguments excluded) and
    lists the mutants of each node."""

    def __init__(self, path, source):
        self.path = path
        self.lines = source.splitlines()
        self.mutants: list[Mutant] = []

    # helpers
    def _skipped_line(self, line):
        return "pragma: no mutate" in self.lines[line - 1]

    def _add(self, at, operator, node, replacement, wrap=True):
        line, col = at.lineno, at.col_offset + 1
        if self._skipped_line(line) or self._skipped_line(node.lineno):
            return
        text = ast.unparse(replacement) if isinstance(replacement, ast.AST) else replacement
        if wrap and isinstance(node, ast.expr):
            text = f"({text})"
        self.mutants.append(
            Mutant(
                f"{self.path}:{line}:{col}:{operator}",
                self.path,
                line,
                operator,
                (node.lineno, node.col_offset),
                (node.end_lineno, node.end_col_offset),
                text,
            )
        )

    # traversal
    def visit(self, node, in_func=False):
        if isinstance(node, (ast.JoinedStr, ast.Raise)):
            if isinstance(node, ast.Raise):
                self._add(node, "drop-raise", node, "pass")
            return
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
            return
        self._mutate(node, in_func)
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and name == "body"
            ):
                body = value
                if (
                    body
                    and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                ):
                    body = body[1:]  # the docstring
                for child in body:
                    self.visit(child, True)
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    self.visit(
                        child, in_func or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    )

    def _mutate(self, node, in_func):
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                new = COMPARE_SWAP.get(type(op))
                if new:
                    m = copy.deepcopy(node)
                    m.ops[i] = new()
                    self._add(node.comparators[i], f"{SYMBOL[type(op)]}->{SYMBOL[new]}", node, m)
        elif isinstance(node, ast.BinOp):
            new = BINOP_SWAP.get(type(node.op))
            if new:
                m = copy.deepcopy(node)
                m.op = new()
                self._add(node.right, f"{SYMBOL[type(node.op)]}->{SYMBOL[new]}", node, m)
        elif isinstance(node, ast.AugAssign):
            new = BINOP_SWAP.get(type(node.op))
            if new:
                m = copy.deepcopy(node)
                m.op = new()
                self._add(node, f"{SYMBOL[type(node.op)]}=->{SYMBOL[new]}=", node, m)
            self._add(node, "drop-augassign", node, "pass")
        elif isinstance(node, ast.BoolOp):
            m = copy.deepcopy(node)
            m.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            self._add(node.values[1], f"{SYMBOL[type(node.op)]}->{SYMBOL[type(m.op)]}", node, m)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
            self._add(
                node,
                "drop-not" if isinstance(node.op, ast.Not) else "drop-minus",
                node,
                node.operand,
            )
        elif isinstance(node, ast.Constant) and in_func:
            v = node.value
            if isinstance(v, bool):
                self._add(node, f"{v}->{not v}", node, ast.Constant(not v))
            elif isinstance(v, (int, float)):
                if v == 0:
                    new = type(v)(1)
                elif v == 1:
                    new = type(v)(0)
                else:
                    new = v + 1
                self._add(node, f"{v!r}->{new!r}", node, ast.Constant(new))
        elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
            self._add(node.test, "negate-condition", node.test, ast.UnaryOp(ast.Not(), node.test))
        elif isinstance(node, ast.Call):
            for i, kw in enumerate(node.keywords):
                if kw.arg is None:
                    continue
                m = copy.deepcopy(node)
                del m.keywords[i]
                self._add(kw, f"drop-kwarg-{kw.arg}", node, m)
        elif isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                self._add(node, "return-None", node, "return None")
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self._add(node, "drop-call", node, "pass")
        elif isinstance(node, ast.Assign) and all(
            isinstance(t, (ast.Subscript, ast.Attribute)) for t in node.targets
        ):
            self._add(node, "drop-assign", node, "pass")
        elif isinstance(node, (ast.Break, ast.Continue)):
            self._add(node, f"drop-{type(node).__name__.lower()}", node, "pass")


def collect(path: Path) -> list[Mutant]:
    try:
        rel = path.resolve().relative_to(ROOT).as_posix()
    except ValueError:  # a file outside the repository: ids use the path as given
        rel = path.as_posix()
    source = path.read_text(encoding="utf-8")
    collector = _Collector(rel, source)
    collector.visit(ast.parse(source))
    data = source.encode("utf-8")
    seen, out = set(), []
    for m in collector.mutants:
        if m.id in seen:
            raise RuntimeError(f"two mutants share the id {m.id}")
        seen.add(m.id)
        compile(apply(data, m), rel, "exec")  # every mutant is valid Python
        out.append(m)
    return out


def apply(source: bytes, m: Mutant) -> bytes:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    a = starts[m.start[0] - 1] + m.start[1]
    b = starts[m.end[0] - 1] + m.end[1]
    return source[:a] + m.replacement.encode() + source[b:]


def diff_of(source: bytes, mutated: bytes, path: str) -> str:
    return "".join(
        difflib.unified_diff(
            source.decode().splitlines(True),
            mutated.decode().splitlines(True),
            path,
            path + " (mutant)",
            n=0,
        )
    )


# -- running --------------------------------------------------------------------------------------
def read_equivalent(path: Path) -> dict[str, str]:
    out = {}
    if path.exists():
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            mid, _, reason = line.partition("#")
            out[mid.strip()] = reason.strip()
    return out


class Sandbox:
    """A temporary copy of the package and tests in which mutants are written and tested."""

    def __init__(self, tests, timeout, python):
        self.dir = Path(tempfile.mkdtemp(prefix="sparsekit-mutate-"))
        for name in COPIED:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(
                    src,
                    self.dir / name,
                    ignore=shutil.ignore_patterns(
                        "__pycache__", "*.egg-info", "build", "_build", "output", ".pytest_cache"
                    ),
                )
            elif src.exists():
                shutil.copy2(src, self.dir / name)
        self.tests = tests
        self.timeout = timeout
        self.python = python
        self.env = dict(
            os.environ,
            NUMBA_CACHE_DIR=str(self.dir / ".numba_cache"),
            NUMBA_ENABLE_CUDASIM=os.environ.get("NUMBA_ENABLE_CUDASIM", "1"),
            PYTHONPATH=str(self.dir),
            MPLBACKEND="Agg",
        )
        self._stamp = time.time() + 10

    def fresh_stamp(self, path):
        # a modification time never used before: stale .pyc files and Numba cache indexes
        # (both keyed on it) are rebuilt instead of loaded
        self._stamp += 2
        os.utime(path, (self._stamp, self._stamp))

    def run_tests(self, timeout=None):
        cmd = [
            self.python,
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            *self.tests,
        ]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=self.dir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout or self.timeout)
            status = "survived" if proc.returncode == 0 else "killed"
            if proc.returncode == 5:
                status = "no-tests"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            status = "timeout"
        return status, time.perf_counter() - t0, out.decode(errors="replace")

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("targets", nargs="+", help="module files or package folders under sparsekit/")
    ap.add_argument(
        "--tests",
        nargs="+",
        required=True,
        help="test files, folders or node ids (file::test) to run",
    )
    ap.add_argument(
        "--max", type=int, default=None, help="test a random sample of N mutants per module"
    )
    ap.add_argument(
        "--max-total",
        type=int,
        default=None,
        help="test a random sample of N mutants drawn from all the targets together "
        "(a package's score from one sample; the report adds a total row)",
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    ap.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per mutant (default: 3 x the unmutated run + 10)",
    )
    ap.add_argument("--only", nargs="+", default=None, help="test only these mutant ids")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--equivalent", type=Path, default=DEFAULT_EQUIVALENT)
    ap.add_argument("--json", type=Path, default=None, help="write every result to this file")
    ap.add_argument("--fail-under", type=float, default=0.0, help="exit 1 below this score (%%)")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs the tests")
    args = ap.parse_args(argv)

    files = []
    for t in args.targets:
        p = (ROOT / t) if not Path(t).is_absolute() else Path(t)
        if not p.exists():
            ap.error(f"{t} does not exist")
        files += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    for t in args.tests:
        if not (ROOT / t.split("::")[0]).exists():
            ap.error(f"test path {t} does not exist")

    plan = {}
    for f in files:
        ms = collect(f)
        if args.only:
            ms = [m for m in ms if m.id in args.only]
        elif args.max is not None and len(ms) > args.max:
            ms = sorted(random.Random(args.seed).sample(ms, args.max), key=lambda m: (m.line, m.id))
        if ms:
            plan[f] = ms
    if args.max_total is not None and not args.only:
        pooled = [m for ms in plan.values() for m in ms]
        if len(pooled) > args.max_total:
            chosen = {m.id for m in random.Random(args.seed).sample(pooled, args.max_total)}
            plan = {f: [m for m in ms if m.id in chosen] for f, ms in plan.items()}
            plan = {f: ms for f, ms in plan.items() if ms}
    if args.list:
        for ms in plan.values():
            for m in ms:
                print(m.id)
        return 0
    equivalent = read_equivalent(args.equivalent)
    # ids hold line numbers: an edit above a listed mutant moves it, and the list must follow
    stale = sorted(
        i
        for i in equivalent
        if any(i.startswith(f.resolve().relative_to(ROOT).as_posix() + ":") for f in plan)
        and i not in {m.id for ms in plan.values() for m in ms}
    )
    if stale and args.max is None and args.max_total is None and not args.only:
        print(
            f"{args.equivalent.name} lists mutants that these modules no longer make (their "
            f"lines moved?): {', '.join(stale)}; `--list` prints the current ids",
            file=sys.stderr,
        )

    box = Sandbox(args.tests, args.timeout, args.python)
    results: list[Result] = []
    try:
        status, base, out = box.run_tests(timeout=max(600.0, args.timeout or 0))
        if status != "survived":
            print(out[-3000:])
            print(f"the tests fail (or find nothing) without any mutant: {status}", file=sys.stderr)
            return 2
        if box.timeout is None:
            box.timeout = 3 * base + 10
        n_total = sum(len(ms) for ms in plan.values())
        print(
            f"unmutated run: {base:.1f} s; {n_total} mutants; "
            f"timeout {box.timeout:.0f} s per mutant",
            file=sys.stderr,
        )
        done = 0
        for f, ms in plan.items():
            rel = f.resolve().relative_to(ROOT).as_posix()
            target = box.dir / rel
            original = target.read_bytes()
            try:
                for m in ms:
                    mutated = apply(original, m)
                    target.write_bytes(mutated)
                    box.fresh_stamp(target)
                    status, secs, _ = box.run_tests()
                    if m.id in equivalent and status != "survived":
                        status = "equivalent-killed"  # listed as equivalent, yet a test fails
                    results.append(
                        Result(
                            m.id,
                            rel,
                            m.line,
                            m.operator,
                            status,
                            round(secs, 2),
                            diff_of(original, mutated, rel),
                        )
                    )
                    done += 1
                    print(f"[{done}/{n_total}] {status:9s} {m.id} ({secs:.1f} s)", file=sys.stderr)
            finally:
                target.write_bytes(original)
                box.fresh_stamp(target)
    finally:
        box.close()

    return report(results, plan, equivalent, args)


def report(results, plan, equivalent, args):
    rows, survivors, wrong = [], [], []
    for f in plan:
        rel = f.resolve().relative_to(ROOT).as_posix()
        rs = [r for r in results if r.module == rel]
        killed = sum(r.status in ("killed", "timeout") for r in rs)
        eq = sum(r.id in equivalent and r.status == "survived" for r in rs)
        wrong += [r for r in rs if r.status == "equivalent-killed"]
        killed += sum(r.status == "equivalent-killed" for r in rs)
        surv = [r for r in rs if r.status == "survived" and r.id not in equivalent]
        survivors += surv
        denom = len(rs) - eq
        score = 100.0 * killed / denom if denom else 100.0
        rows.append((rel, len(rs), killed, eq, len(surv), score))
    width = max([len(r[0]) for r in rows] + [6])
    print(f"\n{'module':{width}}  mutants  killed  equivalent  survived  score")
    for rel, n, k, e, s, score in rows:
        print(f"{rel:{width}}  {n:7d}  {k:6d}  {e:10d}  {s:8d}  {score:5.1f}%")
    if len(rows) > 1:
        n, k, e, s = (sum(r[i] for r in rows) for i in (1, 2, 3, 4))
        score = 100.0 * k / (n - e) if n > e else 100.0
        print(f"{'total':{width}}  {n:7d}  {k:6d}  {e:10d}  {s:8d}  {score:5.1f}%")
    if survivors:
        print("\nSurviving mutants (not listed as equivalent):")
        for r in survivors:
            print(f"\n{r.id}  [{r.operator}, line {r.line}]\n{r.diff.rstrip()}")
    if wrong:
        print("\nListed as equivalent but killed (remove them from the list):")
        for r in wrong:
            print(f"  {r.id}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0 if all(r[5] >= args.fail_under for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
