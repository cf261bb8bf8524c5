"""The engine's built-in tasks, registered through the same hook as third-party tasks."""

from ..hookspecs import hookimpl


@hookimpl
def sparsekit_tasks():
    # imported here: the registry imports this module at construction, the tasks at first use
    from . import (
        task_gram,
        task_kernel_kmeans,
        task_kernel_ridge,
        task_mmd,
        task_nystrom,
        task_omp_forest,
        task_out_of_sample,
        task_palm4msa,
        task_sampler,
        task_sparse_coding,
        task_three_sample,
    )

    for module in (
        task_nystrom,
        task_sampler,
        task_sparse_coding,
        task_kernel_kmeans,
        task_mmd,
        task_three_sample,
        task_palm4msa,
        task_gram,
        task_out_of_sample,
        task_omp_forest,
        task_kernel_ridge,
    ):
        yield module.TASK.registration()
