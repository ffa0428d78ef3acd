"""The bundled human-judgment sets (textgen_metrics.meta.data): every set loads with the columns,
counts and structure its card declares, each carries its licence and citation, and the LLMBar
judges' stored verdicts give back every figure of the authors' statistics.json.

Only the shipped files are read (never ../shared: a user's clone does not have it)."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import numpy as np
import pytest

from textgen_metrics.meta.data import HumanSet, bundled_sets, describe_set, load_set

# name: (rows, items, systems, splits with their rows) as the sources' READMEs and files give them
EXPECTED: dict[str, tuple[int, int, int, dict[str, int]]] = {
    "summeval": (1600, 100, 16, {}),
    "realsumm": (2400, 100, 24, {}),
    "qags_cnndm": (235, 235, 1, {}),
    "qags_xsum": (239, 239, 1, {}),
    "topical_chat": (360, 60, 6, {}),
    "sfhot": (875, 398, 1, {}),
    "sfres": (1181, 580, 1, {}),
    "frank": (2246, 499, 9, {"test": 1575, "validation": 671}),
    "wmt21_ted_ende": (7406, 529, 14, {}),
    "wmt21_ted_zhen": (7935, 529, 15, {}),
    "llmbar_natural": (100, 100, 1, {}),
    "llmbar_adversarial": (319, 319, 1, {"Neighbor": 134, "GPTInst": 92, "GPTOut": 47, "Manual": 46}),
    "mtbench_llmbar": (200, 200, 1, {}),
    "halueval_general": (4507, 4507, 1, {}),
}
SPEC_HUMAN = {"summeval": {"coherence", "consistency", "fluency", "relevance"}, "frank": {"factuality"},
              "wmt21_ted_ende": {"mqm"}, "wmt21_ted_zhen": {"mqm"}}
UNIEVAL_SETS = ("qags_cnndm", "qags_xsum", "topical_chat", "sfhot", "sfres")
LLMBAR_SETS = ("llmbar_natural", "llmbar_adversarial", "mtbench_llmbar")
ROW_KEYS = {"item", "system", "prediction", "references", "source", "human", "scores", "split"}


def test_every_spec_set_is_bundled() -> None:
    assert sorted(EXPECTED) == bundled_sets()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_set_loads_with_its_declared_shape(name: str) -> None:
    data = load_set(name)
    info = data.info
    rows, items, systems, splits = EXPECTED[name]
    assert info.name == name and info == describe_set(name)
    assert info.rows == len(data.rows) == rows
    assert info.items == len({r["item"] for r in data.rows}) == items
    assert info.systems == len({r["system"] for r in data.rows}) == systems
    assert set(info.splits) == set(splits)
    assert dict(Counter(r["split"] for r in data.rows if r["split"] is not None)) == splits
    assert set(info.default_human) <= set(info.human_columns)
    assert SPEC_HUMAN.get(name, set()) <= set(info.human_columns)
    assert info.kind in ("scores", "labels", "pairs")
    assert info.default_level in ("segment", "system") and info.default_group_by in ("none", "item", "system")
    for row in data.rows:
        assert set(row) == ROW_KEYS | set(info.extra_keys)
        assert set(row["human"]) == set(info.human_columns)
        assert set(row["scores"]) == set(info.score_columns)
        assert isinstance(row["prediction"], str) and row["prediction"]
        assert all(isinstance(ref, str) and ref for ref in row["references"])
        if info.references_per_item is not None:
            assert len(row["references"]) == info.references_per_item
        for value in row["scores"].values():
            assert value is None or (isinstance(value, float) and math.isfinite(value))
        if info.kind == "scores":
            assert all(isinstance(v, float) for v in row["human"].values())
    # one item, one source text (documents are stored once)
    sources: dict[str, Any] = {}
    for row in data.rows:
        assert sources.setdefault(row["item"], row["source"]) == row["source"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_card_has_licence_citation_and_source(name: str) -> None:
    info = describe_set(name)
    assert re.fullmatch(r"(MIT|Apache-2\.0)( AND (MIT|Apache-2\.0))?", info.licence)
    for spdx in info.licence.split(" AND "):
        marker = "MIT" if spdx == "MIT" else "Apache License"
        assert marker in info.licence_text
    assert info.citation.lstrip().startswith("@") and info.citation.count("{") == info.citation.count("}")
    assert re.search(r"\b[0-9a-f]{40}\b", info.source) or re.search(r"\b[0-9a-f]{7,}\b", info.source)
    assert info.title and len(info.description) > 100


def test_summeval_structure() -> None:
    data = load_set("summeval")
    by_item = Counter(r["item"] for r in data.rows)
    assert len(by_item) == 100 and set(by_item.values()) == {16}
    assert all(len(r["references"]) == 11 for r in data.rows)
    per_system = Counter(r["system"] for r in data.rows)
    assert set(per_system.values()) == {100}
    for r in data.rows:
        assert all(1.0 <= v <= 5.0 for v in r["human"].values())
    assert " . " in data.rows[0]["source"]  # tokenized, as published
    assert "split_summaries" in data.info.description
    geval = data.info.published["geval_table1_rouge"]
    assert geval["figures"]["ROUGE-2"]["coherence"] == {"spearman": 0.184, "kendall": 0.139}
    assert set(geval["figures"]) == {"ROUGE-1", "ROUGE-2", "ROUGE-L"}
    assert "Liu" in geval["citation"]


def test_frank_structure() -> None:
    data = load_set("frank")
    cols = data.info.score_columns
    for col in ("Rouge 1", "Rouge 2", "Rouge L", "Bleu", "Meteor", "BertScore P Art", "FactCC", "FEQA",
                "Dep Entail", "QAGS"):
        assert col in cols
    assert {r["dataset"] for r in data.rows} == {"cnndm", "bbc"}
    assert all(len(r["references"]) == 1 and 0.0 <= r["human"]["factuality"] <= 1.0 for r in data.rows)
    missing = sum(v is None for r in data.rows for v in r["scores"].values())
    assert 0 < missing < len(data.rows)  # a few published baselines are missing
    test, valid = load_set("frank", "test"), load_set("frank", "validation")
    assert len(test.rows) + len(valid.rows) == 2246
    assert not {r["item"] for r in test.rows} & {r["item"] for r in valid.rows}


@pytest.mark.parametrize("name", UNIEVAL_SETS)
def test_unieval_sets_carry_predictions_and_readme_figures(name: str) -> None:
    data = load_set(name)
    assert "unieval" in data.info.score_columns
    default = data.info.default_human[0]
    for r in data.rows:
        assert isinstance(r["scores"]["unieval"], float)
        assert r["scores"]["unieval"] == r["scores"][f"unieval.{default}"]
    levels = data.info.published["unieval_readme"]["levels"]
    assert levels
    for level in levels:
        for dim, figures in level["figures"].items():
            assert dim in data.info.human_columns
            assert set(figures) == {"pearson", "spearman", "kendall"}
            assert all(-1.0 <= v <= 1.0 for v in figures.values())


def test_unieval_readme_figures_as_printed() -> None:
    qags = describe_set("qags_cnndm").published["unieval_readme"]["levels"]
    assert qags[0]["figures"]["consistency"] == {"pearson": 0.681681, "spearman": 0.662255, "kendall": 0.531636}
    summeval = describe_set("summeval").published["unieval_readme"]["levels"]
    assert [lv["group_by"] for lv in summeval] == ["none", "item", "none"]
    assert summeval[2]["level"] == "system" and summeval[2]["figures"]["consistency"]["kendall"] == 0.75


def test_topical_chat_context_and_systems() -> None:
    data = load_set("topical_chat")
    assert "context" in data.info.extra_keys
    assert all(r["context"] and r["references"] == [] for r in data.rows)
    assert Counter(r["system"] for r in data.rows)["Original Ground Truth"] == 60


@pytest.mark.parametrize("name", ["wmt21_ted_ende", "wmt21_ted_zhen"])
def test_mqm_sign_and_texts(name: str) -> None:
    data = load_set(name)
    scores = [r["human"]["mqm"] for r in data.rows]
    assert max(scores) <= 0.0 and min(scores) < -1.0  # negative MQM: higher is better
    assert not any("<v>" in r["prediction"] or "<v>" in r["source"] for r in data.rows)
    assert all(r["references"] for r in data.rows)
    figures = data.info.published["readme_system_mqm"]["figures"]
    assert len(figures) == data.info.systems and [f["rank"] for f in figures] == list(range(1, len(figures) + 1))


def test_halueval_labels() -> None:
    data = load_set("halueval_general")
    assert data.info.kind == "labels"
    assert Counter(r["human"]["hallucination"] for r in data.rows) == {"no": 3692, "yes": 815}
    assert all(isinstance(r["hallucination_spans"], list) for r in data.rows)
    assert all(r["query"] == r["source"] for r in data.rows)


# -- LLMBar: the stored verdicts give back statistics.json ------------------------------------------
def _kappa(y1: list[int], y2: list[int]) -> float:
    """Cohen's kappa exactly as scikit-learn's cohen_kappa_score(y1, y2) computes it."""
    labels = sorted(set(y1) | set(y2))
    index = {label: i for i, label in enumerate(labels)}
    n = len(labels)
    confusion = np.zeros((n, n), dtype=np.int64)
    for a, b in zip(y1, y2, strict=True):
        confusion[index[a], index[b]] += 1
    sum0, sum1 = confusion.sum(axis=0), confusion.sum(axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    weights = np.ones([n, n], dtype=int)
    weights.flat[:: n + 1] = 0
    return float(1 - np.sum(weights * confusion) / np.sum(weights * expected))


def _statistics(gold: list[str], verdicts: list[tuple[str | None, str | None]]) -> dict[str, Any]:
    """statistics.json from the verdicts, as LLMBar's LLMEvaluator/evaluate.py writes it: accuracy
    per order, both right, the orders equal (no verdict = its own verdict), and its kappas over a
    1/0 coding (1: output_1 chosen; output_2 or no verdict: 0) against the gold label 1/2."""
    n = len(gold)
    first = sum(v[0] == g for v, g in zip(verdicts, gold, strict=True))
    second = sum(v[1] == g for v, g in zip(verdicts, gold, strict=True))
    both = sum(v[0] == g and v[1] == g for v, g in zip(verdicts, gold, strict=True))
    equal = sum(v[0] == v[1] for v in verdicts)
    coded = [(int(v[0] == "a"), int(v[1] == "a")) for v in verdicts]
    gold_label = [{"a": 1, "b": 2}[g] for g in gold]
    out: dict[str, Any] = {
        "correct_False": f"{first} / {n} = {first / n * 100}%",
        "correct_True": f"{second} / {n} = {second / n * 100}%",
        "correct_average": f"{(first + second) / 2 / n * 100}%",
        "correct_both": f"{both} / {n} = {both / n * 100}%",
        "equal": f"{equal} / {n} = {equal / n * 100}%",
        "kappa_False": _kappa([c[0] for c in coded], gold_label),
        "kappa_True": _kappa([c[1] for c in coded], gold_label),
        "kappa_agreement": _kappa([c[0] for c in coded], [c[1] for c in coded]),
    }
    out["kappa_average"] = (out["kappa_False"] + out["kappa_True"]) / 2
    return out


def _runs(data: HumanSet) -> list[tuple[str, str, str, dict[str, Any], dict[str, Any]]]:
    out = []
    for judge in data.judges:
        for part, published in judge.statistics.items():
            keep = [i for i, r in enumerate(data.rows) if (r["split"] or "all") == part]
            mine = _statistics([data.rows[i]["gold"] for i in keep], [judge.verdicts[i] for i in keep])
            out.append((judge.evaluator, judge.protocol, part, mine, published))
    return out


@pytest.mark.parametrize("name", LLMBAR_SETS)
def test_llmbar_verdicts_reproduce_statistics_json(name: str) -> None:
    data = load_set(name)
    assert data.judges and all(len(j.verdicts) == len(data.rows) for j in data.judges)
    evaluators = {j.evaluator for j in data.judges}
    assert {"GPT-4", "ChatGPT", "LLaMA2", "PaLM2"} <= evaluators
    runs = _runs(data)
    assert len(runs) == len(data.judges) * max(1, len(data.info.splits))
    for evaluator, protocol, part, mine, published in runs:
        assert mine == published, (evaluator, protocol, part)
    figures = data.info.published["statistics_json"]["figures"]
    assert figures == {f"{j.evaluator}/{j.protocol}": j.statistics for j in data.judges}


def test_llmbar_kappa_matches_sklearn() -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    data = load_set("llmbar_natural")
    judge = data.judges[0]
    coded = [int(v[0] == "a") for v in judge.verdicts]
    gold = [{"a": 1, "b": 2}[r["gold"]] for r in data.rows]
    assert _kappa(coded, gold) == sklearn_metrics.cohen_kappa_score(coded, gold)


def test_llmbar_pairs_and_split_filter() -> None:
    data = load_set("llmbar_adversarial", split="Manual")
    assert len(data.rows) == 46 and all(len(j.verdicts) == 46 for j in data.judges)
    assert all(set(j.statistics) == {"Manual"} for j in data.judges)
    for r in data.rows:
        assert r["query"] == r["source"] and r["baseline"] and r["gold"] == r["human"]["preference"]
        assert r["gold"] in ("a", "b")
    for evaluator, protocol, part, mine, published in _runs(data):
        assert mine == published, (evaluator, protocol, part)


def test_unknown_name_and_split() -> None:
    with pytest.raises(ValueError, match="summeval"):
        load_set("summ-eval")
    with pytest.raises(ValueError, match="frank"):
        describe_set("nope")
    with pytest.raises(ValueError, match="test, validation"):
        load_set("frank", split="train")
    with pytest.raises(ValueError, match="no splits"):
        load_set("summeval", split="test")


def test_rows_are_fresh_on_each_load() -> None:
    """A caller's edit of the rows never reaches the next load (the load speed is benchmarks', not a test's)."""
    a = load_set("summeval")
    a.rows[0]["human"]["coherence"] = -1.0
    a.rows[0]["references"].append("x")
    b = load_set("summeval")
    assert b.rows[0]["human"]["coherence"] != -1.0 and len(b.rows[0]["references"]) == 11


# -- published figures recomputed from the shipped rows -------------------------------------------
@pytest.mark.parametrize("name", UNIEVAL_SETS)
def test_unieval_predictions_give_the_readme_correlations(name: str) -> None:
    stats = pytest.importorskip("scipy.stats")
    data = load_set(name)
    for level in data.info.published["unieval_readme"]["levels"]:
        assert (level["level"], level["group_by"]) == ("segment", "none")  # these sets print pooled rows
        for dim, figures in level["figures"].items():
            human = [r["human"][dim] for r in data.rows]
            predicted = [r["scores"][f"unieval.{dim}"] for r in data.rows]
            got = {"pearson": stats.pearsonr(human, predicted)[0], "spearman": stats.spearmanr(human, predicted)[0],
                   "kendall": stats.kendalltau(human, predicted)[0]}
            for statistic, printed in figures.items():  # printed to 6 decimals (trailing zeros dropped)
                assert abs(got[statistic] - printed) <= 5e-7 + 1e-12, (dim, statistic, got[statistic], printed)


@pytest.mark.parametrize("name", ["wmt21_ted_ende", "wmt21_ted_zhen"])
def test_mqm_system_means_give_the_readme_table(name: str) -> None:
    """The README's TED table is each system's mean error score (-mqm) over the rated segments: the
    same ranks, and the same values to the printed rounding except two entries that are 0.009 (ende
    eTranslation: 1.9688 printed 1.96) and 0.0053 (zhen Borderline: 2.4053 printed 2.40) off."""
    data = load_set(name)
    by_system: dict[str, list[float]] = {}
    for r in data.rows:
        by_system.setdefault(r["system"], []).append(-r["human"]["mqm"])
    means = {system: sum(v) / len(v) for system, v in by_system.items()}
    figures = data.info.published["readme_system_mqm"]["figures"]
    names = [entry["system"].replace("ref.", "ref-") for entry in figures]  # README ref.A, files ref-A
    assert sorted(names) == sorted(means)
    assert names == sorted(means, key=means.__getitem__)  # the published ranks
    off = set()
    for system, entry in zip(names, figures, strict=True):
        assert abs(means[system] - entry["mqm"]) < 0.01, (system, means[system], entry["mqm"])
        if abs(means[system] - entry["mqm"]) > 0.005 + 1e-9:
            off.add(system)
    assert off == {"wmt21_ted_ende": {"eTranslation"}, "wmt21_ted_zhen": {"Borderline"}}[name]
