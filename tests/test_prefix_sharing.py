"""HFJudge computes a prompt prefix shared by the rows of a batch once (judges/prefix.py): the
plan, the layout, and the answers, which must be the tokens the plain left-padded batch writes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from textgen_metrics.judges import HFJudge
from textgen_metrics.judges import prefix as prefix_module
from textgen_metrics.judges.prefix import PrefixPlan, common_prefix, plan


def rows_with(prefixes: dict[str, list[int]], spec: list[tuple[str, int]], seed: int = 0) -> list[list[int]]:
    """Rows made of a named shared prefix and ``n`` tokens of their own."""
    rng = random.Random(seed)
    return [prefixes[name] + [rng.randrange(100, 200) for _ in range(n)] for name, n in spec]


PREFIXES = {"a": list(range(1, 81)), "b": list(range(1, 21)) + list(range(300, 400))}  # 20 tokens in common


def test_rows_sharing_a_long_prefix_are_grouped_and_the_plan_saves_work() -> None:
    rows = rows_with(PREFIXES, [("a", 5), ("b", 30), ("a", 12), ("b", 3), ("a", 9)])
    p = plan(rows)
    assert p is not None
    assert p.group_of == (0, 1, 0, 1, 0)  # a 20-token prefix of both is below MIN_PREFIX: two groups
    assert p.lengths == (80, 120)
    assert p.prefix_width == 120 and p.suffix_width == 30
    assert p.cost() == 2 * 120 + 5 * 30 < 0.9 * len(rows) * max(map(len, rows))


def test_the_layout_keeps_every_real_token_in_order_and_aligns_the_answers() -> None:
    rows = rows_with(PREFIXES, [("a", 5), ("b", 30), ("a", 12), ("b", 3)])
    p = plan(rows)
    assert p is not None
    ids, mask = p.layout(rows, pad=0)
    width = p.prefix_width + p.suffix_width
    assert all(len(r) == width and len(m) == width for r, m in zip(ids, mask, strict=True))
    for row, laid, m in zip(rows, ids, mask, strict=True):
        assert [t for t, keep in zip(laid, m, strict=True) if keep] == row
        assert m[-1] == 1  # every row ends at the last column: generation starts together
        shared = p.lengths[p.group_of[rows.index(row)]]
        assert m[p.prefix_width - shared:p.prefix_width] == [1] * shared  # the prefix ends at the same column


@pytest.mark.parametrize("rows", [
    [[1, 2, 3, 4]],  # one row
    [list(range(50)) + [7], list(range(50)) + [8]][:1],
    [[5] * 10 + [1], [5] * 10 + [2]],  # a shared prefix below MIN_PREFIX
    [[9] + list(range(60)), [8] + list(range(60))],  # nothing shared
])
def test_no_plan_where_sharing_cannot_pay(rows: list[list[int]]) -> None:
    assert plan(rows) is None


def test_a_plan_always_leaves_each_row_a_token_to_feed() -> None:
    same = list(range(1, 60))
    p = plan([same, same, same + [5]])
    assert p is not None
    assert all(p.lengths[g] <= len(r) - 1 for r, g in zip([same, same, same + [5]], p.group_of, strict=True))


def test_the_cheapest_grouping_is_chosen() -> None:
    """Two long prefixes that share a medium one: two groups beat one group of the medium prefix."""
    rng = random.Random(1)
    common = list(range(1, 41))
    a, b = common + list(range(500, 800)), common + list(range(900, 1200))
    rows = [(a if i % 2 else b) + [rng.randrange(100, 200) for _ in range(10)] for i in range(8)]
    p = plan(rows)
    assert p is not None and len(p.lengths) == 2
    one_group = PrefixPlan((40,), (0,), (0,) * 8, 40, max(len(r) for r in rows) - 40)
    assert p.cost() < one_group.cost()
    assert common_prefix(a, b) == 40


# -- the answers: the same tokens as the plain batch ------------------------------------------

def _tokenizer(folder: Path, words: list[str]) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<unk>", "<eos>"] + words)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>",
                            pad_token="<eos>").save_pretrained(folder)


WORDS = [f"w{i}" for i in range(60)]


def _model(kind: str, folder: Path, window: int = 24) -> str:
    """A random model with real attention over a 62-word vocabulary, built from a config."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig, LlamaConfig, LlamaForCausalLM

    _tokenizer(folder, WORDS)
    size = len(WORDS) + 2
    torch.manual_seed(7)
    model: Any
    if kind == "llama":
        model = LlamaForCausalLM(LlamaConfig(vocab_size=size, hidden_size=32, intermediate_size=64,
                                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                             max_position_embeddings=512, eos_token_id=1, pad_token_id=1))
    else:  # Gemma 3: sliding-window layers (a window shorter than the prompts) beside global ones
        model = Gemma3ForCausalLM(Gemma3TextConfig(vocab_size=size, hidden_size=32, intermediate_size=64,
                                                   num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                                                   head_dim=8, sliding_window=window, max_position_embeddings=512,
                                                   layer_types=["sliding_attention", "sliding_attention",
                                                                "full_attention"],
                                                   eos_token_id=1, pad_token_id=1, bos_token_id=1))
    model.save_pretrained(folder)
    return str(folder)


def _prompts(seed: int) -> list[list[dict[str, str]]]:
    rng = random.Random(seed)
    fixed = [" ".join(rng.choice(WORDS) for _ in range(n)) for n in (45, 70)]
    return [[{"role": "user", "content": fixed[i % 2] + " " + " ".join(rng.choice(WORDS)
                                                                       for _ in range(rng.randrange(3, 25)))}]
            for i in range(7)] + [[{"role": "user", "content": " ".join(rng.choice(WORDS) for _ in range(30))}]]


@pytest.mark.parametrize(("kind", "window", "shares"), [
    ("llama", 0, True),
    ("gemma3", 256, True),  # prompts and answers fit in the window: shared
    ("gemma3", 24, False),  # a window shorter than the rows: the padding would take its columns
])
def test_shared_prefixes_write_the_tokens_of_the_plain_batch(kind: str, window: int, shares: bool, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from textgen_metrics.judges.local import _Job

    folder = _model(kind, tmp_path, window)
    calls: list[PrefixPlan] = []
    real_prefill = prefix_module.prefill

    def spy(model: Any, the_plan: PrefixPlan, *args: Any) -> Any:
        calls.append(the_plan)
        return real_prefill(model, the_plan, *args)

    monkeypatch.setattr(prefix_module, "prefill", spy)
    answers = {}
    for share in (True, False):
        judge = HFJudge(folder, structured="none", share_prefix=share, batch_size=8)
        jobs = [_Job(ids=judge._encode(m), budget=12, tally=None, future=None)  # type: ignore[arg-type]
                for m in _prompts(3)]
        answers[share] = [(c.text, c.completion_tokens, c.finish_reason) for c in judge._generate(jobs)]
        if share:
            alone = [judge._generate([job])[0] for job in jobs[:3]]  # a batch of one: the plain path
    if shares:
        assert len(calls) == 1 and len(calls[0].lengths) == 3  # two shared prefixes and the loner
    else:
        assert calls == []
    assert answers[True] == answers[False]
    assert [(c.text, c.completion_tokens, c.finish_reason) for c in alone] == answers[True][:3]
    assert len({a[0] for a in answers[True]}) > 1  # the rows answer differently: a real comparison


def test_dtype_loads_the_weights_in_it_and_keys_the_cache(tmp_path: Path) -> None:
    import torch

    from textgen_metrics.judges import JudgeRequest

    folder = _model("llama", tmp_path)
    request = JudgeRequest([{"role": "user", "content": "w1 w2 w3"}], task="t")
    auto, bf16 = HFJudge(folder, structured="none"), HFJudge(folder, structured="none", dtype="bfloat16")
    assert auto.language_model.dtype == torch.float32 and bf16.language_model.dtype == torch.bfloat16
    assert "dtype" not in auto.settings(request) and bf16.settings(request)["dtype"] == "bfloat16"
    from textgen_metrics.judges.local import _Job

    job = _Job(ids=bf16._encode(request.messages), budget=4, tally=None, future=None)  # type: ignore[arg-type]
    assert bf16._generate([job])[0].completion_tokens >= 1
    with pytest.raises(ValueError, match="dtype: 'bf16' is not one of"):
        HFJudge(folder, dtype="bf16")
