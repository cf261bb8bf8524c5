"""Data sources of run specs: scikit-learn toy sets, generated sets and files, parsed not executed.

Each source is a function of keyword parameters returning a dict with some of ``X`` (n, d)
array, ``y`` (n,) labels, ``D``/``Y``/``coef`` (a sparse-coding problem), ``graphs`` (a list of
networkx graphs). ``[data] source = "..."`` picks the source; the other keys of ``[data]`` are its
parameters (``seed`` defaults to the run's seed).

Sources
-------
- toy sets of scikit-learn, by name: ``iris``, ``digits``, ``wine``, ``breast-cancer``,
  ``diabetes`` (``scale`` divides X, e.g. 16 for the digits' pixels);
- generated: ``gaussian-mixture`` (the unbalanced mixture of the Nyström experiments),
  ``isotropic-mixture`` (the balanced mixture of the QuicK-means experiments), ``blobs``,
  ``rings`` (concentric noisy circles), ``circles`` (scikit-learn's),
  ``moons``, ``swiss-roll``, ``friedman1``
  (regression), ``uniform`` (points in [0, 1]^d), ``random-graphs`` (Erdős–Rényi graphs with
  random node labels), ``gaussian-pair`` and ``graph-pair`` (two distributions to draw
  from, for the three-sample test), ``gaussian-dictionary`` (random dictionaries to draw, for
  Frank–Wolfe recovery), ``sparse-signals`` (an m-sparse coding problem: Gaussian dictionary
  ``D``, signals ``Y = D coef``), ``hadamard`` (the Hadamard matrix of order ``n``, as ``X``);
- files: ``file`` with ``path`` (``.npy``, ``.npz`` with arrays ``X`` and optionally ``y``,
  ``.csv`` (numeric; ``target`` names a label column, pandas used when installed), ``.parquet``
  (needs pandas));
- ``graphs``: a folder of edge lists (one ``*.edgelist``/``*.txt`` file per graph, ``u v`` per
  line; an optional ``labels.txt`` with one class per graph, in file-name order), or with
  ``allow_pickle`` granted on the command line, a pickled list of networkx graphs (``.pkl``).
  Unpickling runs code, so it is refused without ``--allow-pickle``. Each file read must be a
  regular file (or a link to one) of at most 64 MiB (``MAX_GRAPH_FILE_BYTES``): a FIFO, a
  device or a folder named like an edge list is refused unread.

In a spec, a relative ``path`` is resolved against the spec file's folder (an absolute path,
or one starting with ``~``, is taken as it is), and the file or folder is checked to exist and
be readable when the spec is validated, before any run starts (``resolve_path``); the
spec then holds the absolute path. The other values are checked then too: each has its
default's type, and the parameters named in ``PARAMETER_RULES`` keep to their rule. The
functions called directly read a relative path from the current folder.
"""

from __future__ import annotations

import inspect
import io
import os
import stat
from pathlib import Path
from typing import Any

import numpy as np

from . import _rules

_TOY = {
    "iris": "load_iris",
    "digits": "load_digits",
    "wine": "load_wine",
    "breast-cancer": "load_breast_cancer",
    "diabetes": "load_diabetes",
}


def _toy(name):
    def load(n_samples=None, scale=None, seed=0):
        from sklearn import datasets

        X, y = getattr(datasets, _TOY[name])(return_X_y=True)
        if n_samples is not None and n_samples < len(y):
            idx = np.sort(np.random.default_rng(seed).choice(len(y), n_samples, replace=False))
            X, y = X[idx], y[idx]
        if scale is not None:
            X = X / scale
        return {"X": np.ascontiguousarray(X, dtype=np.float64), "y": y}

    load.__doc__ = (
        f"scikit-learn's {name} data set (``n_samples``: a random subset; "
        "``scale``: X divided by it)."
    )
    return load


def generated_dataset(n=50_000, d=54, n_clusters=40, random_state=0, dtype=np.float64):
    """A deterministic, unbalanced Gaussian mixture (Covertype's dimension by default).

    Cluster sizes follow a Zipf law (size ∝ 1 / rank), cluster spreads vary over a decade and
    the centers are drawn at random, so the density is very uneven: uniform landmarks
    under-represent the small, spread-out clusters that ridge leverage scores favour.

    Returns
    -------
    X : ndarray of shape (n, d)
    """
    rng = np.random.default_rng(random_state)
    weights = 1.0 / np.arange(1, n_clusters + 1)
    weights /= weights.sum()
    labels = rng.choice(n_clusters, size=n, p=weights)
    centers = rng.normal(0.0, 1.0, size=(n_clusters, d))
    spreads = 10.0 ** rng.uniform(-1.3, -0.3, size=n_clusters)
    X = centers[labels] + spreads[labels, None] * rng.standard_normal((n, d))
    return np.ascontiguousarray(X, dtype=dtype)


def gaussian_mixture(n_samples=2000, n_features=20, n_clusters=10, seed=0):
    """The unbalanced Gaussian mixture of the Nyström experiments (:func:`generated_dataset`);
    ``y`` are the components."""
    X = generated_dataset(n=n_samples, d=n_features, n_clusters=n_clusters, random_state=seed)
    # the same draw of labels as generated_dataset (its first random call)
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, n_clusters + 1)
    y = rng.choice(n_clusters, size=n_samples, p=w / w.sum())
    return {"X": X, "y": y}


def isotropic_mixture(n_samples=120_000, n_features=54, n_clusters=10, center_scale=3.0, seed=0):
    """A balanced mixture of unit Gaussians: centers ``center_scale · N(0, I)``, each point's
    component uniform over the ``n_clusters`` (``y``), then unit Gaussian noise (the generated
    data set of the QuicK-means experiments; one generator seeded with ``seed``, in that
    order)."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((n_clusters, n_features)) * center_scale
    y = rng.integers(n_clusters, size=n_samples)
    X = centers[y] + rng.standard_normal((n_samples, n_features))
    return {"X": X, "y": y}


def uniform(n_samples=2000, n_features=64, seed=0):
    """Points drawn uniformly from [0, 1]^d (non-negative, so the χ² kernels apply)."""
    return {"X": np.random.default_rng(seed).random((n_samples, n_features))}


def random_labelled_graphs(n_graphs, n_nodes=30, p=0.15, n_labels=5, random_state=0):
    """Erdős–Rényi graphs G(n_nodes, p) as ``(adjacency, labels)`` pairs with random labels."""
    rng = np.random.default_rng(random_state)
    graphs = []
    for _ in range(n_graphs):
        upper = np.triu(rng.random((n_nodes, n_nodes)) < p, k=1)
        adjacency = (upper | upper.T).astype(np.uint8)
        graphs.append((adjacency, rng.integers(0, n_labels, n_nodes)))
    return graphs


def random_graphs(n_graphs=200, n_nodes=30, p=0.15, n_labels=5, seed=0):
    """Erdős–Rényi graphs G(``n_nodes``, ``p``) with uniformly random node labels
    (:func:`random_labelled_graphs`), as ``graphs``."""
    return {"graphs": random_labelled_graphs(n_graphs, n_nodes, p, n_labels, random_state=seed)}


def random_graph_draw(p, min_nodes=10, max_nodes=14, n_labels=3):
    """A draw ``(n, rng) -> graphs`` of n random labelled graphs: each has a uniform number of
    nodes in [min_nodes, max_nodes], edges independently with probability ``p`` and uniform
    node labels in 0..n_labels-1, as an ``(adjacency, labels)`` pair."""

    def draw(n, rng):
        out = []
        for _ in range(n):
            m = int(rng.integers(min_nodes, max_nodes + 1))
            A = np.triu((rng.random((m, m)) < p).astype(np.float64), 1)
            out.append((A + A.T, rng.integers(0, n_labels, m)))
        return out

    return draw


def gaussian_pair(var_x=1.0, var_z=1.001, n_features=1, seed=0):
    """Two centred Gaussians N(0, var_x I) and N(0, var_z I), as draws ``sample_x`` and
    ``sample_z`` (``(n, rng) -> (n, n_features) array``) for the three-sample test; the points
    come from the generator of the task, not from ``seed``."""

    def normal(var):
        return lambda n, rng: rng.normal(0.0, np.sqrt(var), (n, n_features))

    return {"sample_x": normal(var_x), "sample_z": normal(var_z)}


def graph_pair(p_x=0.3, p_z=0.4, min_nodes=10, max_nodes=14, n_labels=3, seed=0):
    """Random labelled graphs of edge density ``p_x`` and ``p_z`` (:func:`random_graph_draw`),
    as draws ``sample_x`` and ``sample_z`` for the three-sample test (the graphs come from the
    generator of the task, not from ``seed``)."""
    return {
        "sample_x": random_graph_draw(p_x, min_nodes, max_nodes, n_labels),
        "sample_z": random_graph_draw(p_z, min_nodes, max_nodes, n_labels),
    }


def gaussian_dictionary(n_features=1000, n_atoms=2000, seed=0):
    """Dictionaries of ``n_atoms`` unit-norm Gaussian atoms in dimension ``n_features``, as a
    draw ``draw_dictionary(rng) -> D`` (the atoms come from the generator of the task, not from
    ``seed``)."""
    from ..solvers.dictionaries import gaussian_dictionary as draw

    return {"draw_dictionary": lambda rng: draw(n_features, n_atoms, rng)}


def swiss_roll(n_samples=1500, noise=0.05, seed=0):
    """The swiss roll (scikit-learn's ``make_swiss_roll``); ``y`` is the position on the roll."""
    from sklearn.datasets import make_swiss_roll

    X, t = make_swiss_roll(n_samples, noise=noise, random_state=seed)
    return {"X": X, "y": t}


def friedman1(n_samples=2000, n_features=8, noise=1.0, seed=0):
    """Friedman #1 regression (scikit-learn's ``make_friedman1``): y depends on the first 5
    features, the others are noise."""
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(
        n_samples=n_samples, n_features=n_features, noise=noise, random_state=seed
    )
    return {"X": X, "y": y}


def blobs(n_samples=1000, n_features=2, n_clusters=3, cluster_std=1.0, seed=0):
    """Isotropic Gaussian blobs (scikit-learn's ``make_blobs``)."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(
        n_samples, n_features, centers=n_clusters, cluster_std=cluster_std, random_state=seed
    )
    return {"X": X, "y": y}


def sample_image_patches(patch=16, grid=2):
    """Colour image patches that ship with scikit-learn (offline): the two sample photographs
    of ``load_sample_images`` (``china.jpg``, ``flower.jpg``, 427 x 640 x 3) cut into a
    ``grid`` x ``grid`` of regions each, and each region into non-overlapping ``patch`` x
    ``patch`` patches; ``y`` is the region (2 grid² classes), ``X`` the patches flattened
    (patch · patch · 3 values in [0, 1], rows of ``patch`` pixels, channels last). With the
    defaults: 2,080 patches of 16 x 16 x 3 in 8 classes, a small stand-in for CIFAR-10's
    32 x 32 x 3 natural images (whose labels are objects, not regions)."""
    from sklearn.datasets import load_sample_images

    Xs, ys = [], []
    for i, img in enumerate(load_sample_images().images):
        h, w = img.shape[0] // grid, img.shape[1] // grid
        for r in range(grid):
            for c in range(grid):
                region = img[r * h : (r + 1) * h, c * w : (c + 1) * w]
                nr, nc = h // patch, w // patch
                cut = region[: nr * patch, : nc * patch].reshape(nr, patch, nc, patch, 3)
                Xs.append(cut.transpose(0, 2, 1, 3, 4).reshape(nr * nc, -1))
                ys.append(np.full(nr * nc, (i * grid + r) * grid + c))
    return {"X": np.concatenate(Xs).astype(np.float64) / 255.0, "y": np.concatenate(ys)}


def rings(n_samples=1000, n_rings=2, noise=0.05, seed=0):
    """``n_rings`` concentric noisy circles of radii 1, 2, ... in the plane; ``y`` the ring."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % n_rings
    angle = rng.uniform(0, 2 * np.pi, n_samples)
    radius = (y + 1.0) + noise * rng.standard_normal(n_samples)
    return {"X": np.column_stack([radius * np.cos(angle), radius * np.sin(angle)]), "y": y}


def circles(n_samples=1000, factor=0.3, noise=0.04, seed=0):
    """Two concentric circles (scikit-learn's ``make_circles``), radius ratio ``factor``."""
    from sklearn.datasets import make_circles

    X, y = make_circles(n_samples, factor=factor, noise=noise, random_state=seed)
    return {"X": X, "y": y}


def moons(n_samples=1000, noise=0.1, seed=0):
    """Two interleaving half circles (scikit-learn's ``make_moons``)."""
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples, noise=noise, random_state=seed)
    return {"X": X, "y": y}


def sparse_signals(n_features=64, n_atoms=128, n_nonzero=4, n_signals=100, seed=0):
    """An m-sparse coding problem: Gaussian dictionary D, coefficients with ``n_nonzero``
    non-zeros per signal, signals Y = D coef."""
    from ..solvers.dictionaries import make_sparse_coding_problem

    D, Y, coef = make_sparse_coding_problem(n_features, n_atoms, n_nonzero, n_signals, seed)
    return {"D": D, "Y": Y, "coef": coef}


def hadamard(n=32, seed=0):
    """The Hadamard matrix of order ``n`` (a power of two), as ``X``."""
    from scipy.linalg import hadamard as _h

    if n < 2 or n & (n - 1):
        raise ValueError(f"hadamard: n must be a power of two >= 2, got {n}")
    return {"X": _h(n).astype(np.float64)}


#: Sources that read ``path``: what the path names, and the file types they read.
PATH_SOURCES = {
    "file": ("data file", (".npy", ".npz", ".csv", ".parquet")),
    "graphs": ("graph collection", (".pkl", ".pickle")),
}


def resolve_path(source: str, path, base=None) -> str:
    """The absolute path of a source's ``path``, checked to name something it can read.

    Parameters
    ----------
    source : str
        ``"file"`` or ``"graphs"`` (:data:`PATH_SOURCES`).
    path : str or Path
        As written in the spec; ``~`` expands. A relative path is taken relative to ``base``.
    base : str or Path, optional
        The spec file's folder. Default: the current folder.

    Returns
    -------
    str
        The absolute path.

    Raises
    ------
    FileNotFoundError
        Nothing at the path.
    PermissionError
        The file or folder cannot be read.
    ValueError
        A folder where the source reads a file, or a file type the source does not read.
    TypeError
        ``path`` is not a string.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a string (a file or folder), got {path!r}")
    what, suffixes = PATH_SOURCES[source]
    given = Path(path).expanduser()
    folder = Path(base if base is not None else ".").absolute()
    # resolve() keeps the meaning of '..' after a symbolic link, as the system reads it
    p = given if given.is_absolute() else (folder / given).resolve()
    hint = (
        ""
        if given.is_absolute()
        else (f" (a relative path is read from the spec's folder, {str(folder)!r})")
    )
    if not p.exists():
        raise FileNotFoundError(f"{what} {str(p)!r} does not exist{hint}")
    try:
        if p.is_dir():
            if source == "file":
                raise ValueError(
                    f"{what} {str(p)!r} is a folder; path names a file ({', '.join(suffixes)})"
                )
            with os.scandir(p) as entries:
                next(entries, None)
        else:
            if p.suffix.lower() not in suffixes:
                raise ValueError(
                    f"{what} {str(p)!r}: unsupported file type {p.suffix!r}; "
                    f"{source!r} reads {', '.join(suffixes)}"
                    + (" or a folder of edge lists" if source == "graphs" else "")
                )
            if not p.is_file():
                raise ValueError(f"{what} {str(p)!r} is not a regular file")
            with open(p, "rb") as fh:
                fh.read(1)
    except PermissionError as exc:
        raise PermissionError(f"{what} {str(p)!r} cannot be read ({exc.strerror})") from None
    return str(p)


def _path(path, what):
    p = Path(str(path)).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"data {what} {str(p)!r} does not exist")
    return p


def file(path, target=None, seed=0):
    """A data file: ``.npy``, ``.npz`` (arrays ``X``, ``y``), ``.csv`` or ``.parquet``.

    ``path`` is read as given (relative: from the current folder); a spec's ``path`` is first
    resolved against the spec file's folder (``resolve_path``).
    """
    p = _path(path, "file")
    suffix = p.suffix.lower()
    y = None
    if suffix == ".npy":
        X = np.load(p, allow_pickle=False)
    elif suffix == ".npz":
        with np.load(p, allow_pickle=False) as z:
            if "X" not in z:
                raise ValueError(
                    f"{p}: an .npz data file holds an array named 'X' (and "
                    f"optionally 'y'); found {sorted(z.files)}"
                )
            X, y = z["X"], (z["y"] if "y" in z else None)
    elif suffix in (".csv", ".parquet"):
        X, y = _table(p, suffix, target)
    else:
        raise ValueError(
            f"{p}: unsupported data file type {suffix!r}; use .npy, .npz, .csv or .parquet"
        )
    X = np.asarray(X)
    if X.ndim != 2 or not np.issubdtype(X.dtype, np.number):
        raise ValueError(
            f"{p}: X must be a 2-D numeric array (samples as rows), got shape "
            f"{X.shape} of dtype {X.dtype}"
        )
    if len(X) == 0:
        raise ValueError(f"{p}: the data has no rows")
    if y is not None and len(y) != len(X):
        raise ValueError(f"{p}: y has {len(y)} entries for {len(X)} samples")
    out = {"X": np.ascontiguousarray(X, dtype=np.float64)}
    if y is not None:
        out["y"] = np.asarray(y)
    return out


def _some(names, n=8, width=40) -> str:
    """At most ``n`` of ``names``, each cut to ``width`` characters, and their count: what an
    error message (and so the error row of every run) echoes of a table's columns."""
    shown = [repr(str(c) if len(str(c)) <= width else str(c)[:width] + "...") for c in names[:n]]
    more = f", ... ({len(names):,} columns)" if len(names) > n else ""
    return "[" + ", ".join(shown) + more + "]"


def _table(p, suffix, target):
    try:
        import pandas as pd
    except ModuleNotFoundError:
        pd = None
    if suffix == ".parquet":
        if pd is None:
            raise ModuleNotFoundError(
                f"{p}: reading Parquet needs pandas (pip install pandas pyarrow)"
            )
        frame = pd.read_parquet(p)
    elif pd is not None:
        frame = pd.read_csv(p)
    else:  # numeric CSV with a header line
        with open(p, encoding="utf-8") as fh:
            names = [c.strip() for c in fh.readline().split(",")]
            if not fh.read().strip():
                raise ValueError(f"{p}: the data has no rows (a header line only)")
        values = np.loadtxt(p, delimiter=",", skiprows=1, ndmin=2)
        cols = {n: values[:, i] for i, n in enumerate(names)}
        y = cols.pop(target, None) if target is not None else None
        if target is not None and y is None:
            raise ValueError(f"{p}: no column {target!r} (columns: {_some(names)})")
        return np.column_stack(list(cols.values())), y
    if frame.empty:  # pandas reads the columns of no rows as text
        raise ValueError(f"{p}: the data has no rows (a header line only)")
    y = None
    if target is not None:
        if target not in frame.columns:
            raise ValueError(f"{p}: no column {target!r} (columns: {_some(list(frame.columns))})")
        y = frame.pop(target).to_numpy()
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    # pandas' own dtypes (pandas 3 reads text as StringDtype) are no NumPy dtypes, so
    # np.issubdtype cannot read them; booleans stay refused, as NumPy counts them
    bad = [
        c
        for c in frame.columns
        if not is_numeric_dtype(frame[c].dtype) or is_bool_dtype(frame[c].dtype)
    ]
    if bad:
        raise ValueError(
            f"{p}: feature columns must be numeric; {_some(bad)} are not (name a "
            'label column with target = "...")'
        )
    return frame.to_numpy(dtype=np.float64), y


#: Largest file of a graph collection (an edge list, ``labels.txt``, a pickle), in bytes.
MAX_GRAPH_FILE_BYTES = 2**26


def _read_regular(path: Path, what: str, limit: int = MAX_GRAPH_FILE_BYTES) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes (a link to one is read
    as it), else ``ValueError``.

    The file is opened without waiting (``O_NONBLOCK``: opening a FIFO would wait for a writer
    forever) and checked on the open descriptor (``fstat``), so that what is read is what was
    checked; a device (a link to ``/dev/zero``), a FIFO or a folder is refused unread.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(info.st_mode)
                else "a folder"
                if stat.S_ISDIR(info.st_mode)
                else "a device"
                if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
                else "a socket or other special file"
            )
            raise ValueError(f"{what} {str(path)!r} is not a regular file ({kind})")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(
            f"{what} {str(path)!r} has {max(info.st_size, len(data)):,} bytes, more than the "
            f"limit of {limit:,} bytes"
        )
    return data


def graphs(path, allow_pickle=False, seed=0):
    """A graph collection: a folder of edge lists, or a pickled list of networkx graphs.

    ``path`` is read as given; a spec's ``path`` is first resolved against the spec file's
    folder (``resolve_path``). Each file read (edge lists, ``labels.txt``, the pickle) must be
    a regular file of at most :data:`MAX_GRAPH_FILE_BYTES` bytes; a FIFO, a device or a folder
    among them is refused unread.
    """
    import networkx as nx

    p = _path(path, "graph collection")
    if not p.is_dir():
        if p.suffix.lower() not in (".pkl", ".pickle"):
            raise ValueError(f"{p}: a graph collection is a folder of edge lists or a .pkl file")
        if not allow_pickle:
            raise PermissionError(
                f"{p}: loading a pickle runs code from the file; pass "
                "--allow-pickle if you trust it"
            )
        import pickle

        items = pickle.loads(_read_regular(p, "graph collection"))
        if not isinstance(items, list) or not all(isinstance(g, nx.Graph) for g in items):
            raise ValueError(f"{p}: expected a pickled list of networkx graphs")
        return {"graphs": items}
    files = sorted(
        f for f in p.iterdir() if f.suffix in (".edgelist", ".txt") and f.name != "labels.txt"
    )
    if not files:
        raise ValueError(f"{p}: no *.edgelist or *.txt edge-list files in the folder")
    items = [
        nx.parse_edgelist(
            _read_regular(f, "edge-list file").decode("utf-8").splitlines(), nodetype=int
        )
        for f in files
    ]
    out = {"graphs": items}
    labels = p / "labels.txt"
    if labels.exists() or labels.is_symlink():
        text = _read_regular(labels, "labels file").decode("utf-8")
        y = np.loadtxt(io.StringIO(text), dtype=np.int64, ndmin=1)
        if len(y) != len(items):
            raise ValueError(f"{labels}: {len(y)} labels for {len(items)} graphs")
        out["y"] = y
    return out


#: name -> function; the function's keyword parameters are the source's parameters.
SOURCES = {name: _toy(name) for name in _TOY}
SOURCES.update(
    {
        "gaussian-mixture": gaussian_mixture,
        "isotropic-mixture": isotropic_mixture,
        "blobs": blobs,
        "rings": rings,
        "sample-image-patches": sample_image_patches,
        "moons": moons,
        "circles": circles,
        "swiss-roll": swiss_roll,
        "friedman1": friedman1,
        "uniform": uniform,
        "random-graphs": random_graphs,
        "gaussian-pair": gaussian_pair,
        "graph-pair": graph_pair,
        "gaussian-dictionary": gaussian_dictionary,
        "sparse-signals": sparse_signals,
        "hadamard": hadamard,
        "file": file,
        "graphs": graphs,
    }
)


#: parameter name -> rule (see :mod:`sparsekit.run._rules`), for every source that takes it:
#: checked when a spec is loaded, so that a bad value is refused before any run.
PARAMETER_RULES = {
    **dict.fromkeys(
        (
            "n_samples",
            "n_features",
            "n_clusters",
            "n_atoms",
            "n_nonzero",
            "n_signals",
            "n_graphs",
            "n_nodes",
            "n_labels",
            "n_rings",
            "min_nodes",
            "max_nodes",
            "patch",
            "grid",
        ),
        _rules.COUNT,
    ),
    "seed": _rules.NONNEGATIVE_INT,
    **dict.fromkeys(("noise", "cluster_std", "center_scale"), _rules.NONNEGATIVE),
    **dict.fromkeys(("scale", "var_x", "var_z"), _rules.POSITIVE),
    **dict.fromkeys(("p", "p_x", "p_z"), _rules.PROBABILITY),
    "factor": (lambda v: _rules.PROBABILITY[0](v) and v < 1, "a number in [0, 1)"),
    "n": (lambda v: _rules.COUNT[0](v) and v >= 2 and not v & (v - 1), "a power of two >= 2"),
}


#: name -> ``{module: pip requirement}``: the optional packages a source imports.
SOURCE_REQUIRES = {
    name: {"sklearn": "sparsekit[forest]"}
    for name in (
        *_TOY,
        "blobs",
        "circles",
        "moons",
        "swiss-roll",
        "friedman1",
        "sample-image-patches",
    )
}
SOURCE_REQUIRES["graphs"] = {"networkx": "networkx"}


def source_names() -> list[str]:
    """List the names of the data sources.

    Returns
    -------
    list of str
        The names, in registration order.
    """
    return list(SOURCES)


def source_parameters(name: str) -> set[str]:
    """Return the parameters a data source takes.

    Parameters
    ----------
    name : str
        A data source.

    Returns
    -------
    set of str
        The parameters it takes (``allow_pickle`` comes from the command line only).
    """
    params = set(inspect.signature(SOURCES[name]).parameters)
    return params - {"allow_pickle"}


def load(table: dict[str, Any], *, seed: int = 0, allow_pickle: bool = False) -> dict[str, Any]:
    """Load the data of a ``[data]`` table.

    Parameters
    ----------
    table : dict
        A ``[data]`` table of one grid point (no lists left): ``source`` and its parameters.
    seed : int, default 0
        Seeds generated data sets.
    allow_pickle : bool, default False
        Let a ``file`` source read pickled objects.

    Returns
    -------
    dict
        What the source gives: ``X`` (and ``y``), ``graphs``, or ``D``/``Y``/``coef``.
    """
    params = {k: v for k, v in table.items() if k != "source"}
    params.setdefault("seed", seed)
    name = table["source"]
    if name == "graphs":
        params["allow_pickle"] = allow_pickle
    return SOURCES[name](**params)


__all__ = ["load", "source_names", "source_parameters"]
