"""The tasks of the theses' protocols, registered through the same hook as third-party tasks."""

from ..hookspecs import hookimpl


@hookimpl
def sparsekit_tasks():
    # imported here: the registry imports this module at construction, the tasks at first use
    from . import fw_recovery, label_cost, nn, quickmeans

    yield quickmeans.TASK.registration()
    yield fw_recovery.TASK.registration()
    yield nn.TASK.registration()
    yield label_cost.LABEL_COST.registration()
    yield label_cost.NYSTROM_CLASSIFIER.registration()
