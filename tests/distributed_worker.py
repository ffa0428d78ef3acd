"""One process of evaluate's multi-process protocol: ``python distributed_worker.py NUM_PROCESS
PROCESS_ID CACHE_DIR OUT``. Each process adds its share of the examples of every module with
add and add_batch, then computes; process 0 gathers every share and writes the results to OUT as JSON."""

import json
import os
import sys

import evaluate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PREDICTIONS = ["the cat sat on the mat .", "a dog ran in the park", "hello world", "good morning to you",
               "the quick brown fox jumps", "", "Paris is the capital of France .", "it rained all day"]
REFERENCES = [["the cat is on the mat .", "a cat sat on a mat"], "the dog ran in a park", "hello there world",
              ["good evening", "morning to you all"], "a quick brown fox jumped", "nothing", "Paris is in France .",
              "rain fell the whole day"]
CONTEXTS = [["Paris is the capital of France.", "Cats sit on mats."]] * len(PREDICTIONS)


def judge(messages, task):
    """A scripted judge, answering by each request's task id: the claims are the first words;
    the verdicts alternate yes and no."""
    text = messages[1]["content"]
    if task == "faithfulness/claims":
        data = text.split(">>>\n", 1)[1].split("\n<<<END", 1)[0]
        return json.dumps({"claims": [s for s in data.split(" ") if s.strip(" .")][:3]})
    claims = text.split("<<<DATA claims ", 1)[1].split("\n<<<END", 1)[0].splitlines()[1:]
    return json.dumps({"verdicts": [{"index": i, "reason": "r", "verdict": "yes" if i % 2 else "no"}
                                    for i in range(1, len(claims) + 1)]})


MODULES = {
    "rouge": ({}, ("predictions", "references")),
    "bleu": ({}, ("predictions", "references")),
    "google_bleu": ({}, ("predictions", "references")),
    "meteor": ({}, ("predictions", "references")),
    "bertscore": ({}, ("predictions", "references")),
    "faithfulness": ({"judge": judge}, ("predictions", "contexts")),
}
ONE = {"predictions": "prediction", "references": "reference"}  # evaluate's names in add()
COLUMNS = {"predictions": PREDICTIONS, "references": REFERENCES, "contexts": CONTEXTS}


def main():
    num_process, process_id, cache_dir, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    results = {}
    for name, (load_kwargs, columns) in MODULES.items():
        metric = evaluate.load(os.path.join(ROOT, "metrics", name), num_process=num_process,
                               process_id=process_id, experiment_id=f"test-{name}", cache_dir=cache_dir,
                               **load_kwargs)
        n = len(PREDICTIONS)
        share = range(process_id * n // num_process, (process_id + 1) * n // num_process)
        for i in share:  # add and add_batch in turn, one example each: the gathered order must hold
            if i % 2:
                metric.add(**{ONE.get(c, c): COLUMNS[c][i] for c in columns})
            else:
                metric.add_batch(**{c: [COLUMNS[c][i]] for c in columns})
        result = metric.compute()
        if process_id == 0:
            result.pop("judge_usage", None)  # the requests of each process are its own
            results[name] = result
        else:
            assert result is None, result
    if process_id == 0:
        with open(out, "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
