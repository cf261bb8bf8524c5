"""The parallel runtime: threads, the library's only pools, memory checks and progress.

Modules
-------
- ``threads``: the one thread setting (:func:`~sparsekit._runtime.threads.thread_limit`,
  ``effective_n_jobs``, the public boundary ``n_jobs_limit`` / ``with_n_jobs``) and the
  process-wide BLAS limit shared safely between threads (``blas_limit``).
- ``pools``: the row-range scheduler (``run_row_ranges``) and the block scheduler
  (``run_blocks``) on one family of thread pools, one per thread count. The kernels' parallel
  ``exp`` runs on them too (``kernels._cpu.exp_inplace``).
- ``small_blas``: one BLAS thread for small and skinny products on hot paths.
- ``memory``: the estimate before a dense n x n allocation (warn, or refuse with the cheaper
  choice), from the machine's, the rlimits' and the cgroups' available memory.
- ``progress``: progress bars and lines of long computations (``show_progress``).

Rules
-----
- **The thread count is resolved once, at the public boundary, and carried down.** Every
  estimator takes ``n_jobs`` and runs its public methods under ``thread_limit(n_jobs)``
  (``with_n_jobs``; the functions with ``n_jobs``, such as the MMD tests, use ``n_jobs_limit``);
  ``None`` keeps the setting in force: the innermost ``thread_limit``, else the usable CPUs, at
  most the ``NUMBA_NUM_THREADS`` the process started with. The setting lives in one context
  variable of ``threads``; code below reads it with ``effective_n_jobs()`` or receives it as an
  argument, and nothing reads it back from Numba's current thread count or the BLAS limit.
  ``sparsekit.thread_limit`` is the knob for code that takes no ``n_jobs`` (a kernel or a
  solver called directly, a sampler inside an estimator).
- **The pools of ``pools`` are the library's only pools.** A child made by ``fork`` starts new
  ones (``os.register_at_fork``: the parent's pool objects have no threads there), and forgets
  the BLAS limits of the parent's other threads. Pools are not nested: a call from a pool's
  worker (or from the thread running ``run_blocks``' blocks) runs inline, and
  ``effective_n_jobs()`` is 1 there. ``tests/test_fork_safety.py`` runs every public entry
  point that starts a pool again in a forked child.
- **No ``prange``.** The library compiles no ``parallel=True`` kernel: every parallel Numba loop
  is a serial ``@njit(nogil=True)`` kernel over a row range, run by ``run_row_ranges`` (short
  first-call compiles, no second threading runtime to make fork-safe). There are no named
  exceptions; ``run_blocks(numba_regions=True)`` exists for a plugin's ``parallel=True`` kernel.
- **Per-call cost.** A thread setting (Numba's, BLAS's, the context variable) is changed only
  when it differs from the one in force; BLAS's thread-count functions are looked up once.
  The memory check reads the cgroup limits once per process (kept ``memory.LIMITS_SECONDS``)
  and reuses a whole reading for small allocations (``memory.REUSE_SECONDS``).
"""
