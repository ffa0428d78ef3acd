"""Signatures: one string per result that records every setting that changes the score.

For BLEU, chrF and TER the signature is sacrebleu's own, built by sacrebleu's ``Signature``
classes from a sacrebleu metric object with the same settings, so it is identical to what
``sacrebleu`` prints (``nrefs:1|case:mixed|eff:no|tok:13a|smooth:none|version:2.6.0``; with a
bootstrap interval ``bs:1000|seed:12345`` too). Every other metric's signature has the same
shape, starting with the metric's name: ``rouge|tok:rouge_score|...|nrefs:1|version:0.1.0``,
where the version is textgen-metrics'.

Report a score with its signature, so that a reader can compute it again the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._version import __version__
from .numbers import format_number
from .significance import DEFAULT_CONFIDENCE

__all__ = ["signature", "with_fields", "sacrebleu_signature", "count_references", "format_value",
           "bootstrap_fields"]


def format_value(value: Any) -> str:
    """A setting as a signature shows it: yes/no for booleans (as sacrebleu), numbers with six
    significant digits (:func:`~textgen_metrics.numbers.format_number`, as ``g``),
    comma-separated sequences."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ",".join(format_value(v) for v in value)
    return format_number(value, 6)


def signature(name: str, *, version: str = __version__, **settings: Any) -> str:
    """``name|key:value|...|version:<version>``; settings that are None are left out."""
    parts = [name] + [f"{k}:{format_value(v)}" for k, v in settings.items() if v is not None]
    return "|".join(parts + [f"version:{version}"])


def with_fields(text: str, **fields: Any) -> str:
    """``text`` with ``key:value`` fields added just before its final ``version:`` field (or at
    the end when it has none); fields that are None are left out."""
    extra = [f"{k}:{format_value(v)}" for k, v in fields.items() if v is not None]
    if not extra:
        return text
    parts = text.split("|")
    at = len(parts) - 1 if parts and parts[-1].startswith("version:") else len(parts)
    return "|".join(parts[:at] + extra + parts[at:])


def bootstrap_fields(n_bootstrap: int | None = None, seed: int | None = None,
                     test: tuple[str, int] | None = None, ci: float | None = None) -> dict[str, Any]:
    """The fields a signature gets for a bootstrap interval or a paired test, named as
    sacrebleu names them: ``bs`` (resamples), ``ar`` (randomization trials), ``seed``, and
    ``ci`` for a confidence level other than sacrebleu's 0.95."""
    fields: dict[str, Any] = {}
    if test is not None:
        fields[test[0]] = test[1]
    if n_bootstrap and (test is None or test[0] != "bs"):
        fields["bs"] = n_bootstrap
    if n_bootstrap or test is not None:
        fields["seed"] = seed
    fields["ci"] = None if ci is None or ci == DEFAULT_CONFIDENCE else ci
    return fields


def count_references(references: Sequence[Sequence[str] | str]) -> int:
    """sacrebleu's ``num_refs``: the number of references per example when all examples have the
    same number, else -1 (which a signature prints as ``var``)."""
    counts = {1 if isinstance(r, str) else len(r) for r in references}
    return counts.pop() if len(counts) == 1 else -1


def sacrebleu_signature(metric: Any, num_refs: int, *, n_bootstrap: int | None = None,
                        seed: int | None = None, test: tuple[str, int] | None = None,
                        ci: float | None = None, **extra: Any) -> str:
    """The signature sacrebleu prints for the sacrebleu ``metric`` object (BLEU, CHRF, TER).

    ``num_refs`` as :func:`count_references`. ``n_bootstrap`` and ``seed``: a bootstrap interval
    (``--confidence``), as ``corpus_score(n_bootstrap=...)`` records it. ``test``: a paired test
    (``("bs", 1000)`` or ``("ar", 10000)``), as sacrebleu's ``PairedTest`` records it, together
    with ``n_bootstrap`` when intervals come with it. ``ci``: a confidence level other than
    sacrebleu's 0.95 is recorded too. ``extra`` fields (settings sacrebleu does not record, such
    as a BLEU ``max_ngram_order`` other than 4) go before the version.
    """
    metric.num_refs = num_refs
    metric.n_bootstrap = None
    metric.seed = None
    if test is None and n_bootstrap:
        metric.n_bootstrap = n_bootstrap
        metric.seed = str(seed).lower()
    sig = metric.get_signature()
    if test is not None:
        sig.update("seed", str(seed).lower())
        sig.update(test[0], test[1])
        if n_bootstrap:
            sig.update("bs", n_bootstrap)
    return with_fields(sig.format(), **extra, ci=None if ci is None or ci == DEFAULT_CONFIDENCE else ci)
