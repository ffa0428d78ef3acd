"""BERTScore parity with bert_score 0.3.13 on the packaged all-MiniLM-L6-v2 (same model, same
layer), per example |diff| <= 1e-5 for P, R and F, over generated pairs that include empty
texts and texts longer than the model's 512 tokens."""

import pytest

from bert_score_reference import reference_score
from corpus import multi_references, pairs
from textgen_metrics.semantic.bertscore import bertscore, default_model_path

TOL = 1e-5


def close(ours, theirs):
    for key, ref in zip(("precision", "recall", "f1"), theirs, strict=True):
        assert len(ours[key]) == len(ref)
        worst = max(abs(a - b) for a, b in zip(ours[key], ref, strict=True))
        assert worst <= TOL, (key, worst)


def long_pairs():
    long_text = " ".join(f"word{i % 97} token{i}" for i in range(700))  # > 512 word pieces
    return [(long_text, long_text[:3000]), ("", "a reference"), ("a prediction", ""), ("", "")]


@pytest.mark.parametrize("idf", [False, True])
def test_single_reference_parity(idf):
    data = pairs(220, seed=41 + idf) + long_pairs()
    preds, refs = [p for p, _ in data], [r for _, r in data]
    ours = bertscore(preds, refs, idf=idf)  # batches of 64, the default
    # bert_score's scores do not depend on its batch size (padding is masked); it pads each batch
    # to its longest sentence, and took 19 s of CPU here in batches of 64, 8 s in batches of 16
    theirs = reference_score(preds, refs, model_type=default_model_path(), num_layers=6, idf=idf, batch_size=16)
    close(ours, theirs)


def test_multiple_references_parity_and_elementwise_maximum():
    data = multi_references(120, seed=43)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    ours = bertscore(preds, refs, idf=True, batch_size=32)
    theirs = reference_score(preds, refs, model_type=default_model_path(), num_layers=6, idf=True, batch_size=32)
    close(ours, theirs)


def test_other_layer_and_hashcode():
    data = pairs(60, seed=44)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    ours = bertscore(preds, refs, num_layers=3)
    close(ours, reference_score(preds, refs, model_type=default_model_path(), num_layers=3, batch_size=64))
    assert ours["hashcode"].startswith("all-MiniLM-L6-v2_L3_no-idf_version=0.3.13(hug_trans=")
    assert "_idf_" in bertscore(["a"], ["a"], idf=True)["hashcode"]


def test_baseline_rescaling_uses_the_file(tmp_path):
    path = tmp_path / "baseline.tsv"
    path.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.5,0.25,0.4\n" for i in range(7)))
    raw = bertscore(["the cat sat"], ["a cat sat"])
    res = bertscore(["the cat sat"], ["a cat sat"], rescale_with_baseline=True, baseline_path=str(path))
    assert res["precision"][0] == pytest.approx((raw["precision"][0] - 0.5) / 0.5, abs=1e-6)
    assert res["recall"][0] == pytest.approx((raw["recall"][0] - 0.25) / 0.75, abs=1e-6)
    assert res["hashcode"].endswith("-custom-rescaled_textgen-metrics=" + res["hashcode"].rsplit("=", 1)[1])


def test_offline_errors_are_clear():
    with pytest.raises(ValueError, match="model_type: 'nobody/no-such-model' is neither a local folder"):
        bertscore(["a"], ["a"], model_type="nobody/no-such-model")
    with pytest.raises(ValueError, match="num_layers: 9 must be between 0 and 6"):
        bertscore(["a"], ["a"], num_layers=9)
    with pytest.raises(ValueError, match="lang: rescale_with_baseline needs lang"):
        bertscore(["a"], ["a"], rescale_with_baseline=True)
    with pytest.raises(ValueError, match="half precision is for a GPU"):
        bertscore(["a"], ["a"], half=True, device="cpu")
    with pytest.raises(TypeError, match=r"predictions\[0\]: expected str"):
        bertscore([None], ["a"])


def test_streams_chunks_with_the_same_numbers(monkeypatch):
    from textgen_metrics.semantic.bertscore import BertScorer

    data = pairs(90, seed=45)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    whole = bertscore(preds, refs, batch_size=8)
    monkeypatch.setattr(BertScorer, "EMBED_BUDGET", 384 * 100)  # MiniLM: 100 tokens, a few sentences
    embedded = []
    real_embed = BertScorer.embed
    monkeypatch.setattr(BertScorer, "embed", lambda self, s: embedded.append(len(s)) or real_embed(self, s))
    from textgen_metrics.semantic import bertscore as module

    module._SCORERS.clear()
    chunked = bertscore(preds, refs, batch_size=8)
    assert len(embedded) > 5 and max(embedded) <= 16  # a chunk per batch of 8 pairs at most
    for k in ("precision", "recall", "f1"):
        assert max(abs(a - b) for a, b in zip(whole[k], chunked[k], strict=True)) <= 1e-6


def test_embedding_batches_bound_size_tokens_and_padding():
    from textgen_metrics.semantic.bertscore import _SCORERS

    bertscore(["a"], ["a"], batch_size=64)
    scorer = next(s for s in _SCORERS.values() if s.batch_size == 64)
    texts = [t for p in pairs(300, seed=47) for t in p] + [long_pairs()[0][0]]
    unique = sorted(set(texts), key=lambda s: len(scorer.encode(s)), reverse=True)
    batches = list(scorer._batches(unique))
    assert [s for b in batches for s in b] == unique  # every sentence once, in order
    width = [len(scorer.encode(b[0])) for b in batches]
    assert width[0] == 512  # the long text, truncated
    cut_by_tokens = 0
    for k, batch in enumerate(batches):
        assert len(batch) <= 64
        assert len(batch) == 1 or len(batch) * width[k] <= scorer.CPU_BATCH_TOKENS
        assert len(scorer.encode(batch[-1])) >= 0.75 * width[k]  # padding wastes at most a quarter
        if k + 1 < len(batches) and len(batch) < 64 and width[k + 1] >= 0.75 * width[k]:
            cut_by_tokens += 1
    assert cut_by_tokens >= 3


@pytest.mark.parametrize("idf", [False, True])
def test_all_layers_parity_and_layout(idf):
    """Hugging Face's all_layers: every hidden state of the whole model (embeddings first), each
    value a list over them of per-example scores, as bert_score returns them."""
    data = pairs(40, seed=48) + long_pairs()
    preds, refs = [p for p, _ in data], [r for _, r in data]
    ours = bertscore(preds, refs, all_layers=True, idf=idf, batch_size=16)
    theirs = reference_score(preds, refs, model_type=default_model_path(), num_layers=6, all_layers=True,
                             idf=idf, batch_size=16)
    for key, ref in zip(("precision", "recall", "f1"), theirs, strict=True):
        assert len(ours[key]) == len(ref) == 7 and all(len(layer) == len(data) for layer in ours[key])
        worst = max(abs(a - b) for mine, their in zip(ours[key], ref, strict=True)
                    for a, b in zip(mine, their, strict=True))
        assert worst <= TOL, (key, worst)
    last = bertscore(preds, refs, idf=idf, batch_size=16)
    assert max(abs(a - b) for a, b in zip(ours["f1"][6], last["f1"], strict=True)) <= 1e-6
    means = bertscore(preds, refs, all_layers=True, idf=idf, batch_size=16, use_aggregator=True)
    assert len(means["f1"]) == 7 and means["f1"][6] == pytest.approx(sum(last["f1"]) / len(data), abs=1e-6)


def test_all_layers_with_several_references_takes_the_maximum_per_layer():
    preds = ["the cat sat on the mat", "a dog barked"]
    refs = [["a cat was on a mat", "dogs bark"], ["the dog barked loudly"]]
    both = bertscore(preds, refs, all_layers=True)
    for key in ("precision", "recall", "f1"):
        for layer in range(7):
            singles = [bertscore([preds[0]], [r], all_layers=True)[key][layer][0] for r in refs[0]]
            assert both[key][layer][0] == pytest.approx(max(singles), abs=1e-6)


def test_verbose_prints_bert_scores_status_and_a_bar(capsys):
    res = bertscore(["the cat sat"], ["a cat sat"], verbose=True)
    out, err = capsys.readouterr()
    assert "calculating scores..." in out and "done in" in out and "sentences/sec" in out
    assert "1/1" in err
    assert res == bertscore(["the cat sat"], ["a cat sat"])


def test_nthreads_is_accepted_and_changes_nothing():
    data = pairs(20, seed=49)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    assert bertscore(preds, refs, idf=True, nthreads=8) == bertscore(preds, refs, idf=True, nthreads=0)


def test_a_language_other_than_english_needs_a_model():
    for lang in ("de", "zh", "FR"):
        with pytest.raises(ValueError, match=rf"lang: '{lang.lower()}' needs a model for that language.*"
                                             r"pass model_type= a multilingual model"):
            bertscore(["Guten Tag"], ["Guten Tag"], lang=lang)
    with pytest.raises(ValueError, match="bert-base-multilingual-cased"):
        bertscore(["Guten Tag"], ["Guten Tag"], lang="de")
    assert bertscore(["a"], ["a"], lang="EN")["f1"] == bertscore(["a"], ["a"])["f1"]
    # with a model given, lang only picks the baseline
    res = bertscore(["Guten Tag"], ["Guten Tag"], lang="de", model_type=default_model_path())
    assert res["f1"][0] == pytest.approx(1.0, abs=1e-6)


def test_hugging_face_arguments_pass_through_evaluate(repo_root):
    import evaluate

    module = evaluate.load("./metrics/bertscore")
    res = module.compute(predictions=["the cat sat"], references=["a cat sat"], verbose=False, nthreads=4,
                         all_layers=True, lang="en")
    assert len(res["f1"]) == 7
    with pytest.raises(ValueError, match="lang: 'de' needs a model"):
        module.compute(predictions=["a"], references=["a"], lang="de")
