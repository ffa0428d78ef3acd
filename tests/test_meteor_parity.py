"""METEOR parity with nltk's meteor_score (same WordNet 3.0, same tokens) over generated inputs."""

import pytest
from nltk.translate.meteor_score import meteor_score

import textgen_metrics
from corpus import multi_references, pairs
from textgen_metrics.lexical.meteor import MeteorScorer, word_tokenize
from textgen_metrics.wordnet import load_wordnet

SYNONYM_PAIRS = [
    ("the dog ran quickly", ["a hound sprinted fast"]),
    ("he bought a car", ["he purchased an automobile"]),
    ("she drove a car", ["she drove an auto"]),
    ("the film was good", ["the movie was great", "a picture that was fine"]),
    ("It is a guide to action which ensures that the military always obeys the commands of the party",
     ["It is a guide to action that ensures that the military will forever heed Party commands"]),
]


def nltk_scores(preds, refs, **kw):
    wn = load_wordnet()
    return [meteor_score([word_tokenize(r) for r in rs], word_tokenize(p), wordnet=wn, **kw)
            for p, rs in zip(preds, refs, strict=True)]


@pytest.mark.parametrize("params", [{}, {"alpha": 0.5, "beta": 2.0, "gamma": 0.3},
                                    {"alpha": 1.0, "beta": 0.5, "gamma": 1.0}])
def test_meteor_equals_nltk(params):
    data = multi_references(250, seed=31) + [(p, r) for p, r in SYNONYM_PAIRS]
    data += [(p, [r]) for p, r in pairs(100, seed=32)]
    preds = [p for p, _ in data]
    refs = [r for _, r in data]
    got = textgen_metrics.meteor(preds, refs, use_aggregator=False, **params)["meteor"]
    want = nltk_scores(preds, refs, **params)
    assert got == want


def test_synonym_stage_is_exercised():
    scorer = MeteorScorer()
    # nltk looks up synonyms of the stemmed words: car~auto survive stemming unchanged
    matches = scorer.align(word_tokenize("she drove a car"), word_tokenize("she drove an auto"))
    assert matches == [(0, 0), (1, 1), (3, 3)]


def test_aggregate_is_mean_and_edge_cases():
    out = textgen_metrics.meteor(["", "a", "the cat sat"], ["the cat", "", ["the cat sat", "x"]], use_aggregator=False)
    assert out["meteor"][:2] == [0.0, 0.0] and out["meteor"][2] > 0.9
    agg = textgen_metrics.meteor(["", "a", "the cat sat"], ["the cat", "", ["the cat sat", "x"]])
    assert agg["meteor"] == sum(out["meteor"]) / 3


def test_missing_wordnet_is_a_clear_error(monkeypatch, tmp_path):
    from textgen_metrics import wordnet

    monkeypatch.setenv("TEXTGEN_METRICS_WORDNET", str(tmp_path))
    with pytest.raises(wordnet.WordNetMissingError, match="apt-get install wordnet-base wordnet-sense-index"):
        wordnet.wordnet_dir()
