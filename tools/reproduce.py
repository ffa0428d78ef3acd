"""Published meta-evaluation figures, reproduced from the bundled sets by the project's own code.

    python tools/reproduce.py

prints each table as Markdown (docs/meta_evaluation.md carries them); tests/test_meta_reproduce.py
holds every figure to its published value. A tool of the repository, not of the library: each
table is a ``meta_eval`` (or ``position_audit``) call a user can make.

- :func:`geval_table1`: G-Eval's Table 1 (UniEval's ROUGE rows on SummEval), summary level, with
  the recipe that reproduces it: the mean over the 11 references, Porter stemming, ROUGE-Lsum over
  sentences.
- :func:`frank_partial`: FRANK's partial correlations (controlling for the system) of the
  authors' published baseline scores, and of the same ROUGE and BLEU recomputed from FRANK's texts.
- :func:`unieval_correlations`: UniEval's correlations from its stored predictions.
- :func:`llmbar_judges`: each stored LLMBar judge's accuracy per order and positional agreement,
  from its stored verdicts, through :func:`textgen_metrics.position_audit`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from textgen_metrics.lexical.rouge import rouge
from textgen_metrics.meta.data import bundled_sets, describe_set, load_set
from textgen_metrics.meta.run import meta_eval
from textgen_metrics.numbers import format_number
from textgen_metrics.stats.audit import position_audit

__all__ = ["geval_table1", "frank_partial", "unieval_correlations", "llmbar_judges", "GEVAL_RECIPE", "main"]

GEVAL_RECIPE: dict[str, Any] = {"use_stemmer": True, "multi_ref": "mean", "split_summaries": True,
                                "rouge_types": ["rouge1", "rouge2", "rougeLsum"]}
_GEVAL_ROWS = {"ROUGE-1": "rouge.rouge1", "ROUGE-2": "rouge.rouge2", "ROUGE-L": "rouge.rougeLsum"}
FRANK_RECOMPUTED: dict[str, tuple[str, dict[str, Any]]] = {
    # our score -> (the authors' column, our metric's options): ROUGE F-measure with Porter stemming
    "rouge.rouge1": ("Rouge 1", {"use_stemmer": True}),
    "rouge.rouge2": ("Rouge 2", {"use_stemmer": True}),
    "rouge.rougeL": ("Rouge L", {"use_stemmer": True}),
}


def geval_table1(n_resamples: int = 0, seed: int | None = 12345) -> list[dict[str, Any]]:
    """One row per (ROUGE row, dimension, statistic): ``published``, ``ours``, ``ci``."""
    published = describe_set("summeval").published["geval_table1_rouge"]
    result = meta_eval("summeval", metrics=["rouge"], options={"rouge": GEVAL_RECIPE},
                       statistics=["spearman", "kendall"], level=published["level"], group_by=published["group_by"],
                       n_resamples=n_resamples, seed=seed, compare=False)
    got = {(r["metric"], r["human"], r["statistic"]): r for r in result["results"]}
    out = []
    for row, metric in _GEVAL_ROWS.items():
        for dim, figures in published["figures"][row].items():
            for stat, value in figures.items():
                r = got[metric, dim, stat]
                out.append({"row": row, "metric": metric, "human": dim, "statistic": stat, "published": value,
                            "ours": r["value"], "ci": r["ci"], "n": r["n"], "groups": r["groups"],
                            "groups_skipped": r["groups_skipped"]})
    return out


def frank_partial(split: str | None = None, n_resamples: int = 0, seed: int | None = 12345) -> dict[str, Any]:
    """FRANK's partial Pearson and Spearman (controlling for the system) of every published
    baseline column, and of this project's ROUGE recomputed from the texts
    (:data:`FRANK_RECOMPUTED`), with the share of rows where ours equals the published column to
    its 5 decimals."""
    data = load_set("frank", split=split)
    columns = list(data.info.score_columns)
    result = meta_eval("frank", split=split, metrics=["rouge"],
                       options={"rouge": {"use_stemmer": True, "rouge_types": ["rouge1", "rouge2", "rougeL"]}},
                       score_columns=columns, statistics=["partial_pearson", "partial_spearman"],
                       n_resamples=n_resamples, seed=seed, compare=False)
    ours = rouge(predictions=[r["prediction"] for r in data.rows], references=[r["references"] for r in data.rows],
                 use_aggregator=False, use_stemmer=True, rouge_types=["rouge1", "rouge2", "rougeL"])
    equal = {}
    for name, (column, _) in FRANK_RECOMPUTED.items():
        mine = ours[name.split(".", 1)[1]]
        pairs = [(m, r["scores"][column]) for m, r in zip(mine, data.rows, strict=True)
                 if r["scores"][column] is not None]
        equal[name] = sum(abs(round(m, 5) - p) <= 1e-5 + 1e-12 for m, p in pairs) / len(pairs)
    return {"split": split, "results": result["results"], "equal_rows": equal, "columns": columns}


def unieval_correlations() -> list[dict[str, Any]]:
    """UniEval's printed correlations beside the same statistics of its stored predictions
    (``unieval.<dimension>`` score columns), for every set that carries them."""
    out = []
    for name in bundled_sets():
        info = describe_set(name)
        printed = info.published.get("unieval_readme")
        if not printed or not any(c.startswith("unieval.") for c in info.score_columns):
            continue
        for level in printed["levels"]:
            dims = [d for d in level["figures"] if f"unieval.{d}" in info.score_columns]
            for dim in dims:
                result = meta_eval(name, score_columns=[f"unieval.{dim}"], human_columns=[dim],
                                   statistics=["pearson", "spearman", "kendall"], level=level["level"],
                                   group_by=level["group_by"], n_resamples=0, compare=False)
                for r in result["results"]:
                    out.append({"set": name, "level": level["as_printed"], "human": dim, "statistic": r["statistic"],
                                "published": level["figures"][dim][r["statistic"]], "ours": r["value"]})
    return out


def llmbar_judges() -> list[dict[str, Any]]:
    """Each stored LLMBar judge's statistics from its verdicts (``position_audit`` with
    ``missing="as_verdict"``, as LLMBar's statistics.json counts), beside the published ones."""
    out = []
    for name in bundled_sets():
        info = describe_set(name)
        if info.kind != "pairs":
            continue
        for split in info.splits or (None,):
            data = load_set(name, split=split)
            gold = [r["gold"] for r in data.rows]
            for judge in data.judges:
                first = [v[0] for v in judge.verdicts]
                second = [v[1] for v in judge.verdicts]
                audit = position_audit(first, second, gold, missing="as_verdict", n_resamples=0)
                published = judge.statistics[split] if split is not None else judge.statistics["all"]
                out.append({"set": name if split is None else f"{name}/{split}", "evaluator": judge.evaluator,
                            "protocol": judge.protocol, "pairs": len(first),
                            "accuracy_first": audit["accuracy_first"]["value"],
                            "accuracy_second": audit["accuracy_second"]["value"],
                            "positional_agreement": audit["positional_agreement"]["value"],
                            "published": published})
    return out


_LLMBAR_KEYS = (("correct_False", "accuracy_first"), ("correct_True", "accuracy_second"),
                ("equal", "positional_agreement"))


def _share(text: str) -> float:
    """``"95 / 100 = 95.0%"`` (statistics.json's form) as 0.95."""
    num, den = text.split("=")[0].split("/")
    return int(num) / int(den)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _f(v: Any, digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def main(argv: Sequence[str] | None = None) -> int:
    print("## G-Eval Table 1, ROUGE rows on SummEval (summary level)\n")
    rows = geval_table1(n_resamples=1000)
    print(_table(["row", "dimension", "statistic", "published", "ours", "95% interval", "difference"],
                 [[r["row"], r["human"], r["statistic"], _f(r["published"]), _f(r["ours"]),
                   f"[{_f(r['ci'][0])}, {_f(r['ci'][1])}]", f"{r['ours'] - r['published']:+.4f}"] for r in rows]))
    print("\n## FRANK: partial correlations with factuality, controlling for the system (all rows)\n")
    frank = frank_partial(n_resamples=1000)
    by = {(r["metric"], r["statistic"]): r for r in frank["results"]}
    names = list(dict.fromkeys(r["metric"] for r in frank["results"]))
    print(_table(["score", "partial Pearson", "95% interval", "partial Spearman", "rows"],
                 [[n, _f(by[n, "partial_pearson"]["value"]),
                   f"[{_f(by[n, 'partial_pearson']['ci'][0])}, {_f(by[n, 'partial_pearson']['ci'][1])}]",
                   _f(by[n, "partial_spearman"]["value"]), by[n, "partial_pearson"]["n"]] for n in names]))
    print("\nRows where this project's ROUGE equals the published column (5 decimals): " + ", ".join(
        f"{k} {v:.1%}" for k, v in frank["equal_rows"].items()))
    print("\n## UniEval's correlations from its stored predictions\n")
    uni = unieval_correlations()
    worst = max(abs(r["ours"] - r["published"]) for r in uni)
    print(f"{len(uni)} figures; the largest difference from the printed value: {format_number(worst)}")
    print("\n## LLMBar's stored judges (Natural; every stored run is held equal in the tests)\n")
    judges = llmbar_judges()
    print(_table(["judge", "protocol", "accuracy, first order", "accuracy, swapped", "positional agreement",
                  "statistics.json (first, swapped, agreement)"],
                 [[j["evaluator"], j["protocol"], _f(j["accuracy_first"]), _f(j["accuracy_second"]),
                   _f(j["positional_agreement"]), ", ".join(j["published"][k].split(" = ")[0]
                                                            for k in ("correct_False", "correct_True", "equal"))]
                  for j in judges if j["set"] == "llmbar_natural"]))
    exact = sum(all(abs(j[o] - _share(j["published"][k])) < 1e-12 for k, o in _LLMBAR_KEYS) for j in judges)
    print(f"\n{exact} of {len(judges)} stored runs (judge x protocol x set or part) give every published share.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
