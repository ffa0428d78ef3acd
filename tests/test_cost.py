"""Cost estimates before any request: ``textgen_metrics.estimate_cost`` and ``score --dry-run``."""

import json
import subprocess
import sys

import pytest

import textgen_metrics
from chat_server import ChatServer, request_schema, schema_answer
from conftest import ROOT
from textgen_metrics.judges.prices import BATCH_DISCOUNT, chat_tokens, price_for, token_counter_for

PREDICTIONS = ["Paris is the capital of France. It has two million people. It hosted the 1900 Olympics.",
               "The sky is blue. Water is wet."]
CONTEXTS = [["Paris is the capital of France."], ["The sky is blue on clear days."]]
QUERIES = ["What is the capital of France?", "What colour is the sky?"]


def test_o200k_counts_are_openai_s_and_other_models_are_called_approximations():
    tok = token_counter_for("openai", "gpt-4o-mini")
    assert tok.exact and "o200k_base" in tok.name
    assert tok.count("Hello, world!") == 4  # "Hello" "," " world" "!" in o200k_base
    assert token_counter_for("openai", "gpt-4-0613").name.startswith("cl100k_base")
    claude = token_counter_for("anthropic", "claude-3-5-haiku-latest")
    assert not claude.exact and "approximation" in claude.name


def test_price_table_longest_prefix_override_and_unknown_model():
    assert price_for("openai", "gpt-4o-mini-2024-07-18")[0] == (0.15, 0.60)
    assert price_for("openai", "gpt-4o")[0] == (2.50, 10.00)
    assert price_for("openai", "gpt-4o", {"gpt-4o": (1, 2)}) == ((1.0, 2.0), "prices=")
    price, why = price_for("openai", "my-local-model")
    assert price is None and "prices=" in why


def test_estimate_counts_the_prompts_a_real_run_sends():
    """The estimate renders the same prompts as a run: a real run against a loopback server
    (whose answers extract one item per sentence, as the estimate assumes) sends the same number
    of requests per stage, and the first stage's prompt tokens are exactly those of the bodies
    the server received."""
    estimate = textgen_metrics.estimate_cost("faithfulness", judge="openai:gpt-4o-mini",
                                             predictions=PREDICTIONS, contexts=CONTEXTS)
    with ChatServer(schema_answer) as server:
        judge = textgen_metrics.OpenAIJudge("gpt-4o-mini", base_url=server.url, api_key="k")
        result = textgen_metrics.faithfulness(predictions=PREDICTIONS, contexts=CONTEXTS, judge=judge)
        assert not result["errors"]
        sent = list(zip(server.headers, server.bodies, strict=True))
    stages = estimate["metrics"]["faithfulness"]["stages"]
    tasks = [h["X-Textgen-Task"] for h, _ in sent]
    assert {t: tasks.count(t) for t in set(tasks)} == {t: s["requests"] for t, s in stages.items()}
    assert estimate["metrics"]["faithfulness"]["requests"] == result["judge_usage"]["requests"] == 4
    tok = token_counter_for("openai", "gpt-4o-mini")
    from textgen_metrics.llm.faithfulness import Faithfulness

    claims = Faithfulness.prompts["claims"]
    bodies = [b for h, b in sent if h["X-Textgen-Task"] == "faithfulness/claims"]
    asked = [next(p for p in PREDICTIONS if p in b["messages"][-1]["content"]) for b in bodies]
    assert sorted(asked) == sorted(PREDICTIONS) and all(request_schema(b) is not None for b in bodies)
    counted = sum(chat_tokens(tok, b["messages"], claims.request([("prediction", p)]).schema)
                  for b, p in zip(bodies, asked, strict=True))
    assert stages["faithfulness/claims"]["prompt_tokens"] == counted
    assert not stages["faithfulness/claims"]["depends_on_answers"]
    assert stages["faithfulness/verdicts"]["depends_on_answers"]
    assert any("faithfulness/verdicts" in n and "one item per sentence" in n for n in estimate["notes"])


def test_estimate_prices_live_and_batch_and_totals_add_up():
    est = textgen_metrics.estimate_cost(["faithfulness", "answer_relevance"], judge="openai:gpt-4o-mini",
                                        predictions=PREDICTIONS, contexts=CONTEXTS, queries=QUERIES)
    total = est["total"]
    for key in ("requests", "prompt_tokens", "completion_tokens"):
        assert total[key] == sum(m[key] for m in est["metrics"].values())
    p_in, p_out = 0.15, 0.60
    assert total["cost"] == pytest.approx((total["prompt_tokens"] * p_in + total["completion_tokens"] * p_out) / 1e6)
    assert total["batch_cost"] == pytest.approx(total["cost"] * BATCH_DISCOUNT)
    own = textgen_metrics.estimate_cost("faithfulness", judge="openai:gpt-4o-mini", prices={"gpt-4o-mini": (1.0, 1.0)},
                                        predictions=PREDICTIONS, contexts=CONTEXTS)["metrics"]["faithfulness"]
    assert own["cost"] == pytest.approx((own["prompt_tokens"] + own["completion_tokens"]) / 1e6)
    unknown = textgen_metrics.estimate_cost("faithfulness", judge="openai:local-llama", judge_options={
        "base_url": "http://127.0.0.1:9/v1"}, predictions=PREDICTIONS, contexts=CONTEXTS)
    assert unknown["total"]["cost"] is None and "prices=" in unknown["price"]["source"]


def test_estimate_takes_the_judge_s_own_prices_and_needs_no_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    est = textgen_metrics.estimate_cost("toxicity", judge="anthropic:claude-3-5-haiku-latest", predictions=PREDICTIONS)
    assert est["judge"] == "anthropic:claude-3-5-haiku-latest" and est["price"]["prompt"] == 0.80
    judge = textgen_metrics.OpenAIJudge("gpt-4o", base_url="http://127.0.0.1:9/v1", prices={"gpt-4o": (5.0, 5.0)})
    est = textgen_metrics.estimate_cost("toxicity", judge=judge, predictions=PREDICTIONS)
    assert est["price"]["source"] == "prices=" and est["price"]["prompt"] == 5.0


def test_estimate_rejects_metrics_without_a_judge_and_missing_inputs():
    with pytest.raises(ValueError, match="rouge"):
        textgen_metrics.estimate_cost("rouge", judge="openai:gpt-4o", predictions=PREDICTIONS)
    with pytest.raises(ValueError, match="contexts"):
        textgen_metrics.estimate_cost("faithfulness", judge="openai:gpt-4o", predictions=PREDICTIONS)


def test_cli_dry_run_sends_nothing_and_writes_the_estimate(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"prediction": p, "contexts": c}) + "\n"
                            for p, c in zip(PREDICTIONS, CONTEXTS, strict=True)))
    out = tmp_path / "estimate.json"
    with ChatServer(schema_answer) as server:
        proc = subprocess.run([sys.executable, "-m", "textgen_metrics", "score", str(data), "--metrics",
                               "faithfulness,rouge", "--judge", "openai:gpt-4o-mini", "--judge-url", server.url,
                               "--dry-run", "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                              env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
        assert server.count == 0
    assert proc.returncode == 0, proc.stderr
    assert "faithfulness/verdicts (*)" in proc.stdout and "batch USD" in proc.stdout
    assert "not estimated (no judge requests): rouge" in proc.stdout
    written = json.loads(out.read_text())
    again = textgen_metrics.estimate_cost("faithfulness", judge="openai:gpt-4o-mini",
                                          predictions=PREDICTIONS, contexts=CONTEXTS)
    assert written["total"] == again["total"]


def test_a_rerun_s_estimate_counts_only_what_the_cache_does_not_answer(tmp_path):
    """Answers validated by an earlier run cost nothing: the estimate sends what the rerun sends."""
    with ChatServer(schema_answer) as server:
        options = {"base_url": server.url, "api_key": "k", "cache": str(tmp_path / "judge.sqlite")}
        first = textgen_metrics.faithfulness(predictions=PREDICTIONS[:1], contexts=CONTEXTS[:1],
                                             judge="openai:gpt-4o-mini", judge_options=options)
        assert first["errors"] == [] and server.count == 2
        scratch = textgen_metrics.estimate_cost("faithfulness", judge="openai:gpt-4o-mini",
                                                predictions=PREDICTIONS, contexts=CONTEXTS)
        estimate = textgen_metrics.estimate_cost("faithfulness", judge="openai:gpt-4o-mini", judge_options=options,
                                                 predictions=PREDICTIONS, contexts=CONTEXTS)
        assert server.count == 2  # the estimate sent nothing
        rerun = textgen_metrics.faithfulness(predictions=PREDICTIONS, contexts=CONTEXTS,
                                             judge="openai:gpt-4o-mini", judge_options=options)
    sent = server.count - 2
    assert rerun["judge_usage"]["cached"] == 2 and sent == 2
    assert estimate["total"]["requests"] == sent and estimate["total"]["cached"] == 2
    assert scratch["total"]["requests"] == 4 and scratch["total"]["cached"] == 0
    # the first example's requests are the ones left out, and the second's cost what they did before
    for task in ("faithfulness/claims", "faithfulness/verdicts"):
        assert estimate["metrics"]["faithfulness"]["stages"][task]["cached"] == 1
    assert estimate["total"]["prompt_tokens"] < scratch["total"]["prompt_tokens"]
    assert "2 requests answered from the judge's cache" in " ".join(estimate["notes"])
