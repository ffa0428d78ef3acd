"""The Metric spine: statistics that merge exactly, travel as JSON, and score as the whole corpus
does, for every lexical and semantic metric, on generated corpora; options that are the one
source of the functions' arguments; bugs that raise."""

import dataclasses
import json
import random

import pytest

import textgen_metrics
from corpus import multi_references
from mt_corpus import mt_corpus
from textgen_metrics import registry
from textgen_metrics.metric import MeanMetric, Options, Stats, metric_classes, option

# every metric of the library's own modules (found by the registry: a new one is tested here with
# its default options), and the options that change the statistics most
OWN = [name for name, m in registry.METRICS.items() if not m.judge and not m.scores_together]
CASES = [(name, {}) for name in OWN] + [
    ("rouge", {"rouge_types": ["rouge1", "rouge2", "rougeL", "rougeLsum", "rougeW", "rougeSU4"],
               "use_stemmer": True, "return_precision_recall": True}),
    ("rouge", {"tokenizer": "unicode", "split_summaries": True}),
    ("bleu", {"smooth": True, "weights": [0.4, 0.3, 0.2, 0.1]}),
    ("bleu", {"tokenizer": "zh", "smooth_method": "exp", "effective_order": True}),
    ("google_bleu", {"min_len": 2, "max_len": 3}),
    ("meteor", {"alpha": 0.8}),
    ("chrf", {"word_order": 2}),
    ("ter", {"no_punct": True, "asian_support": True}),
]


def corpus(n, seed):
    """Random Unicode, CJK, empty texts and several references, then English prose."""
    preds, refs = mt_corpus(n, seed=seed, max_refs=3)
    more = multi_references(n, seed=seed)
    return preds + [p for p, _ in more], refs + [r for _, r in more]


def test_the_library_metrics_are_all_here():
    assert {"rouge", "bleu", "google_bleu", "meteor", "chrf", "ter"} <= set(OWN)
    assert registry.METRICS["bertscore"].scores_together  # its own test below


@pytest.mark.parametrize("name, options", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_statistics_of_parts_merged_are_those_of_the_whole_to_the_bit(name, options):
    preds, refs = corpus(60, seed=len(name) + len(options))
    metric = registry.get_metric(name)(**options)
    whole = metric.statistics({"predictions": preds, "references": refs})
    rng = random.Random(7)
    cuts = sorted(rng.sample(range(1, len(preds)), 4))
    bounds = list(zip([0, *cuts], [*cuts, len(preds)], strict=True))
    parts = [metric.statistics({"predictions": preds[a:b], "references": refs[a:b]}) for a, b in bounds]
    merged = parts[0]
    for part in parts[1:]:
        merged = merged + part
    assert merged == whole  # every int, every float's bits, in row order
    # placed parts merge in row order whatever order they come in (partitions of a cluster)
    placed = [p.placed(a) for p, (a, _) in zip(parts, bounds, strict=True)]
    rng.shuffle(placed)
    assert sum(placed) == whole.placed(0)
    for use_aggregator in (True, False):
        want = metric.score(whole).as_dict(use_aggregator)
        assert metric.score(merged).as_dict(use_aggregator) == want
        assert metric.score(sum(placed)).as_dict(use_aggregator) == want
    # and the score is the library function's
    function = getattr(textgen_metrics, name)
    assert metric.score(merged).as_dict() == function(preds, refs, **options)


@pytest.mark.parametrize("name, options", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_statistics_travel_as_json_with_every_bit(name, options):
    preds, refs = corpus(40, seed=3)
    metric = registry.get_metric(name)(**options, confidence_level=0.9, n_resamples=200)
    stats = metric.statistics({"predictions": preds, "references": refs}).placed(40)
    text = json.dumps(stats.to_dict())
    back = Stats.from_dict(json.loads(text))
    assert back == stats and back.rows == ((40, 40 + len(preds)),)
    for column, values in stats.columns.items():  # ints stay ints, floats keep their bits
        assert [type(v) for v in back.columns[column]] == [type(v) for v in values]
        floats = [v for v in values if isinstance(v, float)]
        assert [v.hex() for v in floats] == [v.hex() for v in back.columns[column] if isinstance(v, float)]
    assert metric.score(back).as_dict() == metric.score(stats).as_dict()


def test_bertscore_statistics_are_its_inputs_and_merge_to_the_one_call_result():
    preds, refs = corpus(6, seed=5)
    metric = registry.get_metric("bertscore")(confidence_level=0.9, n_resamples=100)
    parts = [metric.statistics({"predictions": preds[a:b], "references": refs[a:b]}) for a, b in ((0, 5), (5, 12))]
    merged = parts[0] + parts[1]
    assert merged.columns["predictions"] == preds and merged.columns["references"] == refs
    for use_aggregator in (False, True):
        assert metric.score(merged).as_dict(use_aggregator) == textgen_metrics.bertscore(
            preds, refs, confidence_level=0.9, n_resamples=100, use_aggregator=use_aggregator)


def test_merging_checks_metric_settings_placement_and_overlap():
    preds, refs = corpus(10, seed=1)
    inputs = {"predictions": preds, "references": refs}
    bleu = registry.get_metric("bleu")
    a = bleu().statistics(inputs)
    with pytest.raises(ValueError, match="do not merge"):
        a + bleu(tokenizer="intl").statistics(inputs)
    with pytest.raises(ValueError, match="do not merge"):
        a + registry.get_metric("google_bleu")().statistics(inputs)
    with pytest.raises(ValueError, match="place every part"):
        a.placed(0) + a
    with pytest.raises(ValueError, match="overlap at row 5"):
        a.placed(0) + a.placed(5)
    # smoothing is applied to the summed statistics: its statistics merge with the plain ones'
    assert (a + bleu(smooth=True).statistics(inputs)).count == 2 * len(preds)
    with pytest.raises(ValueError, match="cannot be scored by"):
        bleu(max_order=2).score(a)
    with pytest.raises(ValueError, match="predictions: no examples"):
        bleu().score(bleu().statistics({"predictions": [], "references": []}))


def test_an_empty_part_merges_as_nothing():
    preds, refs = corpus(8, seed=2)
    rouge = registry.get_metric("rouge")()
    empty = rouge.statistics({"predictions": [], "references": []})
    full = rouge.statistics({"predictions": preds, "references": refs})
    assert empty.count == 0 and empty + full == full and full + empty == full
    assert empty.placed(3) + full.placed(0) == full.placed(0)


def test_the_options_dataclass_is_the_function_s_arguments_and_checks_them():
    rouge = registry.get_metric("rouge")
    assert rouge.option_kinds()["rouge_types"] == "list" and "use_aggregator" not in rouge.option_kinds()
    with pytest.raises(ValueError, match="rouge has no option 'stem'"):
        rouge.check_options({"stem": True})
    with pytest.raises(ValueError, match="unknown rouge type 'rouge0'"):
        rouge(rouge_types=["rouge0"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'stem'"):
        textgen_metrics.rouge(["a"], ["a"], stem=True)
    with pytest.raises(TypeError, match="missing a required argument: 'references'"):
        textgen_metrics.rouge(["a"])
    assert textgen_metrics.rouge.__doc__.startswith("ROUGE of ``predictions``")
    assert "use_stemmer: Porter stemming" in textgen_metrics.rouge.__doc__


@pytest.fixture
def buggy_metric():
    @dataclasses.dataclass(frozen=True)
    class BuggyOptions(Options):
        use_aggregator: bool = option(True, front_end=True)

    class Buggy(MeanMetric):
        """A metric with a bug in it."""

        name = "buggy"
        Options = BuggyOptions

        def example_statistics(self, inputs):
            return {"buggy": [1 / (len(p) - len(p)) for p in inputs["predictions"]]}

    yield Buggy
    metric_classes().pop("buggy", None)
    vars(textgen_metrics).pop("buggy", None)


def test_a_bug_in_a_metric_raises_with_its_traceback_through_every_front_end(buggy_metric):
    from textgen_metrics.scoring import score_records
    from textgen_metrics.streaming import MetricStream

    rows = [{"prediction": "a", "reference": "a"}]
    for run in (lambda: textgen_metrics.buggy(["a"], ["a"]),
                lambda: score_records(rows, ["buggy"]),
                lambda: MetricStream(buggy_metric).add({"predictions": ["a"], "references": ["a"]})):
        with pytest.raises(ZeroDivisionError) as info:
            run()
        # raised where the bug is, not re-raised (nor turned into a missing score) on the way
        assert info.traceback[-1].path.name == "test_metric_spine.py"


def test_the_chunked_resamples_are_sacrebleus_draws(monkeypatch):
    import numpy as np

    from textgen_metrics import significance

    monkeypatch.setattr(significance, "_CHUNK_CELLS", 37)  # a few rows per chunk
    for n, resamples in ((1, 5), (7, 100), (50, 33)):
        chunks = np.concatenate(list(significance._index_chunks(n, resamples, 12345)))
        assert np.array_equal(chunks, np.random.default_rng(12345).choice(n, size=(resamples, n), replace=True))


def test_there_is_one_bootstrap():
    from textgen_metrics.aggregation import bootstrap_interval
    from textgen_metrics.significance import mean_interval, percentile_interval

    values = [random.Random(4).random() for _ in range(300)]
    assert bootstrap_interval(values, 500, 0.9, 3) == percentile_interval(values, 0.9, 500, 3) \
        == mean_interval(values, 0.9, 500, 3)
    per = textgen_metrics.rouge(*corpus(30, seed=8), use_aggregator=False)["rouge1"]
    legacy = textgen_metrics.rouge(*corpus(30, seed=8), bootstrap_samples=400, seed=5)
    assert [legacy["rouge1_low"], legacy["rouge1_high"]] == list(mean_interval(per, 0.95, 400, 5))


def test_errors_carry_their_place_and_the_front_ends_read_the_class():
    from textgen_metrics.errors import InputError, InputTypeError, OptionError, OptionTypeError
    from textgen_metrics.spaces import _user_message

    with pytest.raises(InputTypeError) as raised:
        textgen_metrics.bleu(["a", "b"], ["a", ["b", 3]])
    e = raised.value
    assert (e.argument, e.index, e.item) == ("references", 1, 1) and isinstance(e, TypeError)
    assert str(e) == "references[1][1]: expected str, got int"
    assert _user_message(e, ["predictions", "references"]) == "Row 2, references (text 2): expected str, got int"
    with pytest.raises(OptionTypeError) as raised:
        textgen_metrics.rouge(["a"], ["a"], use_stemmer="yes")
    assert _user_message(raised.value, ["predictions"]).startswith("Options: use_stemmer: expected True or False")
    with pytest.raises(OptionError):  # a check's plain ValueError is its option's error
        textgen_metrics.rouge(["a"], ["a"], num_threads=-1)
    with pytest.raises(InputError) as raised:
        textgen_metrics.meteor([], [])
    assert _user_message(raised.value, ["predictions"]) == ("Inputs: predictions: no examples; give at least one "
                                                            "prediction")
    assert _user_message(KeyError("x"), ["predictions"]).startswith("Something went wrong while scoring (KeyError)")


def test_the_command_line_parses_options_with_the_spine_s_one_parser_and_reports_bugs_as_bugs(
        buggy_metric, tmp_path, capsys):
    from textgen_metrics import cli
    from textgen_metrics.metric import parse_option_text

    assert registry.get_metric("rouge").parse_option("rouge_types", "rouge1,rougeL") == ["rouge1", "rougeL"]
    assert parse_option_text("floats", "[0.5, 1]", "w") == [0.5, 1.0]
    data = tmp_path / "d.jsonl"
    data.write_text('{"prediction": "a", "reference": "a"}\n')
    assert cli.main(["score", str(data), "--metrics", "buggy"]) == cli.EXIT_UNSCORED  # not a usage error
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError" in err and "internal error" in err
    assert cli.main(["score", str(data), "--option", "rouge.use_stemmer=maybe"]) == cli.EXIT_USAGE
    assert "Traceback" not in capsys.readouterr().err
