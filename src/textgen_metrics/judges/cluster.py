"""The driver's side of judging on a cluster: one call that turns a judge into the judge its
workers get, its limits held for the sum of them.

    with cluster_judge(judge, on="ray", cache="dir:/shared/judge-cache") as worker_judge:
        ...  # ship worker_judge to the workers (it pickles as its settings, budget and cache)

``on="ray"``: a named Ray actor holds the budget (``RayBudget``; ``ray.init`` first, or it is
called). ``on="server"``: a budget server in this process (``BudgetServer``; Spark executors or
any processes that reach ``host``). The budget holds the judge's ``requests_per_minute``,
``tokens_per_minute`` and ``concurrency`` for all workers together. A local model's judge
(``hf:``, ``gguf:``, ``tiny:``) computes on each worker: its ``concurrency`` (the batch size) stays per
worker, only its rate limits, if any, are shared. A judge with nothing to share gets no budget.
The budget ends with the block.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .base import _KEEP, Judge
from .budget import BudgetServer, RayBudget

__all__ = ["cluster_judge", "LOCAL_BACKENDS"]

LOCAL_BACKENDS = frozenset({"hf", "gguf", "tiny"})  # judges that compute where they run: no shared concurrency


def cluster_limits(judge: Judge) -> dict[str, Any]:
    """What a cluster budget for ``judge`` holds for the sum of the workers."""
    limits = judge.limits()
    if judge.backend in LOCAL_BACKENDS:
        limits["concurrency"] = None
    return limits


@contextlib.contextmanager
def cluster_judge(judge: Judge, on: str = "ray", cache: Any = _KEEP, host: str = "127.0.0.1",
                  lease_seconds: float = 30.0) -> Iterator[Judge]:
    """A copy of ``judge`` for the workers of a cluster: one budget for all of them (``on``:
    ``"ray"`` or ``"server"``), and ``cache`` (e.g. ``"dir:/shared/judge-cache"``; not given:
    the judge's own)."""
    if not isinstance(judge, Judge):
        raise TypeError(f"judge: expected a textgen_metrics judge (get_judge(...) makes one), got "
                        f"{type(judge).__name__}")
    if on not in ("ray", "server"):
        raise ValueError(f"on: {on!r} is not one of ['ray', 'server']")
    limits = cluster_limits(judge)
    if all(value is None for value in limits.values()):
        yield judge.share(budget=None, cache=cache)
        return
    if on == "ray":
        budget = RayBudget.create(**limits, lease_seconds=lease_seconds)
        try:
            yield judge.share(budget=budget, cache=cache)
        finally:
            budget.close()
    else:
        with BudgetServer(**limits, host=host, lease_seconds=lease_seconds) as server:
            yield judge.share(budget=server.client(), cache=cache)
