"""The library's exceptions and warnings: the estimators' and the registry's.

``NotFittedError`` (an estimator used before ``fit``) is one class for the whole library. Where
scikit-learn is installed it subclasses ``sklearn.exceptions.NotFittedError`` (scikit-learn's
checks, ``check_is_fitted`` users and ``except sklearn.exceptions.NotFittedError`` recognize
it); either way it is a ``ValueError`` and an ``AttributeError``, as scikit-learn's is.

Importing scikit-learn takes about 0.8 s, which importing an estimator module must not pay
(QuicK-means' module import is about 0.3 s without it), so the class is created on first use:
reading ``sparsekit.exceptions.NotFittedError`` (or ``sparsekit.NotFittedError``) or raising
through :func:`not_fitted_error`. Every later access returns the same class object.
"""

from __future__ import annotations

import threading

__all__ = [  # noqa: F822 - NotFittedError is created by __getattr__
    "NotFittedError",
    "NotPositiveDefiniteError",
    "not_fitted_error",
    "ComponentConflictError",
    "ComponentConflictWarning",
    "ComponentResultError",
    "PluginLoadWarning",
    "PluginWarning",
    "UnknownComponentError",
    "UnknownHookWarning",
    "WrongFamilyError",
]

_LOCK = threading.Lock()


def _create():
    try:
        from sklearn.exceptions import NotFittedError as sklearn_not_fitted
    except ImportError:  # scikit-learn is optional
        bases = (ValueError, AttributeError)
    else:
        bases = (sklearn_not_fitted,)

    class NotFittedError(*bases):
        """An estimator was used before ``fit``: call ``fit`` first.

        A ``ValueError`` and an ``AttributeError``; also scikit-learn's ``NotFittedError``
        where scikit-learn is installed.
        """

    NotFittedError.__module__ = __name__  # where pickle finds it
    NotFittedError.__qualname__ = "NotFittedError"
    return NotFittedError


def __getattr__(name):
    if name != "NotFittedError":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _LOCK:
        cls = globals().get("NotFittedError")
        if cls is None:
            cls = globals()["NotFittedError"] = _create()  # later reads skip __getattr__
    return cls


def not_fitted_error(message: str) -> Exception:
    """Build a :class:`NotFittedError` with ``message``.

    Parameters
    ----------
    message : str
        What the error says.

    Returns
    -------
    NotFittedError
        The exception, to ``raise``.
    """
    return __getattr__("NotFittedError")(message)


class NotPositiveDefiniteError(ValueError):
    """A matrix that must be positive (semi-)definite is not.

    The kernel is not positive semi-definite on the points, or the regularization is too small
    for the rounding errors of the kernel values.
    """


class UnknownComponentError(ValueError, KeyError):
    """A component name that no plugin registered."""

    def __str__(self):  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class WrongFamilyError(UnknownComponentError):
    """A name looked up in a family it does not belong to (a factorizer asked for as a solver).

    The message says what it is and where it is used (the ``uses`` of its family,
    :mod:`sparsekit._families`).

    Parameters
    ----------
    message : str
        The error message.
    family : str
        The family the name belongs to (kept as the attribute ``family``; the first one in
        ``sparsekit._families.FAMILIES`` order when several have it).
    """

    def __init__(self, message: str, family: str):
        super().__init__(message)
        self.family = family


class ComponentConflictError(RuntimeError):
    """Two built-in components registered the same name (or alias) in one family.

    A third-party plugin that claims a taken name gets a :class:`ComponentConflictWarning`
    instead: its component is skipped and the library keeps working.
    """


class ComponentResultError(TypeError):
    """A component returned the wrong type (a sampler not a ``Landmarks``, ...)."""


class PluginWarning(UserWarning):
    """Something of a plugin was skipped; the others keep working (base class)."""


class PluginLoadWarning(PluginWarning):
    """A plugin could not be loaded, raised in a hook, or yielded a bad record."""


class ComponentConflictWarning(PluginWarning):
    """A plugin's component claims a name that another plugin (or a built-in) already has."""


class UnknownHookWarning(PluginWarning):
    """A plugin implements a hook that is not one of sparsekit's (a typo of the hook name)."""
