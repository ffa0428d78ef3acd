"""Meta-evaluation: how well a score agrees with people (bundled human judgments, statistics, reports).
:class:`Study` declares what to meta-evaluate."""

from .study import Study as Study
