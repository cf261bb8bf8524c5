"""What input a component takes: one vocabulary, read from the component.

A component (kernel, sampler, manifold kernel, ...) says what samples it takes in its
``accepts`` attribute, with the input kinds :data:`INPUT_KINDS`: ``"vectors"`` (rows of an array
or sparse matrix) and ``"graphs"`` (a sequence of graphs). It is spelled as one kind
(``"vectors"``: a kernel evaluates one kind), ``"any"`` (every kind, or not applicable: a
projection takes a matrix) or a tuple of kinds (``("vectors", "graphs")``: a sampler, which may
narrow it per instance with a descriptor, as the λ rule ``"inverse-mean-norm"`` does).
:func:`input_kinds` reads every spelling; a :class:`~sparsekit.hookspecs.Registration` takes its
``accepts`` from its factory unless it is given.

A leaf module (it imports nothing of sparsekit): the registry layer uses it.
"""

from __future__ import annotations

from collections.abc import Iterable

#: The kinds of input samples.
INPUT_KINDS = ("vectors", "graphs")
#: The one-word spellings of ``accepts`` (a kind, or ``"any"``).
ACCEPTS = (*INPUT_KINDS, "any")


def input_kinds(accepts: str | Iterable[str]) -> tuple[str, ...]:
    """The input kinds an ``accepts`` value names, as a tuple in :data:`INPUT_KINDS` order.

    Parameters
    ----------
    accepts : str or iterable of str
        ``"vectors"``, ``"graphs"``, ``"any"``, or a tuple of kinds.

    Returns
    -------
    tuple of str
        The input kinds, among ``"vectors"`` and ``"graphs"``.

    Raises
    ------
    ValueError
        An unknown kind (the message lists the valid spellings).
    """
    kinds: tuple[str, ...]
    if isinstance(accepts, str):
        kinds = INPUT_KINDS if accepts == "any" else (accepts,)
    else:
        kinds = tuple(accepts)
    unknown = [k for k in kinds if k not in INPUT_KINDS]
    if unknown or not kinds:
        raise ValueError(
            f"unknown accepts={accepts!r}: use one of {list(ACCEPTS)} or a tuple "
            f"of {list(INPUT_KINDS)}"
        )
    return tuple(k for k in INPUT_KINDS if k in kinds)


def accepts_of(component: object, default: str = "vectors") -> tuple[str, ...]:
    """The input kinds of a component object or class.

    Parameters
    ----------
    component : object
        A component object or class; its ``accepts`` attribute is read.
    default : str
        The spelling used when it has none.

    Returns
    -------
    tuple of str
        The input kinds, among ``"vectors"`` and ``"graphs"``.

    Raises
    ------
    ValueError
        An ``accepts`` value outside the vocabulary.
    """
    return input_kinds(getattr(component, "accepts", default))


def accepts_label(kinds: str | Iterable[str]) -> str:
    """The one-word spelling of ``kinds``: the kind itself, or ``"any"`` for every kind.

    Parameters
    ----------
    kinds : str or iterable of str
        Any spelling of :func:`input_kinds`.

    Returns
    -------
    str
        ``"vectors"``, ``"graphs"`` or ``"any"``.

    Raises
    ------
    ValueError
        An unknown kind.
    """
    kinds = input_kinds(kinds)
    return kinds[0] if len(kinds) == 1 else "any"
