"""Timing helpers: each contender runs in the same process and run, results as ratios."""

import gc
import statistics
import time


def timed(fn, repeat=3, setup=None):
    """Median wall time of ``fn()`` over ``repeat`` runs (``setup()`` before each, untimed)."""
    times = []
    result = None
    for _ in range(repeat):
        if setup:
            setup()
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def print_table(title, rows, header=("contender", "seconds", "speed-up")):
    print(f"\n## {title}")
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))
