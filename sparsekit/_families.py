"""The registry's families, one :class:`Family` record each, in the one table :data:`FAMILIES`.

Every reader of a family's facts takes them from here: the registry (hook, built-in plugins,
where a component is used), :mod:`sparsekit.components` (the object's method, the spec forms a
family accepts, the ``get_*`` shortcuts), :mod:`sparsekit.protocols` (the protocol and result
type), the spec checker of ``sparsekit run`` (the component sections) and the command line
(``sparsekit list --family``). Adding a family is one row here, one hook in
:class:`sparsekit.hookspecs.Specs` and one ``_plugin.py``.

A leaf of the registry layer: it imports nothing of sparsekit but :mod:`sparsekit._names`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._names import normalize_name


@dataclass(frozen=True, eq=False)
class Family:
    """One registry family: what its components are and who provides them.

    Parameters
    ----------
    name : str
        The family's name (``"kernel"``, ``"manifold-kernel"``, ...).
    hook : str
        The hook its plugins implement (a method of :class:`sparsekit.hookspecs.Specs`).
    protocol : str
        The name of its protocol class in :mod:`sparsekit.protocols`.
    method : str
        The method every component object of the family has (``"sample"``, ...; empty: none
        is checked).
    result : tuple of str or None
        ``(module, class)`` of what ``method`` returns, checked by
        :func:`sparsekit.components.check_result`; None: not checked.
    inputs : tuple of str
        The spec forms :func:`sparsekit.components.resolve` accepts besides a name and an
        object: ``"function"`` (wrapped in a ``CallableKernel``) and ``"precomputed"``.
    uses : str
        Where a component of the family is used (``{name}``: its canonical name): the message
        of a name looked up in another family.
    plugins : tuple of str
        The modules of the built-in plugins that register the family's components.
    getter : str or None
        The name of its shortcut in :mod:`sparsekit.components` (and at the top level).
    label : str
        What one component is, in words (``"landmark sampler"``).
    example : str
        A call of the shortcut, for its docstring.
    component : bool
        A family of components (listed by ``Registry.list()``); False for the tasks.
    section : bool
        Users configure it by name with a table of parameters: a top-level ``[<name>]``
        section of a spec of ``sparsekit run``, and the ``<name>=`` with ``<name>_params`` of
        the estimators.

    Notes
    -----
    There is one record per family, compared by identity (``eq=False``): without the generated
    ``__eq__`` and ``__hash__`` the class costs less to create when ``sparsekit`` is imported.
    """

    name: str
    hook: str
    protocol: str
    method: str
    result: tuple[str, str] | None
    inputs: tuple[str, ...]
    uses: str
    plugins: tuple[str, ...]
    getter: str | None
    label: str
    example: str = ""
    component: bool = True
    section: bool = False


#: Every registry family, in the order they are listed.
FAMILIES = (
    Family(
        name="kernel",
        hook="sparsekit_kernels",
        protocol="KernelProtocol",
        method="__call__",
        result=None,
        inputs=("function", "precomputed"),
        uses=(
            "sparsekit.get_kernel({name!r}), or the kernel= of Nystroem, KernelKMeans, the MMD "
            "tests and the samplers"
        ),
        plugins=("sparsekit.kernels._plugin",),
        getter="get_kernel",
        label="kernel",
        example='get_kernel("rbf", gamma=0.5)',
        section=True,
    ),
    Family(
        name="sampler",
        hook="sparsekit_samplers",
        protocol="SamplerProtocol",
        method="sample",
        result=("sparsekit.samplers.base", "Landmarks"),
        inputs=(),
        uses="sparsekit.get_sampler({name!r}), or the sampler= of Nystroem and mmd2_nystrom",
        plugins=("sparsekit.samplers._plugin",),
        getter="get_sampler",
        label="landmark sampler",
        example='get_sampler("dac-rls", lam=1.0)',
        section=True,
    ),
    Family(
        name="solver",
        hook="sparsekit_solvers",
        protocol="SolverProtocol",
        method="solve",
        result=("sparsekit.solvers.base", "SparseResult"),
        inputs=(),
        uses=(
            "sparsekit.get_solver({name!r}), or the solver= of SparseCoder and the [solver] "
            "section of the sparse-coding task"
        ),
        plugins=("sparsekit.solvers._plugin",),
        getter="get_solver",
        label="sparse solver",
        example='get_solver("omp")',
        section=True,
    ),
    Family(
        name="factorizer",
        hook="sparsekit_factorizers",
        protocol="FactorizerProtocol",
        method="factorize",
        result=("sparsekit.factorizers.base", "FactorizationResult"),
        inputs=(),
        uses=(
            "sparsekit.get_factorizer({name!r}), or the factorizer= of QuicKMeans and the "
            "[solver] section of the palm4msa task"
        ),
        plugins=("sparsekit.factorizers._plugin",),
        getter="get_factorizer",
        label="factorizer (factorize(M, constraints) -> FactorizationResult)",
        example='get_factorizer("palm4msa", n_iter=100)',
    ),
    Family(
        name="projection",
        hook="sparsekit_projections",
        protocol="ProjectionProtocol",
        method="",
        result=None,
        inputs=(),
        uses=(
            "sparsekit.get_projection({name!r}), or a ({name!r}, params) constraint of a factorizer"
        ),
        plugins=("sparsekit.projections._plugin",),
        getter="get_projection",
        label="projection (Palm4MSA constraint)",
        example='get_projection("splincol", shape=(64, 64), k=2)',
    ),
    Family(
        name="manifold-kernel",
        hook="sparsekit_manifold_kernels",
        protocol="ManifoldKernelProtocol",
        method="gram",
        result=None,
        inputs=(),
        uses=(
            "sparsekit.get_manifold_kernel({name!r}), or the manifold estimators (Isomap, "
            "LocallyLinearEmbedding, SpectralEmbedding, ...). A manifold kernel is "
            "data-dependent: after fit(X_train), gram() and kernel(X_new) are evaluated against "
            "the fitted points only, so it cannot serve where a kernel k(X, Y) is expected "
            "(Nystroem, KernelKMeans, the MMD tests, the Dask backend, the samplers)"
        ),
        plugins=("sparsekit.manifold._plugin",),
        getter="get_manifold_kernel",
        label="manifold (data-dependent) kernel",
        example='get_manifold_kernel("isomap-geodesic", n_neighbors=10)',
    ),
    Family(
        name="task",
        hook="sparsekit_tasks",
        protocol="TaskProtocol",
        method="run",
        result=None,
        inputs=(),
        uses="task = {name!r} in a spec of sparsekit run, or sparsekit.run.run_task({name!r})",
        plugins=("sparsekit.run._plugin", "sparsekit.experiments._plugin"),
        getter=None,
        label="task of sparsekit run",
        component=False,
    ),
)

#: The family names, in :data:`FAMILIES` order.
NAMES = tuple(f.name for f in FAMILIES)
#: The families of components (``Registry.list()``); the tasks are listed apart.
COMPONENT_NAMES = tuple(f.name for f in FAMILIES if f.component)
#: family -> the name of its hook (``sparsekit.plugins.HOOKS``).
HOOKS = {f.name: f.hook for f in FAMILIES}
_BY_NAME = {f.name: f for f in FAMILIES}


def family(name: str) -> Family:
    """The :class:`Family` called ``name`` (case-insensitive, a plural ``s`` dropped).

    Parameters
    ----------
    name : str
        ``"kernel"``, ``"Samplers"``, ``"manifold_kernel"``, ...

    Returns
    -------
    Family
        Its record.

    Raises
    ------
    ValueError
        No family of that name (the message lists them).
    """
    found = _BY_NAME.get(normalize_name(name).rstrip("s"))
    if found is None:
        raise ValueError(f"family must be one of {list(NAMES)}, got {name!r}")
    return found
