"""Run specifications: TOML parsing, validation with line numbers, and sweep expansion.

A spec is data. It names a task, a data source and the components (by registry name) with
their parameters; nothing in it is evaluated or imported beyond registered components::

    name = "nystrom-samplers"          # optional; default: the file's stem
    task = "nystrom"
    repeat = 1                         # runs per grid point (seeds seed, seed+1, ...)
    seed = 0

    [data]
    source = "gaussian-mixture"        # see sparsekit.run.data.SOURCES
    n_samples = 2000

    [kernel]
    name = "rbf"
    bandwidth = "mean-sq-dist"

    [sampler]
    name = ["uniform", "dac-rls"]      # a list is a sweep axis

    [params]                           # the task's own parameters
    n_components = [20, 50]

    [sweep]
    zip = [["sampler.name", "params.n_components"]]   # optional: axes varied together

The ``name`` names the default output folder ``runs/<name>-<timestamp>``, so it must be a plain
folder name (no path separator, no leading dot, no control characters). A data ``path`` is
resolved against the spec file's folder unless it is absolute, and checked to be readable
before any run starts. The number of runs is counted from the list lengths (``count_runs``)
before any grid is built; a spec's ``max_runs`` can lower the caller's limit, not raise it. The
text's size and the levels of its dotted keys are checked before it is parsed
(``MAX_SPEC_BYTES`` (1 MiB), ``key_levels``).

Every list value is a sweep axis; the runs are the Cartesian product of the axes, except that
the axes named together in one ``zip`` group advance together (they must have equal lengths).
A parameter whose value is itself a list is written as a list of lists (``[[1, 2]]``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import itertools
import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .._families import FAMILIES
from .._names import did_you_mean
from .._required_params import factory_signature
from .._terminal import printable

if TYPE_CHECKING:
    from ..registry import Registry

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Keys of the top level of a spec.
TOP_KEYS = (
    "name",
    "description",
    "task",
    "repeat",
    "seed",
    "max_runs",
    "data",
    *(f.name for f in FAMILIES if f.section),
    "params",
    "sweep",
    "plot",
)
#: Sections that name a registered component (``name = ...`` plus the factory's parameters):
#: the families with a ``section``.
COMPONENT_SECTIONS = tuple(f.name for f in FAMILIES if f.section)
#: The columns of every result row besides the spec's dotted ones and the task's metrics.
ROW_COLUMNS = ("run_id", "task", "repeat", "seed", "status", "error", "wall_time", "row", "n_rows")
#: Runs a spec may expand to without ``--yes``.
DEFAULT_MAX_RUNS = 200
#: Deepest nesting of tables and lists a spec may have: a real spec uses 3 or 4 levels, and
#: a few hundred overflow the recursion of tomllib and of the JSON written for each run.
MAX_DEPTH = 32
#: Largest spec, in bytes: a real spec is a few KB; the limit is checked before the file is read.
MAX_SPEC_BYTES = 2**20


class SpecError(ValueError):
    """A spec that cannot run: the message names the file, the line and the fix."""


def closest(word, options) -> str:
    """`` Did you mean 'x'?`` for the closest of ``options`` (as the registry), or ''."""
    return did_you_mean(word, options)


def key_line(text: str, section: str | None, key: str) -> int | None:
    """1-based line of ``key = ...`` inside ``[section]`` (top level when ``section`` is None).

    tomllib reports no positions for keys, so the line is found in the text: the first
    assignment of ``key`` after the section's header (and before the next header).
    """
    lines = text.splitlines()
    if key is None:
        key = "\0"  # only the section header can match
    header = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*(#.*)?$")
    assign = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
    current = None
    for number, line in enumerate(lines, 1):
        m = header.match(line)
        if m:
            current = m.group(1).strip()
            continue
        if current == section and assign.match(line):
            return number
    if section is not None:  # the section header itself
        for number, line in enumerate(lines, 1):
            m = header.match(line)
            if m and m.group(1).strip() == section:
                return number
    return None


def locate(source: str, text: str, section: str | None, key: str | None) -> str:
    """``"<source>, line N"`` of ``key`` in ``[section]`` of ``text``; ``source`` alone when
    the line is not found (or there is no text)."""
    line = key_line(text, section, key) if text else None
    return f"{source}, line {line}" if line else source


@dataclass
class Spec:
    """A parsed, validated spec.

    Parameters
    ----------
    name : str
        The output name.
    task : str
        The task's name.
    sections : dict
        ``{"data": {...}, "kernel": {...}, ..., "params": {...}}`` as written (lists kept).
    repeat : int, default 1
        Runs per grid point.
    seed : int, default 0
        The seed of the first repetition.
    max_runs : int, default 200
        The spec's limit on its runs: it can lower the caller's limit (``max_runs`` of
        :func:`~sparsekit.run.run_spec`, ``--max-runs``), not raise it.
    zip_groups : list of list of str
        Dotted keys (``"sampler.name"``) varied together.
    source : str, optional
        Where it came from (file path, or ``"<string>"`` by default), for messages.
    text : str, default ""
        The spec's text, for the line numbers of messages.
    description : str, default ""
        The spec's description.
    plots : list of dict
        The ``[[plot]]`` tables.
    written_paths : dict
        ``{absolute data path: the path as the spec writes it}`` (relative paths are relative
        to the spec's folder), for :meth:`identity`.
    """

    name: str
    task: str
    sections: dict
    repeat: int = 1
    seed: int = 0
    max_runs: int = DEFAULT_MAX_RUNS
    zip_groups: list = field(default_factory=list)
    source: str = "<string>"
    text: str = ""
    description: str = ""
    plots: list = field(default_factory=list)
    written_paths: dict = field(default_factory=dict)

    def where(self, section: str | None, key: str | None) -> str:
        """Locate ``key`` in ``[section]``, for messages.

        Parameters
        ----------
        section : str or None
            A section (None: the top level).
        key : str or None
            A key of that section (None: the section's header).

        Returns
        -------
        str
            ``"<source>, line N"``, or the source alone when the line is unknown.
        """
        return locate(self.source, self.text, section, key)

    def as_written(self, point: dict) -> dict:
        """Return ``point`` with its data path as the spec writes it.

        ``point`` holds the sections of a grid point, or of the spec; the path as written does
        not change when the spec's folder moves.

        Parameters
        ----------
        point : dict
            ``{section: {key: value}}``.

        Returns
        -------
        dict
            A copy where ``point["data"]["path"]`` is as written; ``point`` itself when it
            reads no path.
        """
        data = point.get("data", {})
        if "path" not in data:
            return point
        path = data["path"]
        written: list | str = (
            [self.written_paths.get(p, p) for p in path]
            if isinstance(path, list)
            else self.written_paths.get(path, path)
        )
        return {**point, "data": {**data, "path": written}}

    def identity(self) -> dict:
        """Return what makes the runs of the spec.

        Its task, sections (data paths as written), repeat, seed and zip groups; not its name,
        description, plots or ``max_runs``.

        Returns
        -------
        dict
            The identity, as JSON values.
        """
        return {
            "task": self.task,
            "sections": self.as_written(self.sections),
            "repeat": self.repeat,
            "seed": self.seed,
            "zip": [list(g) for g in self.zip_groups],
        }

    def digest(self) -> str:
        """Return the SHA-256 of :meth:`identity` as canonical JSON (sorted keys).

        Returns
        -------
        str
            64 hexadecimal digits.
        """
        blob = json.dumps(self.identity(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def resolved(self) -> dict:
        """Return the spec as a plain dict.

        Returns
        -------
        dict
            The spec (what was run), for ``spec.json``.
        """
        out = {"name": self.name, "task": self.task, "repeat": self.repeat, "seed": self.seed}
        out.update({k: dict(v) for k, v in self.sections.items()})
        if self.zip_groups:
            out["sweep"] = {"zip": [list(g) for g in self.zip_groups]}
        if self.plots:
            out["plot"] = [dict(p) for p in self.plots]
        return out


def key_levels(text: str) -> int:
    """The longest chain of dotted keys in ``text`` (``a.b.c``: 3), read without parsing.

    The dots outside strings and comments are counted, a chain ending at any character that
    cannot continue a key (``=``, ``,``, ``]``, a new line, ...); a float such as ``0.5`` counts
    as one level. The count stops as soon as it passes :data:`MAX_DEPTH`.

    Notes
    -----
    tomllib builds a dotted key's tables in time and memory that grow with the square of its
    levels (100,000 levels: minutes and gigabytes), so the levels are counted on the text,
    before the parser runs. Lists and inline tables nested too deep overflow the parser's
    recursion at once, so only the dotted keys are counted here.
    """
    if text.count(".") < MAX_DEPTH:  # no chain can pass the limit: an upper bound will do
        return text.count(".") + 1
    deepest = dots = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":  # a comment, up to the new line (which ends the chain)
            i = text.find("\n", i)
            if i < 0:
                break
            continue
        if c in "\"'":  # a string: skipped whole; a quoted key continues a chain
            quote = c * 3 if text.startswith(c * 3, i) else c
            i += len(quote)
            while i < n and not text.startswith(quote, i):
                if len(quote) == 1 and text[i] == "\n":
                    break  # unterminated: the parser reports it
                i += 2 if c == '"' and text[i] == "\\" else 1
            i += len(quote)
            continue
        if c == ".":
            dots += 1
            if dots >= MAX_DEPTH:  # one level more than the dots
                return dots + 1
            deepest = max(deepest, dots)
        elif not (c.isalnum() or c in "_- \t"):
            dots = 0
        i += 1
    return deepest + 1


def check_text(text: str, source: str) -> None:
    """Refuse, before parsing, a spec (or ``--set`` value) larger than ``MAX_SPEC_BYTES`` (1 MiB)
    or with dotted keys more than :data:`MAX_DEPTH` levels deep (see ``key_levels``)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SPEC_BYTES:
        raise SpecError(
            f"{source}: the spec has {size:,} bytes, more than the limit of {MAX_SPEC_BYTES:,}"
        )
    if key_levels(text) > MAX_DEPTH:
        raise SpecError(
            f"{source}: malformed TOML: dotted keys nested more than {MAX_DEPTH} levels deep"
        )


def parse_value(raw: str):
    """A ``--set`` value read as a TOML value (``500``, ``[1, 2]``, ``"rbf"``), else a string.

    A value that starts as a list, an inline table or a quoted string (``[``, ``{``, ``"``,
    ``'``) must be valid TOML: ``[1, 2`` is refused, not read as the text ``"[1, 2"``.
    """
    check_text(raw, "--set value")
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError as exc:
        if raw.lstrip()[:1] in ("[", "{", '"', "'"):
            raise SpecError(
                f"--set value {raw!r}: malformed TOML ({exc}); a list is [1, 2], a string "
                "'\"text\"' (or a single word without quotes)"
            ) from None
        return raw
    except RecursionError:  # tomllib parses nested lists and tables recursively
        raise SpecError(
            f"--set value: malformed TOML: nested more than {MAX_DEPTH} levels deep"
        ) from None


def nesting_depth(value) -> int:
    """Levels of lists and tables in ``value`` (0 for a scalar), counted without recursion."""
    depth, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            depth = max(depth, level + 1)
            if level + 1 <= MAX_DEPTH:  # deeper than that is refused anyway
                stack.extend((v, level + 1) for v in item)
    return depth


def apply_overrides(doc: dict, overrides) -> dict:
    """Apply ``--set key=value`` items (dotted keys: ``data.n_samples=500``) to a parsed doc."""
    for item in overrides or ():
        if "=" not in item:
            raise SpecError(f"--set {item!r}: expected KEY=VALUE, e.g. data.n_samples=500")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        if len(parts) > 2 or not all(parts):
            raise SpecError(
                f"--set {item!r}: KEY is 'top' or 'section.key' (e.g. params.n_components)"
            )
        target = doc
        if len(parts) == 2:
            target = doc.setdefault(parts[0], {})
            if not isinstance(target, dict):
                raise SpecError(f"--set {item!r}: {parts[0]!r} is not a section")
        target[parts[-1]] = parse_value(raw.strip())
    return doc


def load_spec(
    path_or_text: str | os.PathLike[str],
    *,
    overrides: Iterable[str] = (),
    registry: Registry | None = None,
    text: str | None = None,
    base: str | os.PathLike[str] | None = None,
) -> Spec:
    """Read and validate a spec file (or, with ``text=``, a spec given as a string).

    Parameters
    ----------
    path_or_text : str or Path
        The spec file; with ``text=``, the name its messages give it.
    overrides : iterable of str
        ``--set`` items, ``KEY=VALUE``.
    registry : Registry, optional
        Where tasks and components are looked up (default: the default registry).
    text : str, optional
        The spec itself.
    base : str or Path, optional
        The folder that relative data paths (``[data] path``) are resolved against. Default:
        the spec file's folder; the current folder for a spec given as ``text``.

    Returns
    -------
    Spec
        The validated spec.

    Raises
    ------
    SpecError
        Malformed TOML (line and column; also tables or lists nested more than
        :data:`MAX_DEPTH` levels deep), a spec of more than ``MAX_SPEC_BYTES`` bytes (1 MiB)
        (both checked before parsing), unknown keys, tasks, components, parameters or data
        sources (line and closest valid name), a task's or data source's parameter value of
        the wrong type or out of its range (line), bad sweep groups, an output name that is not a
        plain folder name, a missing or unreadable data file; a spec path that names a
        folder, a FIFO or a device.
    FileNotFoundError
        The spec file does not exist.
    """
    if text is None:
        path = Path(path_or_text)
        text = _read_spec(path)
        # the stem cannot hold a path separator; its controls are escaped for the terminal
        source, default_name = str(path), printable(path.stem)
        base = path.parent if base is None else base
    else:
        source, default_name = str(path_or_text or "<string>"), "spec"
    check_text(text, source)
    try:
        doc = tomllib.loads(text)
    except RecursionError:  # tomllib parses nested lists and tables recursively
        raise SpecError(
            f"{source}: malformed TOML: lists or tables nested more than {MAX_DEPTH} levels deep"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        line, col = getattr(exc, "lineno", None), getattr(exc, "colno", None)
        if line is None:  # Python < 3.14: "(at line L, column C)" in the message
            m = re.search(r"line (\d+), column (\d+)", str(exc))
            line, col = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        where = f"line {line}, column {col}" if line else "unknown position"
        raise SpecError(f"{source}: malformed TOML at {where}: {exc}") from None
    doc = apply_overrides(doc, overrides)
    if nesting_depth(doc) > MAX_DEPTH:
        raise SpecError(
            f"{source}: malformed TOML: lists or tables nested more than {MAX_DEPTH} levels deep"
        )
    return validate(
        doc, source=source, text=text, default_name=default_name, registry=registry, base=base
    )


def _read_spec(path: Path) -> str:
    """The text of the spec file ``path``: a regular file (or a link to one) of at most
    ``MAX_SPEC_BYTES`` bytes (1 MiB), opened without waiting (a FIFO would wait for a writer)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise FileNotFoundError(f"spec file {str(path)!r} does not exist") from None
    except IsADirectoryError:  # where a folder cannot be opened (Windows)
        raise SpecError(f"spec file {str(path)!r} is a folder, not a file") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = (
            "a folder"
            if stat.S_ISDIR(mode)
            else "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device or other special file"
        )
        raise SpecError(f"spec file {str(path)!r} is {what}, not a file")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        raise SpecError(
            f"{path}: the spec has {max(len(data), os.stat(path).st_size):,} bytes, more than "
            f"the limit of {MAX_SPEC_BYTES:,}"
        )
    return data.decode("utf-8")


def _check_int(spec_where, value, name, low):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise SpecError(f"{spec_where}: {name} must be an integer >= {low}, got {value!r}")
    return value


def factory_parameters(factory) -> tuple[set, bool]:
    """The keyword parameters a factory accepts and whether it takes ``**kwargs`` (read by
    :func:`sparsekit._required_params.factory_signature`)."""
    signature = factory_signature(factory)
    return set(signature.names), signature.var_keyword


def validate(
    doc: dict, *, source="<string>", text="", default_name="spec", registry=None, base=None
) -> Spec:
    """Validate a parsed spec (see :func:`load_spec`) and return a :class:`Spec`.

    Relative data paths are resolved against ``base`` (default: the current folder) and
    stored absolute in the returned spec's ``[data]`` table.
    """
    from ..exceptions import UnknownComponentError
    from ..registry import default_registry
    from . import data as data_mod

    registry = registry or default_registry()
    task_names = registry.names("task")

    def where(section, key):
        return locate(source, text, section, key)

    for key in doc:
        if key not in TOP_KEYS:
            raise SpecError(
                f"{where(None, key)}: unknown key {key!r}.{closest(key, TOP_KEYS)} "
                f"Valid keys: {', '.join(TOP_KEYS)}"
            )
    if "task" not in doc:
        raise SpecError(
            f'{source}: the spec names no task; add task = "..." (one of {", ".join(task_names)})'
        )
    task_name = doc["task"]
    try:
        task = registry.get("task", task_name) if isinstance(task_name, str) else None
    except UnknownComponentError:
        task = None
    if task is None:
        raise SpecError(
            f"{where(None, 'task')}: unknown task {task_name!r}."
            f"{closest(task_name, task_names)} Tasks: {', '.join(task_names)}"
        )
    sections = {}
    for sec in ("data", *COMPONENT_SECTIONS, "params"):
        if sec in doc:
            if not isinstance(doc[sec], dict):
                raise SpecError(f"{where(None, sec)}: {sec} must be a table ([{sec}])")
            sections[sec] = dict(doc[sec])
    needed = set(task.components)
    for sec in COMPONENT_SECTIONS:
        if sec in sections and sec not in needed:
            raise SpecError(
                f"{where(sec, None)}: task {task.name!r} takes no [{sec}] section "
                f"(it uses: {', '.join(['data', *task.components, 'params'])})"
            )
    for sec in task.components:
        sections.setdefault(sec, {})
    if "data" not in sections or "source" not in sections["data"]:
        raise SpecError(
            f'{where("data", None)}: the spec needs [data] with source = "..." '
            f"(one of {', '.join(data_mod.source_names())})"
        )
    # data source and its parameters
    for src in _values(sections["data"]["source"]):
        if src not in data_mod.source_names():
            raise SpecError(
                f"{where('data', 'source')}: unknown data source {src!r}."
                f"{closest(src, data_mod.source_names())} Sources: "
                f"{', '.join(data_mod.source_names())}"
            )
        allowed = data_mod.source_parameters(src)
        for key in sections["data"]:
            if key != "source" and key not in allowed:
                raise SpecError(
                    f"{where('data', key)}: data source {src!r} has no parameter "
                    f"{key!r}.{closest(key, allowed)} Parameters: {', '.join(sorted(allowed))}"
                )
    for src in _values(sections["data"]["source"]):
        _check_data_values(src, sections["data"], where)
    for src in _values(sections["data"]["source"]):
        _check_requires(
            data_mod.SOURCE_REQUIRES.get(src, {}), f"data source {src!r}", where("data", "source")
        )
    _check_requires(task.requires, f"task {task.name!r}", where(None, "task"))
    written_paths = _check_data_paths(sections["data"], where("data", "path"), base)
    # components: registered names and their factory parameters
    for sec in task.components:
        table = sections[sec]
        names = _values(table.get("name", task.default_components.get(sec)))
        if names == [None]:
            raise SpecError(
                f'{where(sec, None)}: [{sec}] needs name = "..." (see `sparsekit '
                f"list --family {sec}`)"
            )
        for name in names:
            try:
                info = registry.lookup(task.family_of(sec), name)
            except (KeyError, ValueError, TypeError) as exc:
                raise SpecError(f"{where(sec, 'name')}: {exc}") from None
            accepted, var_kw = factory_parameters(info.registration.factory)
            for key in table:
                if key != "name" and not var_kw and key not in accepted:
                    raise SpecError(
                        f"{where(sec, key)}: {sec} {info.name!r} has no parameter "
                        f"{key!r}.{closest(key, accepted)} Parameters: "
                        f"{', '.join(sorted(accepted)) or 'none'}"
                    )
    if task.build_components:
        for sec in task.components:
            _check_component_values(registry, task, sec, sections[sec], where)
    params = sections.setdefault("params", {})
    for key in params:
        if key not in task.params:
            raise SpecError(
                f"{where('params', key)}: task {task.name!r} has no parameter {key!r}."
                f"{closest(key, task.params)} Parameters: {', '.join(sorted(task.params))}"
            )
    _check_values(
        params, task.params, task.check, f"task {task.name!r}", "params", where, "[params]"
    )
    spec_where = where(None, "repeat")
    repeat = _check_int(spec_where, doc.get("repeat", 1), "repeat", 1)
    seed = _check_int(where(None, "seed"), doc.get("seed", 0), "seed", 0)
    max_runs = _check_int(
        where(None, "max_runs"), doc.get("max_runs", DEFAULT_MAX_RUNS), "max_runs", 1
    )
    zip_groups = []
    sweep = doc.get("sweep", {})
    if not isinstance(sweep, dict):
        raise SpecError(f"{where(None, 'sweep')}: sweep must be a table ([sweep])")
    for key in sweep:
        if key != "zip":
            raise SpecError(
                f"{where('sweep', key)}: unknown key {key!r} in [sweep]."
                f"{closest(key, ['zip'])} Valid: zip"
            )
    groups = sweep.get("zip", [])
    if groups and all(isinstance(g, str) for g in groups):
        groups = [groups]
    for group in groups:
        if not isinstance(group, list) or len(group) < 2:
            raise SpecError(
                f"{where('sweep', 'zip')}: each zip group is a list of at least two "
                'dotted keys, e.g. [["sampler.name", "params.n_components"]]'
            )
        lengths = {}
        for dotted in group:
            sec, _, key = str(dotted).partition(".")
            if sec not in sections or key not in sections[sec]:
                known = [f"{s}.{k}" for s, t in sections.items() for k in t]
                raise SpecError(
                    f"{where('sweep', 'zip')}: zip names {dotted!r}, which the spec "
                    f"does not set.{closest(dotted, known)}"
                )
            value = sections[sec][key]
            lengths[dotted] = len(value) if isinstance(value, list) else 1
        if len(set(lengths.values())) != 1:
            raise SpecError(
                f"{where('sweep', 'zip')}: zipped lists must have equal lengths, got "
                + ", ".join(f"{k}: {n}" for k, n in lengths.items())
            )
        zip_groups.append(list(group))
    plots = doc.get("plot", [])
    if isinstance(plots, dict):
        plots = [plots]
    from .plots import PLOT_KEYS

    if plots:
        _check_requires({"matplotlib": "matplotlib"}, "[[plot]]", where("plot", None))
    columns = [
        *ROW_COLUMNS,
        *(f"{sec}.{key}" for sec, table in sections.items() for key in table),
        *(task.metrics or ()),
    ]
    for plot in plots:
        if not isinstance(plot, dict) or "x" not in plot or "y" not in plot:
            raise SpecError(f"{where(None, 'plot')}: each [[plot]] needs x and y (column names)")
        for key in plot:
            if key not in PLOT_KEYS:
                raise SpecError(
                    f"{where('plot', key)}: unknown key {key!r} in [[plot]]."
                    f"{closest(key, PLOT_KEYS)} Valid: {', '.join(PLOT_KEYS)}"
                )
        if "file" in plot and (
            not str(plot["file"]).endswith(".png")
            or "/" in str(plot["file"])
            or "\\" in str(plot["file"])
        ):
            raise SpecError(
                f"{where('plot', 'file')}: plot file {plot['file']!r} must be a "
                "plain file name ending in .png (written into --out)"
            )
        for key in ("x", "y", "group"):
            column = plot.get(key)
            if (
                column is not None
                and column not in columns
                and ("." in str(column) or task.metrics is not None)
            ):
                raise SpecError(
                    f"{where('plot', key)}: [[plot]] {key} = {column!r} is not a column of "
                    f"the results.{closest(str(column), columns)} Columns: {', '.join(columns)}"
                )
    name = doc.get("name", default_name)
    if "name" in doc:
        _check_name(name, where(None, "name"))
    return Spec(
        plots=plots,
        name=str(name),
        task=task.name,
        sections=sections,
        repeat=repeat,
        seed=seed,
        max_runs=max_runs,
        zip_groups=zip_groups,
        source=source,
        text=text,
        description=str(doc.get("description", "")),
        written_paths=written_paths,
    )


def _check_component_values(registry, task, sec, table, where) -> None:
    """Build the components of ``[sec]`` once per value of each key (the first value of the
    others), so that their constructors' own checks refuse a bad value before any run: as
    many builds as values, not as grid points."""
    from ..components import resolve

    params = {k: _values(v) for k, v in table.items() if k != "name"}
    first = {k: v[0] for k, v in params.items() if v}
    trials = [(None, first)] + [
        (key, {**first, key: value}) for key, values in params.items() for value in values[1:]
    ]
    for name in _values(table.get("name", task.default_components.get(sec))):
        for key, kwargs in trials:
            try:
                resolve(task.family_of(sec), name, kwargs, registry=registry)
            except (ValueError, TypeError) as exc:
                bad = key or next(
                    (k for k in kwargs if re.search(rf"\b{re.escape(k)}\b", str(exc))), None
                )
                raise SpecError(f"{where(sec, bad)}: {sec} {name!r}: {exc}") from None


def _type_problem(value, default) -> str | None:
    """What ``value`` must be to have the type of ``default`` (bool, int, float, str; an int
    passes for a float), or None when it has; a list is checked item by item, and a default
    that is None, a list or another object takes any value."""
    if isinstance(value, list) and not isinstance(default, list):
        return next((p for p in (_type_problem(v, default) for v in value) if p), None)
    if isinstance(default, bool):
        return None if isinstance(value, bool) else "true or false"
    if isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else "an integer"
    if isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else "a number"
    if isinstance(default, str):
        return None if isinstance(value, str) else "a string"
    return None


def _check_values(table, defaults, check, what, sec, where, fix) -> None:
    """Refuse, with its line, a value of ``table`` whose type is not its default's (see
    :func:`_type_problem`; each item of a sweep) unless ``check.names`` holds its key, then
    one that ``check(params)`` refuses.
    ``check`` is called once per value of each key (the first value of the others, the
    defaults for the keys not set): as many calls as values, not as grid points."""
    values = {k: _values(v) for k, v in table.items()}
    ruled = getattr(check, "names", ())
    for key, vals in values.items():
        for value in vals if key not in ruled else ():
            problem = _type_problem(value, defaults.get(key))
            if problem:
                raise SpecError(
                    f"{where(sec, key)}: {what}: {key} must be {problem} (as its default "
                    f"{defaults[key]!r}), got {value!r}. Change it in {fix}."
                )
    if check is None:
        return
    first = {k: v[0] for k, v in values.items() if v}
    trials = [(None, first)] + [
        (key, {**first, key: value}) for key, vals in values.items() for value in vals[1:]
    ]
    for key, point in trials:
        try:
            check({**defaults, **point})
        except (ValueError, TypeError) as exc:
            bad = key or next(
                (k for k in point if re.search(rf"\b{re.escape(k)}\b", str(exc))), None
            )
            message = str(exc).rstrip()
            if not message.endswith((".", "?", "!")):
                message += "."
            raise SpecError(f"{where(sec, bad)}: {what}: {message} Change it in {fix}.") from None


def _check_data_values(src, table, where) -> None:
    """Check the ``[data]`` values that ``src`` reads: its required parameters are set (a
    file source's ``path``), each value has its default's type and passes the rules of
    :data:`sparsekit.run.data.PARAMETER_RULES`."""
    from . import data as data_mod
    from ._rules import check_rules

    signature = inspect.signature(data_mod.SOURCES[src]).parameters
    defaults = {k: p.default for k, p in signature.items() if p.default is not p.empty}
    for key in signature:
        if key not in defaults and key not in table:
            raise SpecError(
                f"{where('data', None)}: data source {src!r} needs {key} = ...: add it to [data]"
            )
    taken = {k: v for k, v in table.items() if k in signature and k != "path"}
    _check_values(
        taken,
        defaults,
        lambda params: check_rules(params, data_mod.PARAMETER_RULES),
        f"data source {src!r}",
        "data",
        where,
        "[data]",
    )


def _check_requires(requires: dict, what: str, req_where: str) -> None:
    """Refuse a spec whose task, data source or plots import a package that is not installed,
    naming the ``pip install`` line (before any run; otherwise every run would fail alike)."""
    for module, requirement in requires.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package missing, or a broken entry
            found = False
        if not found:
            raise SpecError(
                f"{req_where}: {what} needs the package {module!r}, which is not "
                f'installed: pip install "{requirement}"'
            )


def _check_name(name, name_where) -> None:
    """Refuse a ``name`` that is not a plain folder name: it names the default output folder
    ``runs/<name>-<stamp>``, which must stay inside ``runs/``."""
    problem = None
    if not isinstance(name, str) or not name:
        problem = "must be a non-empty string"
    elif any(c in name for c in "/\\:"):
        problem = "holds a path separator ('/', '\\' or a drive's ':')"
    elif name.startswith("."):
        problem = "starts with '.' ('..' is the parent folder; '.name' a hidden one)"
    elif not name.isprintable():
        problem = "holds control or other non-printable characters"
    if problem:
        raise SpecError(
            f"{name_where}: name {name!r} {problem}; the name is the default output "
            "folder runs/<name>-<timestamp>, so it must be a plain folder name such "
            'as "nystrom-samplers" (choose any folder with --out)'
        )


def _check_data_paths(table: dict, path_where, base) -> dict:
    """Resolve the data paths of a ``[data]`` table against ``base``, in place, and check
    that each names a readable file or folder of its source (before any run starts); return
    ``{absolute path: path as written}``."""
    from . import data as data_mod

    if "path" not in table:
        return {}
    paths: list[str] = []
    written: dict[str, str] = {}
    for path in _values(table["path"]):
        for source in _values(table["source"]):
            try:
                full = data_mod.resolve_path(source, path, base)
            except (OSError, TypeError, ValueError) as exc:
                raise SpecError(f"{path_where}: {exc}") from None
        if full.lower().endswith(".parquet"):
            _check_requires({"pandas": "pandas pyarrow"}, "a Parquet data file", path_where)
        paths.append(full)
        written.setdefault(full, str(path))
    table["path"] = paths if isinstance(table["path"], list) else paths[0]
    return written


def _values(value) -> list:
    return list(value) if isinstance(value, list) else [value]


def count_points(spec: Spec) -> int:
    """Grid points of :func:`expand`, counted from the list lengths without building the grid."""
    zipped = {d for g in spec.zip_groups for d in g}
    n = 1
    for group in spec.zip_groups:  # validation made the lengths of a group equal
        sec, key = group[0].split(".", 1)
        n *= len(_values(spec.sections[sec][key]))
    for sec, table in spec.sections.items():
        for key, value in table.items():
            if isinstance(value, list) and f"{sec}.{key}" not in zipped:
                n *= len(value)
    return n


def count_runs(spec: Spec) -> int:
    """Runs of the spec: grid points times ``repeat`` (see :func:`count_points`)."""
    return count_points(spec) * spec.repeat


def expand(spec: Spec) -> list[dict]:
    """Expand the grid of a spec.

    Axes are the list values; zipped axes advance together. The zip groups come first (in the
    order of the spec's ``zip``), then the other list values in the order of the spec
    (sections in :data:`TOP_KEYS` order, keys as written), the last axis varying fastest.
    The order sets the order of the runs only; run ids do not depend on it.

    Parameters
    ----------
    spec : Spec
        A spec from :func:`~sparsekit.run.spec.load_spec`.

    Returns
    -------
    list of dict
        One ``{section: {key: value}}`` dict per grid point (no repeats).
    """
    axes = []  # each axis: list of dotted keys, list of value tuples
    zipped = {d for g in spec.zip_groups for d in g}
    for group in spec.zip_groups:
        cols = [_values(spec.sections[d.split(".", 1)[0]][d.split(".", 1)[1]]) for d in group]
        axes.append((group, list(zip(*cols))))
    for sec, table in spec.sections.items():
        for key, value in table.items():
            dotted = f"{sec}.{key}"
            if isinstance(value, list) and dotted not in zipped:
                axes.append(([dotted], [(v,) for v in value]))
    grid = []
    for combo in itertools.product(*(values for _, values in axes)):
        point = {sec: {k: v for k, v in table.items()} for sec, table in spec.sections.items()}
        for (keys, _), values in zip(axes, combo):
            for dotted, v in zip(keys, values):
                sec, key = dotted.split(".", 1)
                point[sec][key] = v
        grid.append(point)
    return grid


__all__ = ["Spec", "SpecError", "load_spec", "expand", "TOP_KEYS", "MAX_DEPTH"]
