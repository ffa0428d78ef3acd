"""The audit's probes through the real judge engine, on stand-in judges that answer by the
request's task id: a judge with each planted defect (the simulated judges of test_audit_stats,
behind a CallableJudge or a loopback chat server) is flagged on its probe, a clean one on none;
unusable answers are counted in ``unscored`` and never scored; the position audit after a plain
pairwise run with the same cache sends nothing, and at most one request per pair for a
comparison that asks one order; repeats carry their own cache keys (existing keys unchanged);
the dry run estimates every run without sending."""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading

import pytest

import textgen_metrics
from chat_server import ChatServer
from conftest import ROOT
from test_audit_stats import DEFECTS, TIE
from textgen_metrics.audits.probes import FILLER
from textgen_metrics.audits.run import audit
from textgen_metrics.judges import CallableJudge, OpenAIJudge
from textgen_metrics.judges.cache import cache_key

BLOCK = re.compile(r"<<<DATA (\w+) (\d{9})>>>\n(.*?)\n<<<END \1 \2>>>", re.S)
QUALITY = re.compile(r"\[q=([0-9.]+)\]")


def blocks(messages):
    return {name: text for name, _, text in BLOCK.findall(messages[1]["content"])}


class Planted:
    """A pairwise judge with planted defects (``test_audit_stats.DEFECTS``), answering
    ``pairwise_preference/verdict`` by task id: it perceives each response's quality (its
    ``[q=...]`` tag) plus ``length`` per 100 words, adds ``noise`` afresh on every call, says
    "A" (the first shown) on a ``position`` share of requests and answers a ``unusable`` share
    with no JSON at all: both drawn per request (its first messages), so a re-ask or a repeat of
    the same request gets the same."""

    def __init__(self, position=0.0, length=0.0, noise=0.0, unusable=0.0, seed=0):
        self.position, self.length, self.noise, self.unusable, self.seed = position, length, noise, unusable, seed
        self.seen = {}
        self.lock = threading.Lock()
        self.calls = 0
        self.unusable_answers = 0

    def __call__(self, messages, task):
        assert task == "pairwise_preference/verdict", task
        b = blocks(messages)
        key = hashlib.sha256(json.dumps(messages[:2]).encode()).hexdigest()
        with self.lock:
            count = self.seen.get(key, 0)
            self.seen[key] = count + 1
            self.calls += 1
        persistent = random.Random(f"{self.seed}|{key}")
        fresh = random.Random(f"{self.seed}|{key}|{count}")
        if persistent.random() < self.unusable:
            with self.lock:
                self.unusable_answers += 1
            return "I would rather not say."

        def perceived(text):
            return float(QUALITY.search(text).group(1)) + self.length * len(text.split()) / 100

        d = perceived(b["response_a"]) - perceived(b["response_b"]) + self.noise * fresh.gauss(0, 1)
        verdict = "A" if persistent.random() < self.position else ("tie" if abs(d) < TIE else ("A" if d > 0 else "B"))
        return json.dumps({"reason": "compared point by point", "verdict": verdict})


def pair_rows(n, seed=0):
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        qa, qb = rng.random(), rng.random()
        rows.append({"query": f"Question {i}?",
                     "prediction": f"Answer {i} [q={qa:.3f}] " + "word " * rng.randint(3, 40),
                     "baseline": f"Reply {i} [q={qb:.3f}] " + "word " * rng.randint(3, 40),
                     "gold": "a" if qa > qb else "b"})
    return rows


ROWS = pair_rows(200)
TRIPS = {"clean": None, "position": "position", "length": "verbosity", "noise": "repeat", "unusable": None}


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_planted_defects_through_the_engine(defect):
    """One full audit per judge, 200 pairs, every probe: the defect's probe flagged, no other
    (seed 0; the many-seed rates are test_audit_stats'); every request the judge saw is counted;
    unusable answers are counted in unscored and left out, never scored."""
    fn = Planted(**DEFECTS[defect])
    out = audit(ROWS, metrics="pairwise_preference", judge=CallableJudge(fn, concurrency=4), human_column="gold",
                seed=0)
    flagged = {p for p, v in out["probes"].items() if v.get("flagged")}
    assert flagged == ({TRIPS[defect]} if TRIPS[defect] else set()), (defect, flagged)
    assert out["requests"] == fn.calls == sum(r["requests"] for r in out["runs"])
    assert [r["run"] for r in out["runs"]] == ["plain", "verbosity (padded)", "repeat 2", "repeat 3"]
    assert out["unscored"] == sum(r["unscored"] for r in out["runs"])
    if defect != "unusable":
        assert out["unscored"] == 0 and fn.unusable_answers == 0
        assert out["requests"] == 4 * 2 * len(ROWS)  # plain, padded and two repeats; both orders each
        return
    # each unusable request was asked three times (max_parse_attempts), then its example left unscored
    assert out["unscored"] > 0 and fn.unusable_answers == 3 * (out["requests"] - 4 * 2 * len(ROWS)) // 2
    plain = textgen_metrics.pairwise_preference(queries=[r["query"] for r in ROWS],
                                                predictions=[r["prediction"] for r in ROWS],
                                                baselines=[r["baseline"] for r in ROWS],
                                                judge=CallableJudge(Planted(**DEFECTS[defect])), use_aggregator=False)
    unscored = [i for i, s in enumerate(plain["win_rate"]) if s is None]
    assert {e["index"] for e in plain["errors"]} == set(unscored) and unscored
    assert out["runs"][0]["unscored"] == len(unscored)
    position = out["probes"]["position"]
    assert position["missing"] == len(unscored) and position["pairs"] == len(ROWS) - len(unscored)
    assert out["probes"]["repeat"]["missing"] == len(unscored)  # the same requests, unusable in every repeat
    assert out["probes"]["calibration"]["missing"] == len(unscored)
    assert out["probes"]["verbosity"]["examples"] + out["probes"]["verbosity"]["missing"] == len(ROWS)


def test_the_position_audit_after_a_plain_pairwise_run_with_the_same_cache_sends_nothing(tmp_path):
    cache = str(tmp_path / "judge.sqlite")
    rows = ROWS[:40]
    first = Planted(position=0.2)
    textgen_metrics.pairwise_preference(queries=[r["query"] for r in rows], predictions=[r["prediction"] for r in rows],
                                        baselines=[r["baseline"] for r in rows],
                                        judge=CallableJudge(first, cache=cache))
    assert first.calls == 2 * len(rows)
    again = Planted(position=0.2)
    out = audit(rows, metrics="pairwise_preference", judge=CallableJudge(again, cache=cache), probes=("position",),
                human_column="gold", seed=3)
    assert out["requests"] == 0 and again.calls == 0 and out["runs"] == [
        {"run": "plain", "requests": 0, "cached": 2 * len(rows), "unscored": 0}]
    fresh = audit(rows, metrics="pairwise_preference", judge=CallableJudge(Planted(position=0.2)),
                  probes=("position",), human_column="gold", seed=3)
    assert fresh["probes"] == out["probes"] and fresh["requests"] == 2 * len(rows)


@pytest.fixture
def one_order_metric():
    """A comparison that asks one order only (the prediction as response A): the position audit
    needs one more request per pair, the swapped order."""
    from textgen_metrics.llm.metrics import JudgedMetric, ask
    from textgen_metrics.llm.pairwise import _PAIRWISE, _PAIRWISE_EXAMPLE
    from textgen_metrics.llm.prompts import prompt
    from textgen_metrics.metric import metric_classes

    class OneOrder(JudgedMetric):
        """Is the prediction better than the baseline, asked once (prediction first)."""

        name = "one_order_preference"
        columns = {"queries": "text", "predictions": "text", "baselines": "text"}
        prompts = {"verdict": prompt("choice", _PAIRWISE, _PAIRWISE_EXAMPLE, choices=("A", "B", "tie"))}

        async def score_example(self, session, example):
            result = await ask(session, self.prompt("verdict"), [
                ("query", example["queries"]), ("response_a", example["predictions"]),
                ("response_b", example["baselines"])], criteria="Better.", reference="")
            return {"A": 1.0, "B": 0.0, "tie": 0.5}[result.value["verdict"]], {}

    yield OneOrder
    metric_classes().pop("one_order_preference", None)
    vars(textgen_metrics).pop("one_order_preference", None)


def test_another_comparison_asks_at_most_one_more_request_per_pair(one_order_metric, tmp_path):
    rows = ROWS[:60]

    def fn(messages, task):
        assert task == "one_order_preference/verdict"
        return judge(messages, "pairwise_preference/verdict")

    judge = Planted(position=0.3)
    out = audit(rows, metrics=one_order_metric, judge=CallableJudge(fn), probes=("position",), human_column="gold",
                seed=1)
    assert out["requests"] == 2 * len(rows) and judge.calls == 2 * len(rows)  # the plain order, then the swapped
    assert [r["run"] for r in out["runs"]] == ["plain", "position (swapped)"]
    assert out["probes"]["position"]["flagged"] and out["probes"]["position"]["first_position_rate"]["value"] > 0.55
    # after a plain run with the same cache: exactly one request per pair
    cache = str(tmp_path / "c.sqlite")
    judge = Planted(position=0.3)
    one_order_metric.function()(queries=[r["query"] for r in rows], predictions=[r["prediction"] for r in rows],
                                baselines=[r["baseline"] for r in rows], judge=CallableJudge(fn, cache=cache))
    calls = judge.calls
    again = audit(rows, metrics=one_order_metric, judge=CallableJudge(fn, cache=cache), probes=("position",), seed=1)
    assert again["requests"] == len(rows) == judge.calls - calls
    # an honest judge: the verdicts agree across orders, nothing flagged
    judge = Planted()
    honest = audit(rows, metrics=one_order_metric, judge=CallableJudge(fn), probes=("position",), human_column="gold",
                   seed=1)
    assert not honest["probes"]["position"]["flagged"]
    assert honest["probes"]["position"]["positional_agreement"]["value"] == 1.0


GOLDEN = "7025c673ad38aa2c12e16a11e1a0e8c4b6c8264804c444f1d6c3e19b999415e3"


def test_repeats_have_their_own_cache_keys_and_plain_keys_are_unchanged(tmp_path):
    from textgen_metrics.llm.pairwise import PairwisePreference

    request = PairwisePreference.prompts["verdict"].request(
        [("query", "What is 2+2?"), ("response_a", "4"), ("response_b", "5")], criteria="Correct.", reference="")
    judge = CallableJudge(lambda m: "", model="golden")
    # the key as it was before repeats existed (computed at that commit): byte for byte
    assert judge.request_key(request) == GOLDEN == cache_key("callable", "golden", request.messages,
                                                              judge.settings(request))
    assert judge.repeated(0).request_key(request) == GOLDEN
    keys = {judge.repeated(r).request_key(request) for r in (1, 2, 3)}
    assert len(keys) == 3 and GOLDEN not in keys
    api = OpenAIJudge("golden-model", base_url="http://127.0.0.1:9/v1", api_key="k", requests_per_minute=600)
    assert api.request_key(request) == "b99e4965f122d75f1ee92297344a81ccd531fb07ffe38b0010088069b6d7709a"
    copy = api.repeated(2)
    assert copy.rate_budget is api.rate_budget and copy.cache is api.cache and copy.repeat == 2 and api.repeat == 0
    with pytest.raises(ValueError, match="repeat"):
        judge.repeated(-1)
    # through a run: a deterministic judge with a cache is still asked K times (no folding), and a
    # rerun of the whole audit is free
    cache = str(tmp_path / "r.sqlite")
    rows = ROWS[:30]
    fn = Planted()
    out = audit(rows, metrics="pairwise_preference", judge=CallableJudge(fn, cache=cache, concurrency=8),
                probes=("repeat",), repeats=4, seed=1)
    assert out["requests"] == fn.calls == 4 * 2 * len(rows)
    assert out["probes"]["repeat"]["flip_rate"]["value"] == 0.0 and out["probes"]["repeat"]["repeats"] == 4
    rerun = audit(rows, metrics="pairwise_preference", judge=CallableJudge(fn, cache=cache), probes=("repeat",),
                  repeats=4, seed=1)
    assert rerun["requests"] == 0 and rerun["probes"] == out["probes"]


def test_verbosity_appends_the_filler_to_the_prediction_only():
    assert len(FILLER.split()) >= 20
    seen = []

    def fn(messages, task):
        seen.append(blocks(messages))
        return json.dumps({"reason": "r", "verdict": "A"})

    rows = ROWS[:5]
    out = audit(rows, metrics="pairwise_preference", judge=CallableJudge(fn), probes=("verbosity",), seed=1)
    padded = [b for b in seen if FILLER in b["response_a"] or FILLER in b["response_b"]]
    assert len(padded) == 2 * len(rows)  # both orders of each padded pair
    for b in padded:
        pred, base = (b["response_a"], b["response_b"]) if FILLER in b["response_a"] else (b["response_b"],
                                                                                            b["response_a"])
        assert pred.endswith("\n\n" + FILLER) and FILLER not in base and base.startswith("Reply")
    assert out["probes"]["verbosity"]["filler"] == FILLER
    assert out["probes"]["verbosity"]["mean_shift"]["value"] == 0.0  # "A" in both orders: a tie either way


def test_a_scoring_metric_audited_on_its_own_scale():
    """G-Eval (1-5, steps given: no steps request): position is skipped (nothing to swap), the
    threshold is the scale's middle, calibration reads 0/1 labels; a length-loving judge is
    flagged on verbosity."""
    def fn(messages, task):
        assert task == "g_eval/score"
        words = len(blocks(messages)["prediction"].split())
        return json.dumps({"reason": "r", "score": min(5, 1 + words // 10)})

    rows = [{"prediction": "word " * (3 + 3 * i), "label": int(i % 3 == 0)} for i in range(30)]
    out = audit(rows, metrics="g_eval", judge=CallableJudge(fn), human_column="label",
                options={"g_eval": {"criteria": "Complete.", "evaluation_steps": ["Read it."]}}, seed=2)
    assert out["probes"]["position"] == {
        "skipped": "g_eval compares no two answers (no baselines): no position to swap"}
    assert out["probes"]["verbosity"]["flagged"] and out["probes"]["verbosity"]["mean_shift"]["value"] > 0
    assert not out["probes"]["repeat"]["flagged"]
    assert out["settings"]["score_range"] == [1.0, 5.0] and out["requests"] == 4 * len(rows)
    calibration = out["probes"]["calibration"]
    assert calibration["examples"] == len(rows) and sum(b["count"] for b in calibration["bins"]) == len(rows)
    assert "skipped" in audit(rows, metrics="g_eval", judge=CallableJudge(fn), probes=("calibration",),
                              options={"g_eval": {"criteria": "Complete.", "evaluation_steps": ["x"]}})[
        "probes"]["calibration"]


def test_through_a_chat_server_with_a_budget():
    """The same probes over HTTP (OpenAIJudge at the loopback chat server), under a rate budget:
    every request the server saw is counted."""
    judge_fn = Planted(position=0.3)

    def responder(body, task):
        return judge_fn(body["messages"], task)

    rows = ROWS[:40]
    with ChatServer(responder) as srv:
        judge = OpenAIJudge("stand-in", base_url=srv.url, api_key="k", concurrency=4, requests_per_minute=100000)
        out = audit(rows, metrics="pairwise_preference", judge=judge, probes=("position", "repeat"), repeats=2,
                    human_column="gold", seed=4)
        assert out["requests"] == srv.count == 2 * 2 * len(rows)
    assert out["probes"]["position"]["flagged"] and out["judge"] == "openai:stand-in"


def test_the_dry_run_estimates_every_run_and_sends_nothing(tmp_path):
    def fn(messages, task):
        raise AssertionError("a dry run sends nothing")

    rows = ROWS[:10]
    est = audit(rows, metrics="pairwise_preference", judge=CallableJudge(fn, model="gpt-4o-mini"), dry_run=True)
    assert list(est["metrics"]) == ["pairwise_preference (plain)", "pairwise_preference (verbosity (padded))",
                                    "pairwise_preference (repeat 2)", "pairwise_preference (repeat 3)"]
    assert est["total"]["requests"] == 4 * 2 * len(rows) and est["total"]["cached"] == 0
    # after a plain run with a cache, the plain run costs nothing; the repeats still do
    cache = str(tmp_path / "c.sqlite")
    textgen_metrics.pairwise_preference(queries=[r["query"] for r in rows], predictions=[r["prediction"] for r in rows],
                                        baselines=[r["baseline"] for r in rows],
                                        judge=CallableJudge(Planted(), cache=cache, model="stand-in"))
    est = audit(rows, metrics="pairwise_preference", judge=CallableJudge(fn, cache=cache, model="stand-in"),
                dry_run=True, probes="position,repeat")
    assert est["metrics"]["pairwise_preference (plain)"]["cached"] == 2 * len(rows)
    assert est["metrics"]["pairwise_preference (plain)"]["requests"] == 0
    assert est["total"]["requests"] == 2 * 2 * len(rows)


def test_bad_arguments_are_clear():
    judge = CallableJudge(lambda m: "{}")
    with pytest.raises(ValueError, match="one LLM-guided metric at a time"):
        audit(ROWS[:2], metrics="pairwise_preference,g_eval", judge=judge)
    with pytest.raises(ValueError, match="not an LLM-guided metric"):
        audit(ROWS[:2], metrics="rouge", judge=judge)
    with pytest.raises(ValueError, match="unknown probe 'speed'"):
        audit(ROWS[:2], metrics="pairwise_preference", judge=judge, probes=("speed",))
    with pytest.raises(ValueError, match="repeats"):
        audit(ROWS[:2], metrics="pairwise_preference", judge=judge, repeats=1)
    with pytest.raises(ValueError, match="row 1 has no field 'verdict'"):
        audit(ROWS[:2], metrics="pairwise_preference", judge=judge, human_column="verdict")
    with pytest.raises(ValueError, match="has no field"):
        audit([{"x": 1}], metrics="pairwise_preference", judge=judge)


def test_position_and_repeat_audits_on_the_real_smollm2_behind_the_real_server(tmp_path):
    """SmolLM2-135M-Instruct behind llama-cpp-python's server (behind the recording proxy), on
    the 3 shortest LLMBar Natural pairs: the plumbing, never the judge's quality. Every request
    the server saw is counted in ``requests`` (the dialect step-down and re-asks included), and
    every verdict is either usable or counted unscored."""
    import sys

    from llama_server import RecordingProxy, llama_server
    from textgen_metrics.judges.tiny import tiny_model_file

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_audit import shortest_pairs

    rows = shortest_pairs(3)
    with llama_server(tiny_model_file("smollm2"), log=tmp_path / "server.log") as url, RecordingProxy(url) as proxy:
        judge = OpenAIJudge("smollm2", base_url=proxy.url, api_key="none", timeout=600)
        out = audit(rows, metrics="pairwise_preference", judge=judge, probes=("position", "repeat"), repeats=2,
                    human_column="gold", seed=0)
        said = proxy.usage(0)
    assert judge.judge_mode == "json_object_schema"
    assert out["requests"] == said["requests"] >= 2 * 2 * len(rows)
    assert [r["run"] for r in out["runs"]] == ["plain", "repeat 2"]
    position, repeat = out["probes"]["position"], out["probes"]["repeat"]
    assert position["pairs"] + position["missing"] == len(rows)  # usable, or left out and counted
    assert repeat["examples"] + repeat["missing"] == len(rows)
    assert out["unscored"] == sum(r["unscored"] for r in out["runs"])
    assert out["runs"][0]["unscored"] == position["missing"]
    for stat in ("first_position_rate", "positional_agreement", "kappa"):
        value = position[stat]["value"]
        assert value is None or -1.0 <= value <= 1.0
