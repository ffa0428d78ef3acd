"""Meta-evaluation: how well a score agrees with people (bundled human judgments, statistics, reports)."""
