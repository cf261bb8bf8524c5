"""The ``sparsekit`` command (also ``python -m sparsekit``): ``list``, ``demo``, ``warmup``, ``run``
and ``--version``."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from . import __version__
from ._families import NAMES
from ._names import did_you_mean
from ._terminal import PrintableStream, printable, printable_json
from .registry import default_registry


def _cell(text: str) -> str:
    """A Markdown table cell: ``|`` (as in a norm ``||x||``) escaped, one line, non-printable
    characters (a plugin's names and summaries reach the terminal) written as escapes."""
    return printable(" ".join(str(text).split()).replace("|", "\\|"))


def _cmd_list(args) -> int:
    from .run.tables import format_table

    registry = default_registry()
    components = registry.list(args.family)
    tasks = registry.list("task") if args.family is None else []
    skipped = registry.skipped()
    if args.json:
        import dataclasses
        import json

        data = {
            "components": [
                {
                    "family": i.family,
                    "name": i.name,
                    "aliases": list(i.aliases),
                    "plugin": i.plugin,
                    "summary": i.summary,
                    "accepts": i.registration.accepts,
                }
                for i in components
            ],
            "tasks": [
                {
                    "name": i.name,
                    "aliases": list(i.aliases),
                    "plugin": i.plugin,
                    "summary": i.summary,
                }
                for i in tasks
            ],
            "skipped": [dataclasses.asdict(s) for s in skipped],
        }
        print(printable_json(json.dumps(data, indent=2, ensure_ascii=False)))
        return 0
    rows = [
        [
            i.family,
            _cell(i.name),
            _cell(", ".join(i.aliases) or "-"),
            _cell(i.plugin),
            _cell(i.summary),
        ]
        for i in components
    ]
    print(format_table(["family", "name", "aliases", "plugin", "summary"], rows))
    if tasks:
        print("\ntasks of `sparsekit run` (sparsekit list --family task):\n")
        rows = [
            [_cell(i.name), _cell(", ".join(i.aliases) or "-"), _cell(i.plugin), _cell(i.summary)]
            for i in tasks
        ]
        print(format_table(["task", "aliases", "plugin", "summary"], rows))
    if skipped:
        print(
            "\nskipped plugins and components "
            "(SPARSEKIT_DISABLE_PLUGINS=name,... blocks a plugin):\n"
        )
        rows = [
            [_cell(s.plugin), s.family or "-", _cell(s.name or "-"), _cell(s.reason)]
            for s in skipped
        ]
        print(format_table(["plugin", "family", "name", "reason"], rows))
    return 0


#: Demo sections: name -> (module, function); each function returns a printable table
#: computed by the tasks of ``sparsekit run`` (see sparsekit.experiments.demo).
DEMO_SECTIONS = {
    "kernels": ("sparsekit.experiments.demo", "kernel_table"),
    "graphs": ("sparsekit.experiments.demo", "graph_kernel_table"),
    "nystrom": ("sparsekit.experiments.demo", "nystrom_table"),
    "solvers": ("sparsekit.experiments.demo", "solver_table"),
}


def _known(names, choices, what) -> bool:
    """Whether every one of ``names`` is in ``choices``; if not, say on stderr which are not
    and the choice closest to the first."""
    unknown = [name for name in names if name not in choices]
    if unknown:
        hint = did_you_mean(unknown[0], list(choices))
        print(f"unknown {what} {unknown}; choose from {list(choices)}.{hint}", file=sys.stderr)
    return not unknown


def _cmd_demo(args) -> int:
    import importlib

    names = args.sections or list(DEMO_SECTIONS)
    if not _known(names, DEMO_SECTIONS, "demo section(s)"):
        return 2
    print(f"sparsekit {__version__} demo\n")
    for k, name in enumerate(names, 1):
        module, func = DEMO_SECTIONS[name]
        # progress on stderr, so that stdout keeps only the tables
        print(
            f"[{k}/{len(names)}] running {name!r} (a first run also compiles its Numba code)...",
            file=sys.stderr,
            flush=True,
        )
        t0 = time.perf_counter()
        table = getattr(importlib.import_module(module), func)()
        print(table)
        print(f"({name}: {time.perf_counter() - t0:.1f} s)\n")
    return 0


def _cmd_warmup(args) -> int:
    from ._warmup import FAMILIES, cache_location, warm_up

    families = args.families or list(FAMILIES)
    if not _known(families, FAMILIES, "warm-up famil(ies)"):
        return 2
    elapsed = warm_up(families)
    print(
        f"compiled sparsekit's Numba kernels ({', '.join(families)}; float64 and float32) in "
        f"{elapsed:.1f} s; cache: {cache_location()}"
    )
    return 0


def _cmd_run(args) -> int:
    from .run import SpecError, dry_run, load_spec, run_spec
    from .run.results import FolderInUseError, NoSpaceError, read_results
    from .run.runner import Interrupted, check_scheduler

    # spec values, plugin names and error messages reach the terminal: escape their controls
    stream = PrintableStream(sys.stdout)
    try:
        spec = load_spec(args.spec, overrides=args.set)
        if args.repeat is not None or args.seed is not None:
            spec.repeat = spec.repeat if args.repeat is None else args.repeat
            spec.seed = spec.seed if args.seed is None else args.seed
            if spec.repeat < 1 or spec.seed < 0:
                raise SpecError("--repeat must be >= 1 and --seed >= 0")
        if args.scheduler is not None:
            check_scheduler(args.scheduler)
        if args.dry_run:
            dry_run(spec, stream=stream, yes=args.yes, max_runs=args.max_runs)
            return 0
        out = run_spec(
            spec,
            out=args.out,
            yes=args.yes,
            max_runs=args.max_runs,
            allow_pickle=args.allow_pickle,
            scheduler=args.scheduler,
            stream=stream,
        )
    except Interrupted as exc:
        print(f"sparsekit run: {printable(exc)}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("sparsekit run: interrupted before any run started", file=sys.stderr)
        return 130
    except NoSpaceError as exc:
        print(f"sparsekit run: error: {printable(exc)}", file=sys.stderr)
        return 1
    except (
        SpecError,
        ValueError,
        FileNotFoundError,
        ConnectionError,
        ModuleNotFoundError,
        FolderInUseError,
    ) as exc:
        message = printable(exc, keep="\n")
        print(f"sparsekit run: error: {message}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine's, not the spec's: permissions, I/O errors
        print(f"sparsekit run: error: {printable(exc)}", file=sys.stderr)
        return 1
    rows = read_results(out / "results.jsonl")[0] if (out / "results.jsonl").exists() else []
    return 1 if any(r.get("status") != "ok" for r in rows) else 0


def build_parser() -> argparse.ArgumentParser:
    """Build the parser of the ``sparsekit`` command.

    Returns
    -------
    argparse.ArgumentParser
        The parser of ``sparsekit list``, ``run``, ``demo`` and the other subcommands.
    """
    parser = argparse.ArgumentParser(
        prog="sparsekit", description="Large-scale kernel methods and sparse approximation."
    )
    parser.add_argument("--version", action="version", version=f"sparsekit {__version__}")
    sub = parser.add_subparsers(dest="command")
    p_list = sub.add_parser("list", help="list every registered component")
    p_list.add_argument("--family", choices=list(NAMES), help="only this family")
    p_list.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output: {'components': [...], 'tasks': [...], 'skipped': [...]}",
    )
    p_list.set_defaults(func=_cmd_list)
    p_demo = sub.add_parser("demo", help="run the demo on generated data and print result tables")
    p_demo.add_argument(
        "sections", nargs="*", help=f"sections to run (default: all of {list(DEMO_SECTIONS)})"
    )
    p_demo.set_defaults(func=_cmd_demo)
    p_warm = sub.add_parser(
        "warmup", help="compile every Numba kernel (float64 and float32) into the cache"
    )
    p_warm.add_argument(
        "families",
        nargs="*",
        help="only these (default: all of kernels, graphs, samplers, features, solvers, "
        "applications)",
    )
    p_warm.set_defaults(func=_cmd_warmup)
    p_run = sub.add_parser("run", help="run the experiments of a spec file (TOML)")
    p_run.add_argument("spec", help="the spec file (see examples/specs/)")
    p_run.add_argument(
        "--out",
        help="output folder (default runs/<spec-name>-<timestamp>/); "
        "an existing one is resumed: finished runs are skipped",
    )
    p_run.add_argument(
        "--dry-run",
        action="store_true",
        help="print the expanded grid and stop (a sweep larger than the limit needs --yes)",
    )
    p_run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a spec value, e.g. --set data.n_samples=500 (repeatable)",
    )
    p_run.add_argument("--repeat", type=int, help="runs per grid point (seeds seed, seed+1, ...)")
    p_run.add_argument("--seed", type=int, help="first seed")
    p_run.add_argument(
        "--yes",
        action="store_true",
        help="run (or list, with --dry-run) a sweep larger than the limit",
    )
    p_run.add_argument(
        "--max-runs",
        type=int,
        metavar="N",
        help="the limit on the number of runs (default 200); a spec's max_runs can only lower it",
    )
    p_run.add_argument(
        "--allow-pickle",
        action="store_true",
        help="allow pickled graph collections (unpickling runs code)",
    )
    p_run.add_argument("--scheduler", help="run on Dask: a scheduler ADDRESS or local:N")
    p_run.set_defaults(func=_cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``sparsekit`` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

__all__ = ["main", "build_parser"]
