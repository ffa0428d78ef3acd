"""The Metric spine: statistics that merge exactly, travel as JSON, and score as the whole corpus
does, for every metric (the lexical and semantic ones on generated corpora, the LLM-guided ones
on a judge over HTTP that answers by each request's schema); options that are the one source of
the functions' arguments; bugs that raise."""

import dataclasses
import json
import math
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
    from textgen_metrics.run import Run
    from textgen_metrics.scoring import score_records

    rows = [{"prediction": "a", "reference": "a"}]
    for run in (lambda: textgen_metrics.buggy(["a"], ["a"]),
                lambda: score_records(rows, ["buggy"]),
                lambda: Run.build(["buggy"]).statistics({"predictions": ["a"], "references": ["a"]})):
        with pytest.raises(ZeroDivisionError) as info:
            run()
        # raised where the bug is, not re-raised (nor turned into a missing score) on the way
        assert info.traceback[-1].path.name == "test_metric_spine.py"


def test_a_metric_under_a_name_already_taken_is_an_error_unless_it_replaces_on_purpose():
    bleu = registry.METRICS["bleu"]
    with pytest.raises(ValueError, match=r"metric name 'bleu': .*\.Mine takes the name of "
                                         r"textgen_metrics\.lexical\.bleu\.Bleu; .*class Mine\(\.\.\., replace=True\)"):
        class Mine(MeanMetric):
            name = "bleu"
    assert registry.METRICS["bleu"] is bleu and textgen_metrics.bleu(["a b c d"], ["a b c d"])["bleu"] > 0.99
    try:
        class MyBleu(bleu, replace=True):
            name = "bleu"

        assert registry.METRICS["bleu"] is MyBleu

    finally:
        metric_classes()["bleu"] = bleu
    try:
        for _ in range(2):  # the same class defined again (a notebook cell run twice, a module reloaded)
            class Again(MeanMetric):
                name = "again_trial"

            assert registry.METRICS["again_trial"] is Again
    finally:
        metric_classes().pop("again_trial", None)
    with pytest.raises(TypeError, match="replace=True"):
        class Nameless(MeanMetric, replace=True):
            pass


def test_a_user_s_metric_defined_before_the_package_s_under_its_name_is_reported_when_they_meet(monkeypatch):
    from textgen_metrics import metric

    chrf = registry.METRICS["chrf"]
    classes = {n: c for n, c in metric_classes().items() if n != "chrf"}
    monkeypatch.setattr(metric, "_CLASSES", classes)  # as if the package's chrF were not defined yet

    class Early(MeanMetric):
        name = "chrf"

    # the package's class, defined now
    with pytest.raises(ValueError, match=r"metric name 'chrf': .*\.Early takes the name of .*\.Chrf"):
        metric._register(chrf, replace=False)
    monkeypatch.setattr(metric, "_REPLACED", {"chrf"})
    metric._register(chrf, replace=False)  # a user's replace=True stays in place
    assert metric_classes()["chrf"] is Early


def test_the_chunked_resamples_are_sacrebleus_draws(monkeypatch):
    import numpy as np

    from textgen_metrics import significance

    monkeypatch.setattr(significance, "_CHUNK_CELLS", 37)  # a few rows per chunk
    for n, resamples in ((1, 5), (7, 100), (50, 33)):
        chunks = np.concatenate(list(significance._index_chunks(n, resamples, 12345)))
        assert np.array_equal(chunks, np.random.default_rng(12345).choice(n, size=(resamples, n), replace=True))


def test_there_is_one_bootstrap():
    from textgen_metrics.aggregation import bootstrap_interval
    from textgen_metrics.significance import CorpusStatistics, bootstrap_ci, corpus_interval, percentile_interval

    values = [random.Random(4).random() for _ in range(300)]
    assert bootstrap_interval(values, 500, 0.9, 3) == percentile_interval(values, 0.9, 500, 3) \
        == corpus_interval(CorpusStatistics.of_means(values), 0.9, 500, 3) == bootstrap_ci(values, 0.9, 500, 3)[:2]
    per = textgen_metrics.rouge(*corpus(30, seed=8), use_aggregator=False)["rouge1"]
    legacy = textgen_metrics.rouge(*corpus(30, seed=8), bootstrap_samples=400, seed=5)
    assert [legacy["rouge1_low"], legacy["rouge1_high"]] == list(percentile_interval(per, 0.95, 400, 5))


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


# -- the LLM-guided metrics: statistics that a judge gives ----------------------------------------
JUDGED = [name for name, m in registry.METRICS.items() if m.judge]
JUDGED_OPTIONS = {"g_eval": {"criteria": "Clarity: the text is easy to read."}}


def judge_answer(body, task):
    """An answer that fits the request's schema (chat_server's schema_answer), and for a score
    request the score token's log-probabilities, which vary with the request (so the G-Eval
    weighted scores are floats of many bits)."""
    from chat_server import schema_answer

    text = schema_answer(body)
    if not task.endswith("/score"):
        return text
    p = 0.05 + (len(body["messages"][1]["content"]) % 17) / 20
    top = [{"token": "4", "logprob": math.log(1 - p)}, {"token": "3", "logprob": math.log(p)}]
    tokens = ['{"', "reason", '":', ' "', "a reason", '",', ' "', "score", '":', " "]
    return {"content": text, "logprobs": [{"token": t, "logprob": 0.0} for t in tokens]
            + [{"token": "4", "logprob": math.log(1 - p), "top_logprobs": top}, {"token": "}", "logprob": 0.0}]}


def judged_inputs(name, n):
    """``n`` examples of the metric's columns, each text its own (no request is the same for two
    examples, so none is shared by the in-flight de-duplication, whose count would depend on how
    the corpus is cut), with the empty cases among them (no sentences, no contexts)."""
    spec = registry.get_metric(name)
    sentences = ["The tower is tall", "It opened in 1889", "Paris is in France", "Cheese is good"]
    blanks = iter(range(1, 1000))

    def blank():  # a text without sentences, each of them another (a number in spaces and tabs)
        return format(next(blanks), "b").replace("0", " ").replace("1", "\t")

    def text(i, what):
        return ". ".join(f"{s} ({what} {i})" for s in sentences[: i % 4]) + "." if i % 4 else blank()

    columns = {"predictions": [text(i, "prediction") if i % 5 else blank() for i in range(n)],
               "references": [text(i + 1, "reference") if i % 3 else [text(i + 2, "reference a"),
                                                                       text(i + 3, "reference b")]
                              for i in range(n)],
               "queries": [f"What about example {i}?" for i in range(n)],
               "contexts": [[f"Context {k} of example {i}." for k in range(i % 3 + (name == "hallucination"))]
                            for i in range(n)],
               "sources": [f"The source text of example {i}. It is short." for i in range(n)],
               "baselines": [text(i + 2, "baseline") if i % 4 else text(i, "prediction") for i in range(n)]}
    kinds = {**spec.columns, **spec.optional_columns}
    if kinds.get("references") == "text":  # one reference each (G-Eval's, pairwise preference's)
        columns["references"] = [r if isinstance(r, str) else r[0] for r in columns["references"]]
    return {c: columns[c] for c in kinds}


@pytest.fixture(scope="module")
def judge_server():
    from chat_server import ChatServer

    with ChatServer(judge_answer) as srv:
        yield srv


def http_judge(srv):
    return textgen_metrics.OpenAIJudge("judge-m", base_url=srv.url, api_key="k", concurrency=4,
                                       prices={"judge-m": (1.5, 6.0)})


@pytest.mark.parametrize("name", JUDGED)
def test_llm_statistics_of_parts_merged_are_those_of_the_whole(name, judge_server):
    """Per-example scores, details (verdicts and reasons), errors, the judge's usage (requests and
    tokens the server counted) and model: the statistics of parts, judged apart, merged, are the
    statistics of the whole corpus judged at once; so is the score."""
    inputs = judged_inputs(name, 13)
    options = dict(JUDGED_OPTIONS.get(name, {}), return_details=True, confidence_level=0.9, n_resamples=200)
    spec = registry.get_metric(name)
    whole = spec(judge=http_judge(judge_server), **options).statistics(inputs)
    metric = spec(judge=http_judge(judge_server), **options)  # one judge for the parts (G-Eval's steps once)
    bounds = [(0, 4), (4, 5), (5, 11), (11, 13)]
    parts = [metric.statistics({c: v[a:b] for c, v in inputs.items()}) for a, b in bounds]
    assert whole.count == 13 and whole.totals["requests"] > 0 and whole.totals["prompt_tokens"] > 0
    assert whole.columns["error"] == [None] * 13
    merged = parts[0]
    for part in parts[1:]:
        merged = merged + part
    assert merged == whole  # scores, details, errors, usage, the judge's model: every value
    placed = [p.placed(a) for p, (a, _) in zip(parts, bounds, strict=True)]
    random.Random(3).shuffle(placed)
    assert sum(placed) == whole.placed(0)
    for use_aggregator in (True, False):
        want = metric.score(whole).as_dict(use_aggregator)
        assert metric.score(merged).as_dict(use_aggregator) == want
    got = metric.score(merged).as_dict()
    assert got["judge_usage"]["requests"] == whole.totals["requests"] and got["judge_usage"]["cost"] > 0
    assert got["signature"].startswith(f"{name}|") and "|judge:openai:judge-m|mode:json_schema|" in got["signature"]
    assert "|bs:200|seed:12345|ci:0.9|" in got["signature"] and f"{spec.score_key}_ci" in got
    # and the score is the library function's, on a judge of its own
    function = getattr(textgen_metrics, name)
    assert got == function(**inputs, judge=http_judge(judge_server), **options)


@pytest.mark.parametrize("name", JUDGED)
def test_llm_statistics_travel_as_json_with_every_bit(name, judge_server):
    inputs = judged_inputs(name, 7)
    metric = registry.get_metric(name)(judge=http_judge(judge_server), **JUDGED_OPTIONS.get(name, {}),
                                       return_details=True)
    stats = metric.statistics(inputs).placed(20)
    back = Stats.from_dict(json.loads(json.dumps(stats.to_dict())))
    assert back == stats and back.rows == ((20, 27),)
    key = metric.score_key
    assert [None if v is None else v.hex() for v in back.columns[key]] == \
        [None if v is None else v.hex() for v in stats.columns[key]]
    # scored where no judge is (a driver merging its workers' statistics): the same result
    scorer = registry.get_metric(name)(**JUDGED_OPTIONS.get(name, {}), return_details=True)
    assert scorer.score(back).as_dict(False) == metric.score(stats).as_dict(False)


def test_llm_statistics_of_different_judges_or_settings_do_not_merge(judge_server):
    inputs = judged_inputs("faithfulness", 3)
    faithfulness = registry.get_metric("faithfulness")
    a = faithfulness(judge=http_judge(judge_server)).statistics(inputs)
    other = textgen_metrics.OpenAIJudge("judge-other", base_url=judge_server.url, api_key="k")
    with pytest.raises(ValueError, match="judge_model differs"):
        a + faithfulness(judge=other).statistics(inputs)
    g_eval = registry.get_metric("g_eval")
    b = g_eval(judge=http_judge(judge_server), criteria="Clarity.").statistics({"predictions": ["x."]})
    with pytest.raises(ValueError, match="do not merge"):
        b + g_eval(judge=http_judge(judge_server), criteria="Brevity.").statistics({"predictions": ["y."]})
    with pytest.raises(ValueError, match="evaluation_steps differs"):  # steps the judge did not write
        b + g_eval(judge=http_judge(judge_server), criteria="Clarity.",
                   evaluation_steps=["Read it."]).statistics({"predictions": ["y."]})
