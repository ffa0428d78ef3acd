"""Fresh-process timing: each repetition of each contender runs in a new Python process, as a
user meets the library (imports, first-use costs such as building memos or reading WordNet),
after one tiny warm-up call of the same side (so the interpreter's imports are not what is
measured). Inputs are written once to a JSON file that every child reads before timing.

Child: ``python benchmarks/fresh.py SIDE INPUTS.json OUT.json`` prints nothing; it writes
``{"seconds": ..., "cpu_seconds": ..., "result": ...}`` to OUT.json (wall time, and the process's
CPU time: on a machine shared with other work the CPU time is the steadier of the two).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROUGE_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]

Prepared = tuple[Callable[[], Any], Callable[[], Any]]  # (timed call, warm-up call)


# -- sides -------------------------------------------------------------------------------------

def _rouge_ours(data: dict[str, Any], threads: int | None) -> Prepared:
    import textgen_metrics

    types = data.get("types", ROUGE_TYPES)
    preds, refs = data["preds"], data["refs"]

    def run() -> Any:
        out = textgen_metrics.rouge(preds, refs, rouge_types=types, use_stemmer=True, use_aggregator=False,
                                    num_threads=threads)
        return [out[t] for t in types]

    return run, lambda: textgen_metrics.rouge(["a b"], ["a c"], rouge_types=types, use_stemmer=True)


def _rouge_score(data: dict[str, Any]) -> Prepared:
    from rouge_score import rouge_scorer

    types = data.get("types", ROUGE_TYPES)
    holder: dict[str, Any] = {}

    def warm() -> None:
        holder["s"] = rouge_scorer.RougeScorer(types, use_stemmer=True)
        holder["s"].score("a b", "a c")

    def run() -> Any:
        s = holder["s"]
        scores = [s.score(r, p) for p, r in zip(data["preds"], data["refs"], strict=True)]
        return [[x[t].fmeasure for x in scores] for t in types]

    return run, warm


def _rouge_score_rs(data: dict[str, Any]) -> Prepared:
    from rouge_score_rs import RougeScorer

    types = data.get("types", ROUGE_TYPES)
    holder: dict[str, Any] = {}

    def warm() -> None:
        holder["s"] = RougeScorer(types, use_stemmer=True)
        holder["s"].score_batch(["a b"], ["a c"])

    def run() -> Any:
        scores = holder["s"].score_batch(data["refs"], data["preds"])
        return [[x[t].fmeasure for x in scores] for t in types]

    return run, warm


def _bleu_ours(data: dict[str, Any], threads: int | None) -> Prepared:
    import textgen_metrics

    refs = [[r] for r in data["refs"]]
    return (lambda: textgen_metrics.bleu(data["preds"], refs, num_threads=threads)["bleu"],
            lambda: textgen_metrics.bleu(["a b c d"], [["a b c d"]]))


def _bleu_sacrebleu(data: dict[str, Any]) -> Prepared:
    import sacrebleu

    return (lambda: sacrebleu.corpus_bleu(data["preds"], [data["refs"]], tokenize="13a",
                                          smooth_method="none").score / 100,
            lambda: sacrebleu.corpus_bleu(["a b c d"], [["a b c d"]]))


def _bleu_bleuscore(data: dict[str, Any]) -> Prepared:
    import bleuscore

    refs = [[r] for r in data["refs"]]
    return (lambda: bleuscore.compute(refs, data["preds"], max_order=4, smooth=False,
                                      ref_len_method="sacrebleu")["bleu"],
            lambda: bleuscore.compute([["a b c d"]], ["a b c d"]))


def _gleu_ours(data: dict[str, Any], threads: int | None) -> Prepared:
    import textgen_metrics

    refs = [[r] for r in data["refs"]]
    return (lambda: textgen_metrics.google_bleu(data["preds"], refs, num_threads=threads)["google_bleu"],
            lambda: textgen_metrics.google_bleu(["a b c d"], [["a b c d"]]))


def _gleu_nltk(data: dict[str, Any]) -> Prepared:
    from nltk.translate.gleu_score import corpus_gleu
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    def run() -> float:
        t = Tokenizer13a()  # as Hugging Face's google_bleu: 13a tokens, then nltk
        return corpus_gleu([[t(r.rstrip()).split()] for r in data["refs"]],
                           [t(p.rstrip()).split() for p in data["preds"]])

    return run, lambda: corpus_gleu([[["a", "b"]]], [["a", "b"]])


def _meteor_ours(data: dict[str, Any], threads: int | None) -> Prepared:
    import textgen_metrics

    return (lambda: textgen_metrics.meteor(data["preds"], data["refs"], use_aggregator=False,
                                           num_threads=threads)["meteor"],
            lambda: textgen_metrics.meteor(["a dog ran"], ["a hound ran"]))


def _meteor_nltk(data: dict[str, Any]) -> Prepared:
    from nltk.tokenize import word_tokenize
    from nltk.translate.meteor_score import meteor_score

    from textgen_metrics.wordnet import load_wordnet

    holder: dict[str, Any] = {}

    def warm() -> None:
        holder["wn"] = load_wordnet()
        meteor_score([["a", "hound", "ran"]], ["a", "dog", "ran"], wordnet=holder["wn"])

    def run() -> Any:
        wn = holder["wn"]
        return [meteor_score([word_tokenize(r, preserve_line=True)], word_tokenize(p, preserve_line=True), wordnet=wn)
                for p, r in zip(data["preds"], data["refs"], strict=True)]

    return run, warm


def _rouge_one(data: dict[str, Any]) -> Prepared:
    """One long pair, one rouge type (rougeW, rougeS...)."""
    from textgen_metrics.lexical.rouge import RougeScorer

    scorer = RougeScorer([data["type"]], use_stemmer=True)
    return (lambda: list(scorer.score(data["refs"][0], data["preds"][0])[data["type"]]),
            lambda: scorer.score("a b", "a c"))


SIDES: dict[str, Callable[[dict[str, Any]], Prepared]] = {
    "rouge:ours": lambda d: _rouge_ours(d, 1),
    "rouge:ours_all_cores": lambda d: _rouge_ours(d, None),
    "rouge:rouge_score": _rouge_score,
    "rouge:rouge_score_rs": _rouge_score_rs,
    "rouge:one": _rouge_one,
    "bleu:ours": lambda d: _bleu_ours(d, 1),
    "bleu:ours_all_cores": lambda d: _bleu_ours(d, None),
    "bleu:sacrebleu": _bleu_sacrebleu,
    "bleu:bleuscore": _bleu_bleuscore,
    "gleu:ours": lambda d: _gleu_ours(d, 1),
    "gleu:ours_all_cores": lambda d: _gleu_ours(d, None),
    "gleu:nltk": _gleu_nltk,
    "meteor:ours": lambda d: _meteor_ours(d, 1),
    "meteor:ours_all_cores": lambda d: _meteor_ours(d, None),
    "meteor:nltk": _meteor_nltk,
}


def child(side: str, inputs: str, out: str) -> None:
    warnings.simplefilter("ignore")
    sys.path.insert(0, os.path.join(ROOT, "tests"))  # transformers shims etc. are not needed here
    with open(inputs, encoding="utf-8") as f:
        data = json.load(f)
    run, warm = SIDES[side](data)
    warm()
    cpu = time.process_time()
    start = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"seconds": seconds, "cpu_seconds": cpu, "result": result}, f)


# -- parent ------------------------------------------------------------------------------------

class Inputs:
    """Inputs written once to a temporary JSON file for the children."""

    def __init__(self, data: dict[str, Any]) -> None:
        fd, self.path = tempfile.mkstemp(prefix="tgm-bench-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)

    def close(self) -> None:
        if os.path.exists(self.path):
            os.remove(self.path)

    def __enter__(self) -> Inputs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_fresh(side: str, inputs: Inputs, env: dict[str, str] | None = None) -> dict[str, Any]:
    """One fresh process running ``side`` on ``inputs`` after its warm-up call: ``seconds``
    (wall), ``cpu_seconds`` and ``result``."""
    fd, out = tempfile.mkstemp(prefix="tgm-bench-out-", suffix=".json")
    os.close(fd)
    try:
        full_env = dict(os.environ)
        full_env.update(env or {})
        subprocess.run([sys.executable, os.path.abspath(__file__), side, inputs.path, out], check=True,
                       env=full_env)
        with open(out, encoding="utf-8") as f:
            got: dict[str, Any] = json.load(f)
    finally:
        os.remove(out)
    return got


def timed_fresh(side: str, inputs: Inputs, reps: int = 3, env: dict[str, str] | None = None,
                cpu: bool = False) -> tuple[float, Any]:
    """Median seconds (wall, or CPU with ``cpu=True``) over ``reps`` fresh processes, and the
    result of the last one."""
    times = []
    result = None
    for _ in range(reps):
        got = run_fresh(side, inputs, env)
        times.append(got["cpu_seconds"] if cpu else got["seconds"])
        result = got["result"]
    return statistics.median(times), result


def process_seconds(code: str, reps: int = 5) -> float:
    """Median wall time of ``python -c code`` (a whole fresh process)."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2], sys.argv[3])
