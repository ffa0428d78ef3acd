"""What to meta-evaluate is one value, :class:`textgen_metrics.meta.Study`: ``meta_eval(study)``,
``meta_eval(source, study=study)`` and the keywords of before give the same result; the command
line builds the study from its flags, and the metric cards declare theirs with it."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT
from textgen_metrics import cli
from textgen_metrics.meta import Study
from textgen_metrics.meta import run as meta_run
from textgen_metrics.meta.run import MetaArgumentError, meta_eval

sys.path.insert(0, str(ROOT / "tools"))
import cards  # noqa: E402  (tools/cards.py)


def _file(tmp_path):
    path = tmp_path / "ratings.jsonl"
    words = "the cat sat on a mat while dog ran far".split()
    with open(path, "w", encoding="utf-8") as f:
        for i in range(8):
            ref = " ".join(words[i % 3:i % 3 + 6])
            for s in range(3):
                pred = " ".join(words[(i + s) % 4:(i + s) % 4 + 6])
                f.write(json.dumps({"item": f"d{i}", "system": f"s{s}", "prediction": pred, "references": [ref],
                                    "fluency": (i * 3 + s * 5) % 7, "coherence": (i + s * 2) % 5,
                                    "given": (i * 7 + s) % 11}) + "\n")
    return str(path)


def test_a_study_the_source_beside_it_and_the_keywords_give_the_same_result(tmp_path):
    path = _file(tmp_path)
    keywords = {"metrics": ["bleu", "rouge"], "options": {"bleu": {"max_order": 2}}, "score_columns": ["given"],
                "human_columns": ["fluency", "coherence"], "group_by": "item", "statistics": ["pearson", "kendall"],
                "exclude_systems": ["s2"]}
    study = Study(path, metrics={"bleu": {"max_order": 2}, "rouge": {}}, score_columns=["given"],
                  human_columns=["fluency", "coherence"], group_by="item", statistics=["pearson", "kendall"],
                  exclude_systems=["s2"])
    old = meta_eval(path, n_resamples=20, **keywords)
    assert old["excluded_systems"] == ["s2"] and {r["human"] for r in old["results"]} == {"fluency", "coherence"}
    assert json.dumps(meta_eval(study, n_resamples=20)) == json.dumps(old)
    template = Study(**{**study.__dict__, "source": None})
    assert json.dumps(meta_eval(path, study=template, n_resamples=20)) == json.dumps(old)


def test_metric_names_take_their_defaults():
    assert Study("summeval", metrics=["rouge", "bleu"]).metrics == {"rouge": {}, "bleu": {}}
    assert Study("summeval", metrics={"rouge": {"use_stemmer": True}}).metric_options() == {
        "rouge": {"use_stemmer": True}}


@pytest.mark.parametrize("call, error, message", [
    (lambda: meta_eval("summeval", metric=["bleu"]), TypeError, "unexpected keyword argument 'metric'"),
    (lambda: meta_eval(Study("summeval"), study=Study("summeval")), TypeError, "give the study once"),
    (lambda: meta_eval(study=Study("summeval"), level="system"), TypeError, "'level' is the study's"),
    (lambda: meta_eval(study=Study(metrics=["bleu"])), MetaArgumentError, "source: name a bundled set or a file"),
    (lambda: meta_eval("summeval", metrics=["bleu"], options={"rouge": {"use_stemmer": True}}), MetaArgumentError,
     "options: rouge: 'rouge' is not among metrics bleu"),
    (lambda: meta_eval("summeval", metrics=["bleu", "bleu"]), MetaArgumentError,
     "metrics: bleu, bleu names a metric twice"),
    (lambda: meta_eval("summeval", metrics={"bleu": {}}, options={"bleu": {}}), MetaArgumentError,
     "options: the metrics' options are in metrics"),
])
def test_a_study_given_twice_or_half_is_refused_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(")):
        call()


def test_the_command_line_builds_the_study_from_its_flags(tmp_path, monkeypatch, capsys):
    seen = {}

    def fake(study, **call):
        seen.update(study=study, **call)
        raise MetaArgumentError("metrics", "stop here")

    monkeypatch.setattr(meta_run, "meta_eval", fake)
    path = _file(tmp_path)
    status = cli.main(["meta-eval", path, "--metrics", "bleu", "--option", "bleu.max_order=2", "--human-column",
                       "fluency,coherence", "--statistic", "pearson", "--group-by", "item", "--exclude-system", "s2",
                       "--score-column", "given", "--seed", "3", "--n-resamples", "10"])
    assert status == 2 and "--metrics: stop here" in capsys.readouterr().err
    assert seen["study"] == Study(path, metrics={"bleu": {"max_order": 2}}, score_columns=["given"],
                                  human_columns=["fluency", "coherence"], group_by="item", statistics=["pearson"],
                                  exclude_systems=["s2"])
    assert (seen["seed"], seen["n_resamples"], list(seen["run"].metrics)) == (3, 10, ["bleu"])


def test_the_cards_declare_their_studies_with_the_library_s_study(monkeypatch):
    calls = []
    monkeypatch.setattr(cards, "meta_eval", lambda study, **call: calls.append((study, call)) or {})
    results = cards.compute(cards.STUDIES[:2])
    assert list(results) == [c.key for c in cards.STUDIES[:2]]
    assert [study for study, _ in calls] == [c.study for c in cards.STUDIES[:2]]
    assert all(isinstance(study, Study) and call == {"n_resamples": cards.N_RESAMPLES, "seed": cards.SEED}
               for study, call in calls)
