"""The statistics of evaluating the metrics, in one home below every study that uses them.

- ``resample``: the one resampler (bootstrap item counts, percentile intervals, the permutation
  draws of the paired tests);
- ``correlation``: one metric against people (``agreement``: Pearson, Spearman, Kendall, Cohen's
  kappa, accuracy, with intervals);
- ``agreement``: the meta-evaluation statistics' arithmetic over a table of rows (mt-metrics-eval's,
  with ties, groups, tie calibration and soft pairwise accuracy);
- ``statistic``: each of those statistics as one declared object with its computation (value,
  resamples, permutation batches, over systems, baseline) that the meta-evaluation asks;
- ``audit``: the judge audits' statistics on verdicts already made (position, verbosity,
  repeat, calibration, the alt-test);
- ``gates``: a quality gate's and a regression test's, over items (the error spent over the
  looks of adaptive repeats, the paired sign-flip test, Holm's adjustment, the minimum
  detectable drop).

:mod:`textgen_metrics.meta` and :mod:`textgen_metrics.audits` build their studies on these;
nothing here imports them.
"""
