"""The experiment protocols of the theses, on top of the engine (:mod:`sparsekit.run`).

- :mod:`sparsekit.experiments.quickmeans`: the task ``quickmeans`` (Giffon 2020, §3.3.5);
- :mod:`sparsekit.experiments.fw_recovery`: the task ``frank-wolfe-recovery`` (Cherfaoui 2022,
  §5.4);
- :mod:`sparsekit.experiments.label_cost`: the tasks ``label-cost`` (Cherfaoui 2022, §3.3,
  Exp. 3.C) and ``nystrom-classifier`` (Giffon 2020, Table 3.3, "Nyström + SVM");
- :mod:`sparsekit.experiments.nystrom_tables`: the Nyström error and score-time tables
  (Cherfaoui 2022, §3.3), computed by the ``nystrom`` and ``sampler`` tasks;
- :mod:`sparsekit.experiments.nn`: the task ``nn`` (Giffon 2020, Ch. 2: the adaptive Nyström
  layer's experiments of :mod:`sparsekit.experiments.nn_nystrom`; §3.4: the sparse-factor
  compression of :mod:`sparsekit.experiments.nn_compress`; needs the ``nn`` extra);
- :mod:`sparsekit.experiments.demo`: the sections of ``sparsekit demo``.

The tasks are registered through the ``sparsekit_tasks`` hook of
:mod:`sparsekit.experiments._plugin`, as the engine's built-in tasks are.
"""

__all__: list[str] = []  # a namespace of modules: each submodule lists its names
