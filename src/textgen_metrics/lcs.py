"""Longest common subsequence kernels (ROUGE-L, rougeLsum, rougeW), from the compiled core.

``lcs_length`` is the bit-parallel LCS of Allison and Dix (1986) / Hyyrö (2004) over 64-bit words;
``lcs_indices`` walks back through the same bit rows exactly as rouge-score's
``_backtrack_norec`` does (same tie-breaking, same LCS path); ``union_lcs_indices`` is
rouge-score's ``_union_lcs`` for every reference sentence; ``wlcs_hits`` is the weighted LCS of the
official ROUGE-1.5.5 script (``wlcs_inner`` and ``markLCS``, floating-point operations in the same
order). The kernels live in ``textgen_metrics._native``; the Python versions they replaced are the
references of ``tests/reference_kernels.py``.
"""

from __future__ import annotations

from ._native import lcs_indices, lcs_length, lcs_table, union_lcs_indices, wlcs_hits

__all__ = ["lcs_length", "lcs_indices", "lcs_table", "union_lcs_indices", "wlcs_hits"]
