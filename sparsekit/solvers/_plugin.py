"""Built-in solvers, registered through the same hook as third-party plugins."""
from ..hookspecs import hookimpl


@hookimpl
def sparsekit_solvers():
    return []
