"""The tasks of the theses' protocols, registered through the same hook as third-party tasks."""

from ..hookspecs import hookimpl


@hookimpl
def sparsekit_tasks():
    # imported here: the registry imports this module at construction, the tasks at first use
    from . import fw_recovery, nn, quickmeans

    yield quickmeans.TASK.registration()
    yield fw_recovery.TASK.registration()
    yield nn.TASK.registration()
