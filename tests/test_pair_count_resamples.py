"""The pair-count statistics' ungrouped resamples from one product of the rows' counts (the path
agreement()'s Kendall takes above 128 examples) equal the same statistics on the repeated rows,
to the last bit: every Kendall variant and acc23, ties, items with several rows, a constant; and
Spearman's from each value's count, to rounding."""

import numpy as np
import pytest

from textgen_metrics.stats.resample import item_counts
from textgen_metrics.stats.statistic import STATISTICS, GroupStatistic, Rows


def rows(h, m, items):
    n = len(h)
    return Rows(np.asarray(h, dtype=np.float64), np.asarray(m, dtype=np.float64), np.asarray(items),
                np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64))


def cases():
    rng = np.random.default_rng(21)
    n = 150
    likert = rng.integers(1, 6, n)
    yield "likert", rows(likert, np.clip(likert + rng.integers(-1, 2, n), 1, 5), np.arange(n))
    yield "reals, two rows per item", rows(rng.normal(size=n), np.round(rng.normal(size=n), 1), np.arange(n) // 2)
    yield "a constant metric", rows(rng.integers(1, 4, n), np.full(n, 2.0), np.arange(n))


@pytest.mark.parametrize("name", ["kendall", "kendall_c", "kendall_23", "acc23"])
def test_weighted_pair_counts_equal_the_repeated_rows(name):
    statistic = STATISTICS[name]
    for label, r in cases():
        counts = next(item_counts(int(r.item.max()) + 1, 40, 5))
        fast = statistic.segment_resampled(r, "none", counts)
        slow = GroupStatistic.segment_resampled(statistic, r, "none", counts)
        assert fast.shape == (40,)
        np.testing.assert_array_equal(fast, slow, err_msg=f"{name}, {label}")


def test_weighted_spearman_equals_the_repeated_rows():
    """Spearman's ungrouped resamples from each value's count (ranks from counts, a weighted
    Pearson) equal Spearman on the repeated rows to rounding, and are undefined on the same
    resamples (a constant metric; a resample of two rows drawing one of them twice)."""
    statistic = STATISTICS["spearman"]
    tiny = rows([1.0, 2.0], [3.0, 1.0], [0, 1])
    for label, r in [*cases(), ("two rows", tiny)]:
        counts = next(item_counts(int(r.item.max()) + 1, 200, 5))
        fast = statistic.segment_resampled(r, "none", counts)
        slow = GroupStatistic.segment_resampled(statistic, r, "none", counts)
        assert fast.shape == (200,)
        np.testing.assert_array_equal(np.isnan(fast), np.isnan(slow), err_msg=label)
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-13, err_msg=label)
        assert label != "a constant metric" or np.isnan(fast).all()
    assert np.isnan(statistic.segment_resampled(tiny, "none", next(item_counts(2, 200, 5)))).any()
