"""Constrained JSON decoding on the tiny models: valid-JSON rate, usable rate, cut-offs, time.

Each request: the project's verdict-list prompt shape (system + numbered statements), the
project's schema (verdict_list_schema(n) under "verdicts"), the HF judge's budget rule
(128 + 64 * items), greedy, one request at a time (batch 1), one thread pair of CPU cores."""
import json
import random
import sys
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

sys.path.insert(0, "/tmp/hfj/cd")
from build import conversation

from textgen_metrics.judges.parsing import JudgeParseError, parse_answer
from textgen_metrics.llm.prompts import check_indices, verdict_list_schema

torch.set_num_threads(2)
folder, modes, n_req = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
tok = AutoTokenizer.from_pretrained(folder)
model = AutoModelForCausalLM.from_pretrained(folder).eval()
EOS = {tok.eos_token_id, tok.pad_token_id}
random.seed(1)
reqs = []
for k in range(n_req):
    n = 1 + k % 5
    msgs, _ = conversation(n)
    schema = {"type": "object", "required": ["verdicts"], "additionalProperties": False,
              "properties": {"verdicts": verdict_list_schema(n)}}
    reqs.append((n, msgs, schema))

setup = {}
def lmfe_setup():
    # lm-format-enforcer 0.11.3 imports transformers.tokenization_utils, gone in transformers 5: alias it
    import transformers.tokenization_utils_base as tub
    sys.modules.setdefault("transformers.tokenization_utils", tub)
    from lmformatenforcer.integrations.transformers import build_token_enforcer_tokenizer_data
    t = time.perf_counter()
    data = build_token_enforcer_tokenizer_data(tok)
    setup["lmfe tokenizer data"] = time.perf_counter() - t
    return data
def outlines_setup():
    import outlines
    from outlines.backends.outlines_core import OutlinesCoreBackend
    t = time.perf_counter()
    om = outlines.from_transformers(model, tok)
    backend = OutlinesCoreBackend(om)
    setup["outlines vocabulary"] = time.perf_counter() - t
    return backend

backends = {m: (lmfe_setup() if m == "lmfe" else outlines_setup() if m == "outlines" else None) for m in modes}
compiled = {m: {} for m in modes}
stats = {m: dict(n=0, json=0, usable=0, schema=0, cut=0, time=0.0, tokens=0, compile=0.0) for m in modes}
for n, msgs, schema in reqs:
    ids = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    budget = 128 + 64 * n
    for mode in modes:  # interleaved, so that the machine's load falls alike on every mode
        st = stats[mode]
        kw = dict(max_new_tokens=budget, do_sample=False, eos_token_id=sorted(EOS), pad_token_id=tok.pad_token_id)
        t0 = time.perf_counter()
        if mode == "lmfe":
            from lmformatenforcer import JsonSchemaParser
            from lmformatenforcer.integrations.transformers import build_transformers_prefix_allowed_tokens_fn
            tc = time.perf_counter()
            kw["prefix_allowed_tokens_fn"] = build_transformers_prefix_allowed_tokens_fn(backends[mode],
                                                                                         JsonSchemaParser(schema))
            st["compile"] += time.perf_counter() - tc
        elif mode == "outlines":
            from transformers import LogitsProcessorList
            tc = time.perf_counter()
            if n not in compiled[mode]:  # one Index per distinct schema (item count), then reused
                compiled[mode][n] = backends[mode].get_json_schema_logits_processor(json.dumps(schema))
            proc = compiled[mode][n]
            proc.reset()
            st["compile"] += time.perf_counter() - tc
            kw["logits_processor"] = LogitsProcessorList([proc])
        with torch.inference_mode():
            out = model.generate(**ids, **kw)
        dt = time.perf_counter() - t0
        new = out[0, ids["input_ids"].shape[1]:].tolist()
        end = next((i for i, t in enumerate(new) if t in EOS), None)
        cut = end is None
        text = tok.decode(new if cut else new[:end], skip_special_tokens=True)
        st["n"] += 1
        st["time"] += dt
        st["tokens"] += len(new) if cut else end + 1
        st["cut"] += cut
        try:
            json.loads(text)
            ok_json = True
        except ValueError:
            ok_json = False
        st["json"] += ok_json and not cut
        why = "cut off" if cut else "ok"
        try:
            v = parse_answer(text, schema)
            st["schema"] += not cut
            check_indices(v, {"verdicts": n})
            st["usable"] += not cut
        except JudgeParseError as e:
            if not cut:
                why = "indices" if "indices" in str(e) else "items" if "item" in str(e) else "other: " + str(e)[:60]
        st.setdefault("why", {}).setdefault(why, 0)
        st["why"][why] += 1
        if st["n"] <= 2:
            print(mode, n, "cut" if cut else "stop", repr(text[:200]), flush=True)
print({m: stats[m]["why"] for m in modes})
print("setup (s):", {k: round(v, 2) for k, v in setup.items()})
print("| mode | requests | valid JSON | schema-valid | usable (indices too) | cut off | s/request | tokens/request "
      "| ms/token | schema compile s/request |")
print("|---|---|---|---|---|---|---|---|---|---|")
for mode in modes:
    s = stats[mode]
    print(f"| {mode} | {s['n']} | {s['json'] / s['n']:.0%} | {s['schema'] / s['n']:.0%} | {s['usable'] / s['n']:.0%} | "
          f"{s['cut'] / s['n']:.0%} | {s['time'] / s['n']:.2f} | {s['tokens'] / s['n']:.0f} | "
          f"{1000 * s['time'] / max(1, s['tokens']):.1f} | {s['compile'] / s['n']:.3f} |")
