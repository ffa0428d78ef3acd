"""Per-token cost of each constraint on a 32k vocabulary, model excluded: feed the token ids of a
valid 5-verdict answer one step at a time and time the processor's call (random logits)."""
import json
import sys
import time

import torch

sys.path.insert(0, "/tmp/hfj/cd")
import transformers.tokenization_utils_base as tub

sys.modules.setdefault("transformers.tokenization_utils", tub)
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402  (after the shim above)

from textgen_metrics.llm.prompts import verdict_list_schema  # noqa: E402

torch.set_num_threads(1)
folder = sys.argv[1]
tok = AutoTokenizer.from_pretrained(folder)
model = AutoModelForCausalLM.from_pretrained(folder)
V = len(tok)
res = {}
for n in (1, 5, 20):
    schema = {"type": "object", "required": ["verdicts"], "additionalProperties": False,
              "properties": {"verdicts": verdict_list_schema(n)}}
    reason = "The context says the treaty was signed in 1648 by both sides."
    answer = json.dumps({"verdicts": [{"index": i, "reason": reason, "verdict": "yes"} for i in range(1, n + 1)]})
    ans = tok(answer, add_special_tokens=False)["input_ids"]
    prompt = tok("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"]
    # lm-format-enforcer
    from lmformatenforcer import JsonSchemaParser
    from lmformatenforcer.integrations.transformers import (
        build_token_enforcer_tokenizer_data,
        build_transformers_prefix_allowed_tokens_fn,
    )
    if "lmfe_data" not in res:
        t = time.perf_counter()
        res["lmfe_data"] = build_token_enforcer_tokenizer_data(tok)
        res["lmfe setup s"] = time.perf_counter() - t
    t = time.perf_counter()
    fn = build_transformers_prefix_allowed_tokens_fn(res["lmfe_data"], JsonSchemaParser(schema))
    c1 = time.perf_counter() - t
    t = time.perf_counter()
    for k in range(len(ans) + 1):
        allowed = fn(0, torch.tensor(prompt + ans[:k]))
        assert k == len(ans) or ans[k] in allowed, (k, tok.decode(ans[:k+1]))
    lm = (time.perf_counter() - t) / (len(ans) + 1)
    # outlines-core
    import outlines
    from outlines.backends.outlines_core import OutlinesCoreBackend
    if "oc" not in res:
        t = time.perf_counter()
        res["oc"] = OutlinesCoreBackend(outlines.from_transformers(model, tok))
        res["outlines setup s"] = time.perf_counter() - t
    t = time.perf_counter()
    proc = res["oc"].get_json_schema_logits_processor(json.dumps(schema))
    c2 = time.perf_counter() - t
    logits = torch.randn(1, V)
    t = time.perf_counter()
    for k in range(len(ans) + 1):
        out = proc(torch.tensor([prompt + ans[:k]]), logits.clone())
        assert k == len(ans) or torch.isfinite(out[0, ans[k]]), (k, tok.decode(ans[:k+1]))
    oc = (time.perf_counter() - t) / (len(ans) + 1)
    print(f"| {n} | {len(ans)} | {1000*c1:.0f} | {1000*lm:.2f} | {1000*c2:.0f} | {1000*oc:.2f} |", flush=True)
print({k: round(v, 2) for k, v in res.items() if k.endswith("s")})
