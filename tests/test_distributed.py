"""evaluate's own multi-process protocol (num_process, process_id, a shared cache_dir): two real
processes give the same results as one."""

import json
import os
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).with_name("distributed_worker.py")


def run_workers(num_process, tmp_path):
    cache, out = tmp_path / f"cache{num_process}", tmp_path / f"out{num_process}.json"
    procs = [subprocess.Popen([sys.executable, str(WORKER), str(num_process), str(pid), str(cache), str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
             for pid in range(num_process)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
    return json.loads(out.read_text())


def test_two_processes_give_the_same_results_as_one(tmp_path):
    one = run_workers(1, tmp_path)
    two = run_workers(2, tmp_path)
    assert set(one) == {"rouge", "bleu", "google_bleu", "meteor", "bertscore", "faithfulness"}
    assert two == one
    assert len(two["bertscore"]["f1"]) == 8 and two["faithfulness"]["errors"] == []
    assert 0 < two["rouge"]["rouge1"] < 1
