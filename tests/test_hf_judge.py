"""HFJudge against real transformers parts: tiny models built from a config in a temporary
folder (no download), real tokenizers with real chat templates, real ``model.generate``.

To make a model answer what a test needs, its weights are set by hand: a one-layer Llama whose
attention and MLP write nothing, whose embeddings are one-hot and whose output matrix maps each
token to the next one of a chosen chain. So the model is a deterministic bigram machine: after
the chat template's generation prompt ("assistant" or Gemma's "model") it writes the chain
``{"verdicts": ["yes", "no"]}`` and an end-of-sequence token ("ANSWER"), or ``la la la ...``
without end ("RAMBLE"). A random GPT-2 shows the same on gibberish.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from textgen_metrics.judges import HFJudge, JudgeFatalError, JudgeRequest, JudgeResult, get_judge
from textgen_metrics.judges.base import BREVITY, Completion, _with_brevity

SCHEMA = {"type": "object", "required": ["verdicts"], "properties": {"verdicts": {
    "type": "array", "minItems": 2, "maxItems": 2,
    "items": {"type": "string", "enum": ["yes", "no"]}}}}
SYSTEM = "SYSTEM-RULES judge carefully"

# the real chat templates' shapes: ChatML (Qwen) renders a system turn; Gemma's raises on one
# and on turns that do not alternate; the third drops system messages without a word
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
          "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
GEMMA = ("{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
         "{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
         "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
         "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}"
         "{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}"
         "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}")
DROPS = ("{% for message in messages %}{% if message['role'] != 'system' %}{{'<|im_start|>' + message['role'] + "
         "'\n' + message['content'] + '<|im_end|>\n'}}{% endif %}{% endfor %}"
         "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
TEMPLATES = {"chatml": CHATML, "gemma": GEMMA, "drops": DROPS, "none": None}

SPECIAL = ["<unk>", "<eos>", "<bos>", "<|im_start|>", "<|im_end|>", "<start_of_turn>", "<end_of_turn>"]
WORDS = SPECIAL + ["assistant", "assistant:", "model", '{"verdicts":', '["yes",', '"no"]}', "la"]
STARTS = ("assistant", "assistant:", "model")  # the last word of each generation prompt
ANSWER_TOKENS = ['{"verdicts":', '["yes",', '"no"]}']
GOOD = '{"verdicts": ["yes", "no"]}'


def chain(kind: str, end: str) -> dict[str, str]:
    if kind == "answer":
        steps = ANSWER_TOKENS + [end]
        out = {s: steps[0] for s in STARTS}
        out.update(itertools.pairwise(steps))
        return out
    return {**{s: "la" for s in STARTS}, "la": "la"}


def build(folder: Path, template: str | None, kind: str, context: int = 1024) -> str:
    """A tokenizer with ``template`` and a bigram Llama writing the ``kind`` chain."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>", bos_token="<bos>",
                                   pad_token="<eos>", additional_special_tokens=SPECIAL[3:])
    if template is not None:
        fast.chat_template = template
    fast.save_pretrained(folder)
    size = len(WORDS)
    hidden = size + (-size) % 4
    config = LlamaConfig(vocab_size=size, hidden_size=hidden, intermediate_size=4, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=context,
                         tie_word_embeddings=False, eos_token_id=vocab["<eos>"], pad_token_id=vocab["<eos>"],
                         bos_token_id=vocab["<bos>"])
    model = LlamaForCausalLM(config)
    end = "<end_of_turn>" if template == GEMMA else "<eos>"
    nxt = chain(kind, end)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.fill_(1.0 if "norm" in name else 0.0)  # attention and MLP add nothing to the residual
        for i, word in enumerate(WORDS):
            model.model.embed_tokens.weight[i, i] = 1.0
            model.lm_head.weight[vocab[nxt.get(word, "<eos>")], i] = 10.0
    if template == GEMMA:  # Gemma ends a turn with <end_of_turn>, one of its generation config's EOS ids
        model.generation_config.eos_token_id = [vocab["<eos>"], vocab["<end_of_turn>"]]
    model.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """``tiny(template_name, kind, context=1024)``: a model folder, built once per module."""
    built: dict[tuple[str, str, int], str] = {}

    def get(template: str = "chatml", kind: str = "answer", context: int = 1024) -> str:
        key = (template, kind, context)
        if key not in built:
            built[key] = build(tmp_path_factory.mktemp(f"{template}-{kind}"), TEMPLATES[template], kind, context)
        return built[key]

    return get


def hf(*args: Any, **options: Any) -> HFJudge:
    """HFJudge decoding freely: these tests drive the generation loop with bigram machines whose
    words a grammar could not spell (the constrained path runs on the real models in
    test_real_judges.py)."""
    options.setdefault("structured", "none")
    return HFJudge(*args, **options)


def ask(i: int = 0, messages: list[dict[str, str]] | None = None, **kw: Any) -> JudgeRequest:
    messages = messages or [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"question {i}"}]
    return JudgeRequest(messages, schema=SCHEMA, task="verdicts", **kw)


def complete(judge: HFJudge, request: JudgeRequest) -> tuple[Completion, JudgeResult]:
    """One answer straight from the backend hook, as the engine would get it."""
    async def run() -> tuple[Completion, JudgeResult]:
        tally = JudgeResult()
        async with judge._open() as batcher:
            return await judge._acomplete(request.messages, request, batcher, tally), tally

    return asyncio.run(run())


def record(judge: HFJudge) -> list[list[int]]:
    """Record the budgets of each batch that ``judge`` generates."""
    batches: list[list[int]] = []
    generate = judge._generate

    def recording(jobs: Any) -> list[Completion]:
        batches.append([job.budget for job in jobs])
        return generate(jobs)

    judge._generate = recording  # type: ignore[method-assign]
    return batches


# -- chat templates --------------------------------------------------------------------------

def test_template_with_a_system_role_keeps_the_system_turn(tiny: Callable[..., str]) -> None:
    j = hf(tiny("chatml"), batch_size=2)
    prompt = j._prompt(ask().messages)
    assert prompt.startswith(f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\nquestion 0<|im_end|>")
    results = j.judge([ask(i) for i in range(3)])
    assert [r.value for r in results] == [{"verdicts": ["yes", "no"]}] * 3 and all(r.ok for r in results)


@pytest.mark.parametrize("name", ["gemma", "drops"])
def test_template_without_a_system_role_gets_the_system_text_in_the_first_user_turn(
        tiny: Callable[..., str], name: str) -> None:
    j = hf(tiny(name), batch_size=2)
    messages = ask().messages
    if name == "gemma":  # the template itself refuses a system message...
        with pytest.raises(Exception, match="System role not supported"):
            j.tokenizer.apply_chat_template(messages, tokenize=False)
    else:  # ...or drops it silently
        assert SYSTEM not in j.tokenizer.apply_chat_template(messages, tokenize=False)
    prompt = j._prompt(messages)
    turn = "<start_of_turn>user\n" if name == "gemma" else "<|im_start|>user\n"
    assert f"{turn}{SYSTEM}\n\nquestion 0" in prompt and prompt.count(SYSTEM) == 1
    assert "system" not in prompt.replace(SYSTEM, "")
    results = j.judge([ask(i) for i in range(3)])
    assert all(r.ok and r.value == {"verdicts": ["yes", "no"]} for r in results), [r.error for r in results]


def test_a_template_failure_fails_only_that_request_before_batching(tiny: Callable[..., str]) -> None:
    j = hf(tiny("gemma"), batch_size=4)
    batches = record(j)
    two_users = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    requests = [ask(0), ask(1, messages=two_users), ask(2), ask(3)]
    results = j.judge(requests)
    bad = results[1]
    assert bad.value is None and "chat template" in bad.error and "must alternate" in bad.error
    assert bad.requests == 0 and bad.completion_tokens == 0
    assert [r.ok for r in results] == [True, False, True, True]
    assert [len(b) for b in batches] == [3] and j.usage.requests == 3


# -- end of sequence, cut-offs and budgets ---------------------------------------------------

@pytest.mark.parametrize("name", ["chatml", "gemma"])
def test_an_answer_that_ends_with_eos_is_stop(tiny: Callable[..., str], name: str) -> None:
    j = hf(tiny(name, "answer"), max_new_tokens=16)
    completion, tally = complete(j, ask())
    assert completion.finish_reason == "stop" and not completion.truncated
    assert completion.text == GOOD
    assert completion.completion_tokens == len(ANSWER_TOKENS) + 1  # the end-of-sequence token counts
    assert completion.prompt_tokens == len(j._encode(ask().messages)) and tally.requests == 1


@pytest.mark.parametrize("name", ["chatml", "gemma"])
def test_a_cut_answer_is_length_and_asked_again_with_a_larger_budget(tiny: Callable[..., str], name: str) -> None:
    n = len(ANSWER_TOKENS)
    j = hf(tiny(name, "answer"), max_new_tokens=n)  # room for the JSON but not for its end
    completion, _ = complete(j, ask())
    # the cut text happens to be complete JSON: it is flagged all the same, never parsed
    assert completion.finish_reason == "length" and completion.truncated
    assert completion.text == GOOD and completion.completion_tokens == n
    batches = record(j)
    prompts: list[str] = []
    render = j._prompt

    def recording(messages: Any) -> str:
        prompts.append(render(messages))
        return prompts[-1]

    j._prompt = recording  # type: ignore[method-assign]
    [res] = j.judge([ask()])
    assert res.ok and res.value == {"verdicts": ["yes", "no"]}
    assert batches == [[n], [256]] and res.attempts == 2 and res.requests == 2
    assert res.completion_tokens == n + (n + 1) and j.usage.requests == 2
    assert BREVITY not in prompts[0] and BREVITY in prompts[1]


def test_an_answer_cut_twice_fails_the_request(tiny: Callable[..., str]) -> None:
    j = hf(tiny("chatml", "ramble"), max_new_tokens=8)
    completion, _ = complete(j, ask())
    assert completion.finish_reason == "length" and completion.text == " ".join(["la"] * 8)
    batches = record(j)
    [res] = j.judge([ask()])
    assert res.value is None and "cut off at 256 tokens" in res.error
    assert batches == [[8], [256]] and res.requests == 2 and res.completion_tokens == 8 + 256


def test_the_budget_grows_with_the_items_asked_for(tiny: Callable[..., str]) -> None:
    j = hf(tiny("chatml", "ramble"), max_new_tokens=8)
    assert HFJudge.budget_base == 128 and HFJudge.budget_per_item == 64
    assert [j.budget(ask(items=k)) for k in (None, 0, 5, 20)] == [8, 128, 128 + 5 * 64, 128 + 20 * 64]
    assert j.budget(ask(items=20, max_tokens=11)) == 11  # a request's own budget wins
    j.budget_base, j.budget_per_item = 100, 40
    assert [j.budget(ask(items=k)) for k in (None, 1, 5)] == [8, 140, 300]
    batches = record(j)
    results = j.judge([ask(0, items=5), ask(1, items=1)])
    assert [sorted(b) for b in batches] == [[140, 300], [280, 600]]  # a budget per row; doubled when cut
    assert "cut off at 600 tokens" in results[0].error and results[0].completion_tokens == 300 + 600
    assert "cut off at 280 tokens" in results[1].error and results[1].completion_tokens == 140 + 280


def test_a_prompt_longer_than_the_context_fails_and_the_budget_stops_at_the_context(
        tiny: Callable[..., str]) -> None:
    j = hf(tiny("chatml", "ramble", context=48), max_new_tokens=512)
    long = [{"role": "user", "content": "word " * 60}]
    short = ask(0)
    rooms = [48 - len(j._encode(m)) for m in (short.messages, _with_brevity(short.messages))]
    batches = record(j)
    results = j.judge([ask(1, messages=long), short])
    assert "longer than the model's context of 48 tokens" in results[0].error and results[0].requests == 0
    assert results[1].value is None and "cut off" in results[1].error
    assert batches == [[rooms[0]], [rooms[1]]]  # both attempts stopped where the context ends
    assert results[1].completion_tokens == sum(rooms)


def test_usage_counts_the_generations_run(tiny: Callable[..., str]) -> None:
    n = len(ANSWER_TOKENS)
    j = hf(tiny("gemma", "answer"), max_new_tokens=n, batch_size=4)
    two_users = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    results = j.judge([ask(0), ask(1, max_tokens=16), ask(2, messages=two_users)])
    assert [r.requests for r in results] == [2, 1, 0]  # cut and asked again; answered; template failed
    assert [r.ok for r in results] == [True, True, False]
    assert j.usage.requests == 3 and j.usage_dict()["requests"] == 3
    assert j.usage.completion_tokens == (n + n + 1) + (n + 1)


# -- failures of a batch and of the model ----------------------------------------------------

def test_a_batch_out_of_memory_is_run_again_row_by_row(tiny: Callable[..., str]) -> None:
    import torch

    j = hf(tiny("chatml", "answer"), batch_size=4)
    generate = j._generate
    bad = j._encode(ask(2).messages)
    sizes: list[int] = []

    def faulty(jobs: Any) -> list[Completion]:  # a batch too large for the memory; one row too large alone
        sizes.append(len(jobs))
        if len(jobs) > 1:
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        if jobs[0].ids == bad and jobs[0].tally.task == "bad":
            raise torch.OutOfMemoryError("CUDA out of memory for one row (injected)")
        return generate(jobs)

    j._generate = faulty  # type: ignore[method-assign]
    requests = [ask(0), ask(1), JudgeRequest(ask(2).messages, schema=SCHEMA, task="bad"), ask(3)]
    results = j.judge(requests)
    assert sizes == [4, 1, 1, 1, 1]
    assert [r.ok for r in results] == [True, True, False, True]
    assert "generation failed: OutOfMemoryError: CUDA out of memory for one row (injected)" in results[2].error
    assert [r.requests for r in results] == [2, 2, 2, 2] and j.usage.requests == 8


def test_any_other_failure_of_a_generation_is_a_bug_that_stops_the_run(tiny: Callable[..., str]) -> None:
    j = hf(tiny("chatml", "answer"), batch_size=4)
    generate = j._generate
    sizes: list[int] = []

    def faulty(jobs: Any) -> list[Completion]:
        sizes.append(len(jobs))
        if any(job.tally.task == "bad" for job in jobs):
            raise RuntimeError("selected index k out of range (injected)")
        return generate(jobs)

    j._generate = faulty  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="selected index k out of range") as info:
        j.judge([ask(0), JudgeRequest(ask(1).messages, schema=SCHEMA, task="bad")])
    assert info.traceback[-1].name == "faulty"  # its traceback, not "generation failed: ..."
    assert sizes == [2]  # not run again row by row: the same bug would fail every row


def test_log_probabilities_on_a_vocabulary_smaller_than_the_alternatives_asked(tiny: Callable[..., str]) -> None:
    """torch.topk raises for more alternatives than the logits hold: the judge asks for at most
    the vocabulary (15 words here)."""
    j = hf(tiny("chatml", "answer"))
    size = len(WORDS)
    [result] = j.judge([ask(0, logprobs=True, top_logprobs=size + 5)])
    assert result.ok and result.value == {"verdicts": ["yes", "no"]}
    assert result.logprobs is not None and len(result.logprobs) == len(ANSWER_TOKENS)
    for step, token in zip(result.logprobs, ANSWER_TOKENS, strict=True):
        assert step["token"] == token and len(step["top_logprobs"]) == size
        assert step["top_logprobs"][0]["token"] == token and step["logprob"] == step["top_logprobs"][0]["logprob"]


def test_sampling_at_a_temperature_runs(tiny: Callable[..., str]) -> None:
    j = hf(tiny("chatml", "answer"), temperature=0.7, batch_size=2)
    results = j.judge([ask(i) for i in range(2)])
    assert all(r.ok and r.value == {"verdicts": ["yes", "no"]} for r in results)  # a 36-logit margin
    assert j.settings(ask())["temperature"] == 0.7


def test_a_model_that_cannot_load_stops_the_run(tiny: Callable[..., str], tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "no-weights"
    shutil.copytree(tiny("chatml"), folder, ignore=shutil.ignore_patterns("*.safetensors", "config.json"))
    j = hf(str(folder))
    with pytest.raises(JudgeFatalError, match="cannot load the model .*no-weights"):
        j.judge([ask(i) for i in range(3)])
    assert j.usage.requests == 0


def test_bad_arguments_name_the_argument(tiny: Callable[..., str]) -> None:
    for kw, name in [({"batch_size": 0}, "batch_size"), ({"max_new_tokens": 0}, "max_new_tokens"),
                     ({"temperature": -1}, "temperature")]:
        with pytest.raises(ValueError, match=name):
            hf(tiny("chatml"), **kw)
    with pytest.raises(ValueError, match="nothing is downloaded"):
        hf("not-a-model/on-disk")


def test_the_pipeline_property_wraps_the_loaded_model(tiny: Callable[..., str]) -> None:
    j = hf(tiny("none", "answer"), max_new_tokens=16)
    assert j._prompt(ask().messages).endswith("\nuser: question 0\nassistant:")
    completion, _ = complete(j, ask())  # no chat template: the plain layout, still EOS-aware
    assert completion.finish_reason == "stop" and completion.text == GOOD
    assert j.pipeline.model is j.language_model and j.pipeline.tokenizer is j.tokenizer


# -- a random model, as before ---------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 2-layer GPT-2 with random weights and a word-level tokenizer, built from a config: no download."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-gpt2")
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    corpus = ['{ " verdicts " : [ " yes " , " no " ] }', "user : judge the answer assistant :"] * 5
    tok.train_from_iterator(corpus, trainers.WordLevelTrainer(special_tokens=["<unk>", "<eos>"]))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>", pad_token="<eos>")
    fast.save_pretrained(folder)
    config = GPT2Config(vocab_size=fast.vocab_size, n_positions=128, n_embd=16, n_layer=2, n_head=2,
                        eos_token_id=fast.eos_token_id, bos_token_id=fast.eos_token_id)
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(folder)
    return str(folder)


def test_hf_judge_runs_a_real_model_in_batches(tiny_model: str) -> None:
    j = hf(tiny_model, batch_size=4, max_new_tokens=8, max_parse_attempts=2)
    batches = record(j)
    results = j.judge([ask(i) for i in range(6)])
    # a random tiny model writes gibberish: cut off or unusable, every request fails with its reason
    assert all(r.value is None and ("cut off at" in r.error or "invalid answer after 2 attempts" in r.error)
               for r in results)
    assert max(len(b) for b in batches) == 4 and sum(len(b) for b in batches) == j.usage.requests
    assert j.usage.requests == sum(r.requests for r in results) >= 12
    assert j.usage.prompt_tokens > 0 and j.usage.completion_tokens > 0
    assert get_judge(f"hf:{tiny_model}", batch_size=2).model == tiny_model


def test_frequency_penalty_lowers_each_rows_own_repeats() -> None:
    import torch

    from textgen_metrics.judges.grammar import FrequencyPenalty

    prompt = [[7, 8], [7, 8]]  # width 2: what follows is generated
    written = torch.tensor([row + gen for row, gen in zip(prompt, ([3, 3, 1], [3, 4, 4]), strict=True)])
    scores = torch.zeros(2, 6)
    out = FrequencyPenalty({0: 0.5}, width=2)(written, scores.clone())
    assert out[0].tolist() == [0.0, -0.5, 0.0, -1.0, 0.0, 0.0]  # token 3 twice, token 1 once; the prompt not
    assert out[1].tolist() == [0.0] * 6  # a row that did not ask is left alone
    assert FrequencyPenalty({0: 0.5}, width=5)(written, scores.clone()).tolist() == scores.tolist()  # nothing yet


def test_a_request_with_a_frequency_penalty_gets_it_on_its_row_only(tiny: Callable[..., str]) -> None:
    from textgen_metrics.judges.grammar import FrequencyPenalty

    j = hf(tiny("chatml", "answer"), batch_size=4)
    model = j._load().model
    generate = model.generate
    seen: list[Any] = []

    def spy(*args: Any, **kw: Any) -> Any:
        seen.append([p for p in kw.get("logits_processor") or [] if isinstance(p, FrequencyPenalty)])
        return generate(*args, **kw)

    model.generate = spy
    results = j.judge([ask(0), ask(1, frequency_penalty=0.5), ask(2)])
    assert all(r.ok for r in results)
    assert len(seen) == 1 and len(seen[0]) == 1 and seen[0][0].penalties == {1: 0.5}
