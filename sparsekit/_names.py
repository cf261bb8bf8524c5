"""Names: the canonical spelling of a component name and the did-you-mean hint.

A leaf module (it imports nothing of sparsekit), so that the registry, the spec parser, the
tasks and the input checks share one rule: names are case-insensitive and read ``_`` and
spaces as ``-``; an unknown name is answered with the closest known one.
"""

from __future__ import annotations

import difflib


def normalize_name(name: str) -> str:
    """Canonical form of a component name: lower case, ``_`` and spaces read as ``-``.

    Raises
    ------
    TypeError
        ``name`` is not a str.
    """
    if not isinstance(name, str):
        raise TypeError(f"component name must be a str, got {type(name).__name__}")
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def closest_match(word, options, cutoff: float = 0.5):
    """The option closest to ``word`` (:func:`difflib.get_close_matches`), or None.

    ``word`` and the options are compared as strings; the option is returned as given.
    """
    options = list(options)
    by_text = {str(o): o for o in options}
    match = difflib.get_close_matches(str(word), list(by_text), n=1, cutoff=cutoff)
    return by_text[match[0]] if match else None


def did_you_mean(word, options, cutoff: float = 0.5) -> str:
    """`` Did you mean 'x'?`` for the closest of ``options`` to ``word``, or ``''``."""
    match = closest_match(word, options, cutoff)
    return f" Did you mean {str(match)!r}?" if match is not None else ""
