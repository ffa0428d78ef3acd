"""Fault injection for the LLM-guided metrics: a real chat-completions server on 127.0.0.1 that
answers faithfulness requests correctly, except for a seeded share of requests that get one of
the faults real servers and small models produce. ``run_faults`` scores the same examples with
and without faults and counts, per example: the same score as the fault-free run, no score with
an error, or a different score (which must never happen).

Used by tests/test_judge_trust.py and by ``python tests/judge_faults.py`` (the table in
docs/judge_faults.md).
"""

from __future__ import annotations

import json
import random
import re
import threading

from chat_server import AnthropicServer, AzureServer, ChatServer, GeminiServer

BLOCK = re.compile(r"<<<DATA (\w+) (\d{9})>>>\n(.*?)\n<<<END \1 \2>>>", re.S)
WORDS = ("Paris Lyon Rome Berlin Madrid Oslo Vienna Prague Lisbon Dublin capital river museum bridge "
         "tower market station harbour castle garden").split()


def examples(n, seed=0):
    """``n`` predictions of 1 to 6 claims and their contexts (some claims supported, some not)."""
    rng = random.Random(seed)
    preds, ctxs = [], []
    for i in range(n):
        claims = [f"{rng.choice(WORDS)} has {rng.choice(WORDS)} number {i}-{k}" for k in range(rng.randint(1, 6))]
        supported = [c for c in claims if rng.random() < 0.5]
        preds.append(". ".join(claims) + ".")
        ctxs.append([". ".join(supported) + "." if supported else "Nothing relevant.", f"Context {i}."])
    return preds, ctxs


def good_answer(body, task):
    """The correct answer: claims are the prediction's sentences; a claim is implied when a
    context contains it."""
    blocks = {name: text for name, _, text in BLOCK.findall(body["messages"][1]["content"])}
    if task == "faithfulness/claims":
        return json.dumps({"claims": [s.strip() for s in blocks["prediction"].split(".") if s.strip()]})
    claims = re.findall(r"^\d+\. (.*)$", blocks["claims"], re.M)
    contexts = " ".join(v for k, v in blocks.items() if k.startswith("context_"))
    return json.dumps({"verdicts": [{"index": i, "reason": f"checked claim {i}",
                                     "verdict": "yes" if c in contexts else "no"}
                                    for i, c in enumerate(claims, 1)]})


def _cut(text):
    """A cut-off answer that would close into valid-looking JSON (the old 'repair' trap)."""
    value = json.loads(text)
    key = next(iter(value))
    items = value[key]
    keep = items[: max(1, len(items) - 1)]
    return json.dumps({key: keep})[:-2]  # drop the closing brackets, as a token limit would


def _small_model(text):
    """What a small model writes for a correct answer: a think block, single quotes, capitals,
    an extra key, a code fence."""
    value = json.loads(text)
    for v in value.get("verdicts", []):
        v["verdict"] = v["verdict"].upper() + "."
        v["confidence"] = 0.9
    body = json.dumps(value).replace('"', "'")
    return f"<think>Let me check each one.</think>\n```json\n{body}\n```"


def _wrong_count(text):
    value = json.loads(text)
    key = next(iter(value))
    if key == "verdicts":
        value[key] = value[key] + value[key][:1]
    else:
        value = {"claims": "not a list"}
    return json.dumps(value)


def _repeated_index(text):
    value = json.loads(text)
    if "verdicts" in value and len(value["verdicts"]) > 1:
        value["verdicts"][1]["index"] = 1
        return json.dumps(value)
    return "I cannot answer in JSON."


# name -> fault for one request, given the correct answer text
FAULTS = {
    "cut off at the token limit": lambda good: ("length", _cut(good)),
    "HTTP 500": lambda good: "500",
    "HTTP 429 with Retry-After": lambda good: ("429", 0.01),
    "connection dropped": lambda good: "drop",
    "no answer within the time-out": lambda good: ("hang", 0.6),
    "body not JSON": lambda good: "garbage",
    "body not UTF-8": lambda good: "not_utf8",
    "message not an object": lambda good: "no_message",
    "HTTP 400 context length": lambda good: ("status", 400, "This model's maximum context length is 8192 "
                                                         "tokens. However, your messages resulted in 9000 tokens."),
    "small-model formatting": lambda good: ("answer", _small_model(good)),
    "wrong number of items": lambda good: ("answer", _wrong_count(good)),
    "repeated index or prose": lambda good: ("answer", _repeated_index(good)),
}


# wire format -> (test server, judge string, the option naming the server's URL)
WIRES = {"openai": (ChatServer, "openai:judge", "base_url"),
         "azure": (AzureServer, "azure:judge-deployment", "endpoint"),
         "anthropic": (AnthropicServer, "anthropic:judge", "base_url"),
         "gemini": (GeminiServer, "gemini:judge", "base_url")}


def run_faults(kinds, n=300, rate=0.2, seed=1, concurrency=16, cache=None, rerun=None, wire="openai"):
    """Score ``n`` examples fault-free, then with ``rate`` of requests faulted by ``kinds``;
    returns (counts, clean result, faulty result, faults injected per kind). ``rerun``, a
    list, receives (result, request bodies) of a fault-free rerun on the same server and cache.
    ``wire``: the provider's wire format (server and judge) the faults are injected in."""
    import textgen_metrics

    server_class, judge, url_option = WIRES[wire]
    preds, ctxs = examples(n)
    options = dict(api_key="sk-fault-test", concurrency=concurrency, timeout=0.3, max_retries=3,
                   backoff=0.01, max_backoff=0.05)
    with server_class(good_answer) as srv:
        clean = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=judge,
                                             judge_options={**options, url_option: srv.url}, use_aggregator=False)
    rng = random.Random(seed)
    lock = threading.Lock()
    injected = {k: 0 for k in kinds}

    def fault_fn(body, task):
        with lock:
            if rng.random() >= rate:
                return None
            kind = rng.choice(kinds)
            injected[kind] += 1
        return FAULTS[kind](good_answer(body, task))

    with server_class(good_answer, fault_fn=fault_fn) as srv:
        faulty = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=judge,
                                              judge_options={**options, url_option: srv.url, "cache": cache},
                                              use_aggregator=False)
        if rerun is not None:
            srv.fault_fn = None
            srv.bodies.clear()
            again = textgen_metrics.faithfulness(predictions=preds, contexts=ctxs, judge=judge,
                                                 judge_options={**options, url_option: srv.url, "cache": cache},
                                                 use_aggregator=False)
            rerun.extend([again, list(srv.bodies)])
    errors = {e["index"] for e in faulty["errors"]}
    counts = {"examples": n, "faults": sum(injected.values()), "equal": 0, "none_with_error": 0, "wrong": 0}
    for i, (a, b) in enumerate(zip(clean["faithfulness"], faulty["faithfulness"], strict=True)):
        if b is None and i in errors:
            counts["none_with_error"] += 1
        elif b == a and b is not None:
            counts["equal"] += 1
        else:
            counts["wrong"] += 1
    return counts, clean, faulty, injected


def table(n=300, rate=0.2):
    rows = ["| fault | examples | faults injected | scored equal | None with error | wrong |",
            "|---|---:|---:|---:|---:|---:|"]
    for kind in list(FAULTS) + ["all of the above, mixed"]:
        kinds = list(FAULTS) if kind.startswith("all") else [kind]
        c = run_faults(kinds, n=n, rate=rate)[0]
        rows.append(f"| {kind} | {c['examples']} | {c['faults']} | {c['equal']} | {c['none_with_error']} "
                    f"| {c['wrong']} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
