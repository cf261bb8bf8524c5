"""Rules for the values of task and data-source parameters, checked when a spec is loaded.

A rule is ``(test, what)``: ``test(value) -> bool`` and the words that complete "must be ..."
(:func:`one_of` adds the options, for the closest one in the message).
:func:`rules` makes a task's ``check`` hook from ``{parameter: rule}``.
"""

from __future__ import annotations

import numbers

from .._names import did_you_mean


def _int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


COUNT = (lambda v: _int(v) and v >= 1, "an integer >= 1")
NONNEGATIVE_INT = (lambda v: _int(v) and v >= 0, "an integer >= 0")
POSITIVE = (lambda v: _real(v) and v > 0, "a number > 0")
NONNEGATIVE = (lambda v: _real(v) and v >= 0, "a number >= 0")
FRACTION = (lambda v: _real(v) and 0 < v < 1, "a number in (0, 1)")
PROBABILITY = (lambda v: _real(v) and 0 <= v <= 1, "a probability in [0, 1]")


def one_of(*options) -> tuple:
    """The rule ``value in options`` (its message names the closest option)."""
    return (lambda v: v in options, f"one of {', '.join(map(repr, options))}", options)


def check_rules(params: dict, rules: dict) -> None:
    """Apply ``{parameter: rule}`` to ``params``.

    A parameter that is absent or None passes (None is the "not set" of the tasks); a list is
    checked item by item (a parameter given as a list, such as the sizes of a sweep inside one
    run).

    Raises
    ------
    ValueError
        ``"<parameter> must be <what>, got <value>."`` for the first value that breaks its
        rule (with the closest option, for a rule of :func:`one_of`).
    """
    for key, (test, what, *options) in rules.items():
        value = params.get(key)
        if value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            if not test(item):
                hint = did_you_mean(item, options[0]) if options and isinstance(item, str) else ""
                raise ValueError(f"{key} must be {what}, got {item!r}.{hint}")


def rules(table: dict):
    """A task's ``check`` hook that applies ``table`` (see :func:`check_rules`).

    Its ``names`` attribute lists the parameters of ``table``: a spec's value for one of
    them is checked by its rule alone, not against the type of its default (``n_init`` of
    ``kernel-kmeans`` is 3 or ``"auto"``).
    """

    def check(params: dict) -> None:
        check_rules(params, table)

    check.names = frozenset(table)  # type: ignore[attr-defined]
    return check
