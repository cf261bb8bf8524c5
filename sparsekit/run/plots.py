"""PNG plots named in a spec: ``[[plot]]`` tables with ``x``, ``y``, optional ``group`` and
``file``; one line per group value, the mean over repeats with its standard deviation as a band.

::

    [[plot]]
    x = "params.n_components"      # a column of the results (a swept key)
    y = "error_fro"                # a metric
    group = "sampler.name"         # optional: one line per value
    file = "error.png"             # optional; default "<y>-vs-<x>.png"
    logy = true                    # optional
"""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path

import numpy as np

from .._names import did_you_mean
from .results import write_atomic

PLOT_KEYS = ("x", "y", "group", "file", "logy", "title")


def default_file(plot: dict) -> str:
    return f"{plot['y']}-vs-{plot['x']}.png".replace("/", "_")


def draw(plot: dict, rows: list, out: Path) -> Path:
    """Draw one plot from the ``ok`` rows.

    Parameters
    ----------
    plot : dict
        A ``[[plot]]`` table.
    rows : list of dict
        The result rows.
    out : Path
        The output folder.

    Returns
    -------
    Path
        The PNG's path.

    Raises
    ------
    ValueError
        ``x`` or ``y`` is not a column of the results (the message lists the columns).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r.get("status") == "ok"]
    columns = sorted({c for r in rows for c in r})
    for key in ("x", "y", "group"):
        name = plot.get(key)
        if name is not None and not any(name in r for r in rows):
            raise ValueError(
                f"plot {key} = {name!r} is not a column of the results."
                f"{did_you_mean(name, columns)} Columns: {', '.join(columns)}"
            )
    series = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if plot["y"] in r and r[plot["y"]] is not None:
            series[r.get(plot.get("group"), "")][r[plot["x"]]].append(float(r[plot["y"]]))
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, points in series.items():
        xs = sorted(points, key=lambda v: (isinstance(v, str), v))
        mean = np.array([np.mean(points[x]) for x in xs])
        std = np.array([np.std(points[x]) for x in xs])
        pos = np.arange(len(xs)) if any(isinstance(x, str) for x in xs) else np.asarray(xs, float)
        ax.plot(pos, mean, marker="o", label=str(label) if label != "" else None)
        ax.fill_between(pos, mean - std, mean + std, alpha=0.2)
        if any(isinstance(x, str) for x in xs):
            ax.set_xticks(pos, [str(x) for x in xs])
    if plot.get("logy"):
        ax.set_yscale("log")
    ax.set_xlabel(plot["x"])
    ax.set_ylabel(plot["y"])
    if plot.get("title"):
        ax.set_title(plot["title"])
    if plot.get("group"):
        ax.legend(title=plot["group"])
    fig.tight_layout()
    path = Path(out) / plot.get("file", default_file(plot))
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=120)
    plt.close(fig)
    write_atomic(path, png.getvalue())  # as the result files: a planted link is not followed
    return path


__all__ = ["draw"]
