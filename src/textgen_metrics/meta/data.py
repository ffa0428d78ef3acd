"""The bundled sets of human judgments: public meta-evaluation data, shipped in the package.

Each set is one file ``textgen_metrics/data/human/<name>.json.xz`` written by
``tools/convert_human_judgments.py`` from the files its authors published (the converter's
docstring describes the format): documents stored once in an items table, rows pointing at them,
and beside them the set's licence text, BibTeX citation, source repository and commit, card and
the figures its authors published (``SetInfo.published``). Nothing here reads the network or the
folder the sets were converted from.

- :func:`bundled_sets` lists the names, :func:`describe_set` gives a set's :class:`SetInfo`;
- :func:`load_set` gives a :class:`HumanSet`: ``.info`` and ``.rows``, one uniform dict per row::

      {"item": str, "system": str, "prediction": str | None, "references": list[str],
       "source": str | None, "human": {dimension: float | str | None},
       "scores": {column: float | None}, "split": str | None, **extra}

  where ``extra`` is the set's ``SetInfo.extra_keys``: ``context`` (topical_chat: the knowledge
  fact), ``dataset`` (frank), ``hallucination_spans`` (halueval_general), ``query`` (the prompt, for
  the pair sets and halueval_general) and, for the pair sets (``kind == "pairs"``), ``baseline``
  (the second output; ``prediction`` is the first) and ``gold`` ("a": the first output is the
  better, "b": the second; the same as ``human["preference"]``). These are the record fields
  ``pairwise_preference`` reads (queries, predictions, baselines).
- ``HumanSet.judges`` (LLMBar sets): the authors' stored LLM judges, :class:`StoredJudge`.

Rows are cached per process (first load of a set well under a second); each call returns fresh
dicts, so a caller may change them.
"""

from __future__ import annotations

import functools
import json
import lzma
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

__all__ = ["SetInfo", "HumanSet", "StoredJudge", "bundled_sets", "describe_set", "load_set", "data_files"]

_PACKAGE = "textgen_metrics"
_FOLDER = ("data", "human")
_SUFFIX = ".json.xz"
FORMAT = 1

Verdict = Literal["a", "b"] | None


@dataclass(frozen=True)
class SetInfo:
    """A bundled set's card: what it is, where it came from, how to read it.

    ``default_human``, ``default_statistic``, ``default_level`` and ``default_group_by`` are what a
    meta-evaluation of the set uses unless told otherwise; ``references_per_item`` is None where
    the count varies; ``published`` holds the figures the authors published, each entry with its
    ``source`` (where it was read from) and the figures as printed; ``reference_systems``: the
    systems whose every output is one of its row's references (the WMT sets' human translations
    ``ref-A`` and ``ref-B``), which a reference-based metric would score against themselves."""

    name: str
    title: str
    description: str
    licence: str
    licence_text: str
    citation: str
    source: str
    human_columns: tuple[str, ...]
    default_human: tuple[str, ...]
    default_statistic: str
    default_level: str
    default_group_by: str
    score_columns: tuple[str, ...]
    splits: tuple[str, ...]
    rows: int
    items: int
    systems: int
    references_per_item: int | None
    kind: Literal["scores", "labels", "pairs"]
    extra_keys: tuple[str, ...]
    published: dict[str, Any] = field(hash=False, compare=False)
    reference_systems: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredJudge:
    """One stored LLM judge of an LLMBar set (``evaluator`` as LLMBar names it: GPT-4, ChatGPT,
    ChatGPT-0301, LLaMA2, PaLM2, Falcon; ``protocol``: Vanilla or Vanilla_NoRules).

    ``verdicts[i]`` is row i's pair of verdicts ``(original order, swapped order)``, both read
    against the original order: "a" = the row's ``prediction`` (output_1), "b" = its ``baseline``
    (output_2), None = no parsable verdict. ``statistics`` maps a split (or "all") to the
    authors' ``statistics.json`` for it, as published (strings such as "95 / 100 = 95.0%" kept)."""

    evaluator: str
    protocol: str
    verdicts: tuple[tuple[Verdict, Verdict], ...]
    statistics: dict[str, dict[str, Any]] = field(hash=False, compare=False)


@dataclass(frozen=True)
class HumanSet:
    """A loaded set: its card, its rows (see the module docstring) and, for the LLMBar sets, the
    stored judges (their verdicts aligned with ``rows``)."""

    info: SetInfo
    rows: list[dict[str, Any]]
    judges: tuple[StoredJudge, ...] = ()
    split: str | None = None


def data_files() -> Any:
    """The folder of the shipped files (an importlib.resources Traversable)."""
    folder = resources.files(_PACKAGE)
    for part in _FOLDER:
        folder = folder / part
    return folder


@functools.lru_cache(maxsize=1)
def _names() -> tuple[str, ...]:
    return tuple(sorted(entry.name[: -len(_SUFFIX)] for entry in data_files().iterdir()
                        if entry.name.endswith(_SUFFIX)))


def bundled_sets() -> list[str]:
    """The names of the bundled sets, sorted."""
    return list(_names())


def _check_name(name: str) -> None:
    if not isinstance(name, str) or name not in _names():
        raise ValueError(f"unknown bundled set {name!r}; the bundled sets are: {', '.join(_names())}")


@functools.cache
def _raw(name: str) -> dict[str, Any]:
    _check_name(name)
    blob = (data_files() / f"{name}{_SUFFIX}").read_bytes()
    data: dict[str, Any] = json.loads(lzma.decompress(blob))
    if data.get("format") != FORMAT:
        raise ValueError(f"{name}{_SUFFIX}: format {data.get('format')!r}, this version reads {FORMAT}")
    return data


@functools.cache
def describe_set(name: str) -> SetInfo:
    """The card of the bundled set ``name`` (ValueError, listing the names, for an unknown one)."""
    info = _raw(name)["info"]
    return SetInfo(
        name=info["name"], title=info["title"], description=info["description"], licence=info["licence"],
        licence_text=info["licence_text"], citation=info["citation"], source=info["source"],
        human_columns=tuple(info["human_columns"]), default_human=tuple(info["default_human"]),
        default_statistic=info["default_statistic"], default_level=info["default_level"],
        default_group_by=info["default_group_by"], score_columns=tuple(info["score_columns"]),
        splits=tuple(info["splits"]), rows=info["rows"], items=info["items"], systems=info["systems"],
        references_per_item=info["references_per_item"], kind=info["kind"],
        extra_keys=tuple(info["extra_keys"]), published=info["published"],
        reference_systems=_reference_systems(_raw(name)))


def _reference_systems(data: dict[str, Any]) -> tuple[str, ...]:
    """The systems whose output on every one of their rows is one of that row's references."""
    items, cols = data["items"], data["rows"]
    own = cols.get("references") or [None] * len(cols["system"])
    verdict: dict[str, bool] = {}
    for i, (system, prediction) in enumerate(zip(cols["system"], cols["prediction"], strict=True)):
        refs = own[i] if own[i] is not None else items["references"][cols["item"][i]]
        verdict[system] = verdict.get(system, True) and prediction is not None and prediction in refs
    return tuple(sorted(s for s, is_ref in verdict.items() if is_ref))


_CODES: dict[str, Verdict] = {"a": "a", "b": "b", "-": None}


@functools.cache
def _rows(name: str) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """Every row of ``name`` as a tuple of (key, value) pairs: immutable, so cached once."""
    data = _raw(name)
    items, cols = data["items"], data["rows"]
    item_extra = [k for k in items if k not in ("id", "source", "references")]
    n = len(cols["item"])
    splits = cols.get("split", [None] * n)
    own_refs = cols.get("references", [None] * n)
    human, scores, extra = cols["human"], cols["scores"], cols["extra"]
    out = []
    for i in range(n):
        it = cols["item"][i]
        refs = own_refs[i] if own_refs[i] is not None else items["references"][it]
        row: list[tuple[str, Any]] = [
            ("item", items["id"][it]), ("system", cols["system"][i]), ("prediction", cols["prediction"][i]),
            ("references", tuple(refs)), ("source", items["source"][it]),
            ("human", tuple((k, v[i]) for k, v in human.items())),
            ("scores", tuple((k, v[i]) for k, v in scores.items())), ("split", splits[i])]
        row += [(k, items[k][it]) for k in item_extra]
        row += [(k, v[i]) for k, v in extra.items()]
        out.append(tuple(row))
    return tuple(out)


def _fresh(row: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row:
        if key in ("human", "scores"):
            out[key] = dict(value)
        elif isinstance(value, (tuple, list)):
            out[key] = list(value)
        else:
            out[key] = value
    return out


@functools.cache
def _judges(name: str) -> tuple[StoredJudge, ...]:
    out = []
    for j in _raw(name).get("judges", []):
        codes = j["verdicts"]
        verdicts = tuple((_CODES[codes[k]], _CODES[codes[k + 1]]) for k in range(0, len(codes), 2))
        out.append(StoredJudge(evaluator=j["evaluator"], protocol=j["protocol"], verdicts=verdicts,
                               statistics=j["statistics"]))
    return tuple(out)


def load_set(name: str, split: str | None = None) -> HumanSet:
    """The bundled set ``name``, all its rows or those of ``split`` (ValueError, listing the valid
    names or splits, for an unknown one)."""
    info = describe_set(name)
    rows = _rows(name)
    judges = _judges(name)
    if split is not None:
        if split not in info.splits:
            valid = ", ".join(info.splits) if info.splits else "none: the set has no splits"
            raise ValueError(f"{name}: unknown split {split!r}; valid splits: {valid}")
        keep = [i for i, row in enumerate(rows) if dict(row)["split"] == split]
        rows = tuple(rows[i] for i in keep)
        judges = tuple(StoredJudge(evaluator=j.evaluator, protocol=j.protocol,
                                   verdicts=tuple(j.verdicts[i] for i in keep),
                                   statistics={split: j.statistics[split]} if split in j.statistics else {})
                       for j in judges)
    return HumanSet(info=info, rows=[_fresh(row) for row in rows], judges=judges, split=split)
