"""textgen_metrics.ray on a real Ray cluster on loopback: a head and a second node (two raylets,
one CPU each, so that two actors run on two nodes), started and stopped by this module. Results
are compared with the library on one machine over the same rows: the lexical metrics (corpus
scores from merged statistics, intervals), BERTScore, two LLM-guided metrics whose judge is a
loopback OpenAI-compatible server; per-row score columns; a worker killed mid-run."""

import os
import random
from pathlib import Path

import pytest

import textgen_metrics
from chat_server import ChatServer
from scaleout_judge import (
    Jitter,
    KillAfter,
    KillOnce,
    Recording,
    SlowOn,
    StepsPerProcess,
    assert_limits_shared,
    assert_resumed_from_the_cache,
    columns,
    random_table,
    respond,
    rows,
)
from textgen_metrics.errors import InputError, InputTypeError
from textgen_metrics.registry import get_metric

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

LEXICAL = ["rouge", "bleu", "google_bleu", "chrf", "ter", "meteor", "bertscore"]
OPTIONS = {"rouge": {"use_stemmer": True, "confidence_level": 0.9, "n_resamples": 200},
           "bleu": {"confidence_level": 0.95, "n_resamples": 200, "seed": 7},
           "chrf": {"word_order": 2}, "ter": {"confidence_level": 0.95, "n_resamples": 100}}


@pytest.fixture(scope="module")
def cluster():
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every node on 127.0.0.1
    # the workers import this worktree's package and the stand-in judges of this folder
    os.environ["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE), os.environ.get("PYTHONPATH", "")])
    import ray
    from ray.cluster_utils import Cluster

    store = 200 * 2**20
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": store,
                                                      "include_dashboard": False})
    c.add_node(num_cpus=1, object_store_memory=store)
    ray.init(address=c.address, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture(scope="module")
def server():
    with ChatServer(respond) as srv:
        yield srv


def library(name, data, **options):
    spec = get_metric(name)
    given = {c: v for c, v in columns(data).items() if c in (*spec.columns, *spec.optional_columns)}
    return getattr(textgen_metrics, name)(**given, **options)


def test_two_nodes_on_loopback(cluster):
    nodes = [n for n in cluster.nodes() if n["Alive"]]
    assert len(nodes) == 2
    assert {n["NodeManagerAddress"] for n in nodes} == {"127.0.0.1"}


def test_evaluate_lexical_and_bertscore_equal_the_library(cluster):
    from textgen_metrics import ray as tgm_ray

    data = rows(90, seed=1)
    ds = cluster.data.from_items(data, override_num_blocks=5)
    got = tgm_ray.evaluate(ds, LEXICAL, options=OPTIONS, concurrency=2, batch_size=11)
    for name in LEXICAL:
        assert got[name] == library(name, data, **OPTIONS.get(name, {})), name
    assert "bs:200|seed:7" in got["bleu"]["signature"] and len(got["bleu"]["bleu_ci"]) == 2


def test_evaluate_judged_metrics_equal_the_library_with_each_request_sent_once(cluster, server):
    from textgen_metrics import ray as tgm_ray

    data = rows(30, seed=2)
    judge_options = {"base_url": server.url, "api_key": "k"}
    options = {"faithfulness": {"return_details": True},
               "answer_relevance": {"confidence_level": 0.9, "n_resamples": 100}}
    expected = {name: library(name, data, judge="openai:judge-1", judge_options=judge_options, **options[name])
                for name in options}
    sent = server.count
    ds = cluster.data.from_items(data, override_num_blocks=4)
    got = tgm_ray.evaluate(ds, list(options), options=options, judge="openai:judge-1",
                           judge_options=judge_options, concurrency=2, batch_size=8)
    assert got == expected
    requests = sum(r["judge_usage"]["requests"] for r in expected.values())
    # two requests per example and metric, each sent once: none twice, none lost
    assert server.count - sent == requests == 4 * len(data)
    assert 0 < got["faithfulness"]["faithfulness"] < 1


def test_score_adds_each_rows_scores(cluster, server):
    from textgen_metrics import ray as tgm_ray

    data = [dict(r, output=r.pop("prediction")) for r in rows(25, seed=3)]
    ds = cluster.data.from_items(data, override_num_blocks=3)
    judge_options = {"base_url": server.url, "api_key": "k"}
    metrics = ["rouge", "bleu", "faithfulness"]
    scored = tgm_ray.score(ds, metrics, columns={"predictions": "output"}, judge="openai:judge-1",
                           judge_options=judge_options, concurrency=2).take_all()
    assert sorted(r["id"] for r in scored) == list(range(25))
    by_id = {r["id"]: r for r in scored}
    same = [dict(r, prediction=r["output"]) for r in data]
    for name, key in [("rouge", "rougeL"), ("rouge", "rouge2"), ("bleu", "bleu"), ("faithfulness", "faithfulness")]:
        extra = {"judge": "openai:judge-1", "judge_options": judge_options} if name == "faithfulness" else {}
        per_example = library(name, same, use_aggregator=False, **extra)[key]
        assert [by_id[i][f"{name}.{key}"] for i in range(25)] == per_example, (name, key)


@pytest.mark.parametrize("batch_format", ["default", "pandas"])
@pytest.mark.parametrize("same_count", [False, True])
def test_scorer_in_map_batches_as_ray_users_write_it(cluster, batch_format, same_count):
    """The SPEC's ``ds.map_batches(Scorer, fn_constructor_kwargs=...)``: with Ray Data's default
    batches (a dict of NumPy arrays; references of one length per row come as a 2-D array, of
    several lengths as an array of arrays) and with pandas batches."""
    from textgen_metrics.ray import Scorer

    data = rows(12, seed=4)
    if same_count:
        for r in data:
            r["references"] = (r["references"] * 2)[:2]
    ds = cluster.data.from_items(data, override_num_blocks=2)
    fmt = {} if batch_format == "default" else {"batch_format": "pandas"}
    out = ds.map_batches(Scorer, fn_constructor_kwargs={"metrics": ["chrf", "bleu"],
                                                        "options": {"chrf": {"word_order": 2}}},
                         compute=cluster.data.ActorPoolStrategy(size=1), **fmt).take_all()
    by_id = {r["id"]: r for r in out}
    assert [by_id[i]["chrf.score"] for i in range(12)] == library("chrf", data, word_order=2,
                                                                  use_aggregator=False)["score"]
    assert [by_id[i]["bleu.bleu"] for i in range(12)] == library("bleu", data, use_aggregator=False)["bleu"]
    assert [list(by_id[i]["references"]) for i in range(12)] == [r["references"] for r in data]


def test_the_result_keeps_the_datasets_order_when_a_late_batch_finishes_first(cluster):
    from textgen_metrics import ray as tgm_ray

    data = rows(24, seed=6)
    for r in data[:8]:  # the first batch's rows are slow to judge: the other batches finish before it
        r["prediction"] = "wait " + r["prediction"]
    options = {"faithfulness": {"use_aggregator": False}}
    ds = cluster.data.from_items(data, override_num_blocks=3)
    got = tgm_ray.evaluate(ds, ["faithfulness"], options=options, judge=SlowOn("wait", 0.15), concurrency=2,
                           batch_size=8)
    expected = library("faithfulness", data, judge=SlowOn("wait", 0), **options["faithfulness"])
    assert got["faithfulness"] == expected


@pytest.mark.parametrize("compute", ["tasks", "actors"])
def test_a_worker_killed_mid_run_changes_nothing(cluster, tmp_path, compute):
    """A task's worker process killed: Ray Data runs the task again; an actor killed: Ray
    restarts it and retries its batch. Either way each batch's statistics arrive once."""
    from textgen_metrics import ray as tgm_ray

    data = rows(40, seed=5)
    marker = tmp_path / "killed"
    expected = {name: library(name, data, judge=KillOnce()) for name in ("faithfulness", "answer_relevance")}
    expected["bleu"] = library("bleu", data)
    ds = cluster.data.from_items(data, override_num_blocks=4)
    got = tgm_ray.evaluate(ds, ["bleu", "faithfulness", "answer_relevance"], judge=KillOnce(str(marker)),
                           concurrency=2, batch_size=10, compute=compute)
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker process died
    assert got == expected


def test_bad_column_and_option_fail_before_any_work(cluster):
    from textgen_metrics import ray as tgm_ray

    ds = cluster.data.from_items(rows(3), override_num_blocks=1).materialize()
    with pytest.raises(ValueError, match=r"no column 'answer' for rouge's predictions"):
        tgm_ray.evaluate(ds, ["rouge"], columns={"predictions": "answer"})
    with pytest.raises(ValueError, match="n_gram"):
        tgm_ray.evaluate(ds, ["rouge"], options={"rouge": {"n_gram": 3}})
    with pytest.raises(ValueError, match=r"compute: 'threads' is not one of \['auto', 'tasks', 'actors'\]"):
        tgm_ray.evaluate(ds, ["rouge"], compute="threads")
    with pytest.raises(ValueError, match="concurrency: 0 must be a positive integer"):
        tgm_ray.score(ds, ["rouge"], concurrency=0)


def test_a_cluster_judge_with_a_shared_cache_serves_every_actor_and_a_rerun_sends_nothing(cluster, server,
                                                                                          tmp_path):
    from textgen_metrics import ray as tgm_ray
    from textgen_metrics.judges import OpenAIJudge, cluster_judge

    data = rows(16, seed=7)
    judge_options = {"base_url": server.url, "api_key": "k"}
    expected = library("faithfulness", data, judge="openai:judge-1", judge_options=judge_options)
    ds = cluster.data.from_items(data, override_num_blocks=4)
    judge = OpenAIJudge("judge-1", **judge_options, requests_per_minute=6000, concurrency=4)
    with cluster_judge(judge, on="ray", cache=f"dir:{tmp_path / 'cache'}") as shared:
        sent = server.count
        first = tgm_ray.evaluate(ds, ["faithfulness"], judge=shared, concurrency=2, batch_size=4)["faithfulness"]
        assert server.count - sent == 2 * len(data)
        again = tgm_ray.evaluate(ds, ["faithfulness"], judge=shared, concurrency=2, batch_size=4)["faithfulness"]
        assert server.count - sent == 2 * len(data)  # every answer from the shared folder
    assert first == expected
    assert again["judge_usage"]["cached"] == 2 * len(data)
    assert {k: v for k, v in again.items() if k != "judge_usage"} == {
        k: v for k, v in expected.items() if k != "judge_usage"}


def test_the_judges_limits_hold_for_all_actors_together(cluster):
    """A judge's ``concurrency`` and ``requests_per_minute`` are the cluster's by default (one
    named actor hands them out); ``share_budget=False`` gives each actor its own."""
    from textgen_metrics import ray as tgm_ray

    data = rows(20, seed=6)
    ds = cluster.data.from_items(data, override_num_blocks=4).materialize()
    assert_limits_shared(
        lambda judge_options, share: tgm_ray.evaluate(ds, ["faithfulness"], judge="openai:judge-1",
                                                      judge_options=judge_options, concurrency=2, batch_size=5,
                                                      share_budget=share)["faithfulness"],
        lambda judge_options: library("faithfulness", data, judge="openai:judge-1", judge_options=judge_options),
        len(data))


@pytest.mark.parametrize("compute", ["tasks", "actors"])
def test_a_worker_killed_after_some_answers_resends_only_what_was_never_validated(cluster, tmp_path, compute):
    """With a judge cache every worker shares, the retried batch of a killed worker reads the
    answers validated before the kill: no validated answer is asked again, none is lost, and the
    result equals the library's."""
    from textgen_metrics import ray as tgm_ray

    data = rows(24, seed=8)
    marker, log = tmp_path / "killed", tmp_path / "answered"
    judge_options = {"cache": f"dir:{tmp_path / 'cache'}", "concurrency": 1}
    got = tgm_ray.evaluate(cluster.data.from_items(data, override_num_blocks=4), ["faithfulness"],
                           judge=KillAfter(str(marker), str(log), after=5), judge_options=judge_options,
                           concurrency=2, batch_size=6, share_budget=False, compute=compute)["faithfulness"]
    assert_resumed_from_the_cache(got, library("faithfulness", data, judge=KillAfter()), marker, log, len(data))


def test_tasks_keep_each_worker_processs_metrics_between_calls_and_actors_start_anew(cluster, tmp_path):
    """``compute="tasks"`` (the default for a plan without a model): Ray's worker processes run
    the batches and keep the plan's metrics (its judge) from one call to the next, so a second
    call starts nothing; ``compute="actors"``: each call starts its own actors, which end with it."""
    from textgen_metrics import ray as tgm_ray

    data = rows(16, seed=9)
    expected = library("faithfulness", data, judge=Recording())
    ds = cluster.data.from_items(data, override_num_blocks=4).materialize()
    log = tmp_path / "answered"  # the same judge (the same plan) in every call

    def answered_by(compute):
        seen = len(log.read_text().splitlines()) if log.exists() else 0
        got = tgm_ray.evaluate(ds, ["faithfulness"], judge=Recording(str(log)), concurrency=2, batch_size=4,
                               share_budget=False, compute=compute)
        assert got["faithfulness"] == expected
        return {tuple(line.split()) for line in log.read_text().splitlines()[seen:]}

    first, second = answered_by("auto"), answered_by("tasks")
    processes = {pid for pid, _ in first | second}
    assert {pid for pid, _ in second} <= {pid for pid, _ in first}  # the same worker processes again
    assert len(first | second) == len(processes)  # one judge object per process, kept between the calls
    third, fourth = answered_by("actors"), answered_by("actors")
    assert not {pid for pid, _ in third} & {pid for pid, _ in fourth}  # each call its own actors
    assert not {pid for pid, _ in third} & processes


def test_g_eval_steps_are_written_once_by_the_driver_for_every_batch(cluster):
    """A judge that writes other steps in every process: the driver asks for G-Eval's steps once
    and every batch is scored by them, as in the library's one run (whose usage counts the
    steps request); the per-row scores too."""
    from textgen_metrics import ray as tgm_ray

    data = [dict(r, references=r["references"][0]) for r in rows(24, seed=8)]  # G-Eval: one reference text
    options = {"g_eval": {"criteria": "Fluency: the text reads well."}}
    expected = library("g_eval", data, judge=StepsPerProcess(), **options["g_eval"])
    ds = cluster.data.from_items(data, override_num_blocks=3)
    got = tgm_ray.evaluate(ds, ["g_eval"], options=options, judge=StepsPerProcess(), concurrency=2, batch_size=4)
    assert got == {"g_eval": expected}
    assert f"process {os.getpid()}, steps 1" in got["g_eval"]["evaluation_steps"][0]  # the driver's
    assert got["g_eval"]["judge_usage"]["requests"] == len(data) + 1
    scored = tgm_ray.score(ds, ["g_eval"], options=options, judge=StepsPerProcess(), concurrency=2,
                           batch_size=4).take_all()
    per_row = library("g_eval", data, judge=StepsPerProcess(), use_aggregator=False, **options["g_eval"])
    assert [r["g_eval.g_eval"] for r in sorted(scored, key=lambda r: r["id"])] == per_row["g_eval"]


def test_a_bad_value_is_named_by_its_row_in_the_dataset_and_stops_the_batches_after_it(cluster, server):
    """The library's error for the same rows (argument, index in the whole Dataset), raised by
    the driver; batches after the bad one are not sent."""
    from textgen_metrics import ray as tgm_ray

    data = rows(60, seed=9)
    data[37]["prediction"] = None
    judge_options = {"base_url": server.url, "api_key": "k"}
    with pytest.raises(InputError) as alone:
        library("faithfulness", data, judge="openai:judge-1", judge_options=judge_options)
    ds = cluster.data.from_items(data, override_num_blocks=6)
    sent = server.count
    with pytest.raises(InputError) as got:
        tgm_ray.evaluate(ds, ["faithfulness"], judge="openai:judge-1", judge_options=judge_options, concurrency=2,
                         batch_size=5)
    assert type(got.value) is type(alone.value) is InputTypeError
    assert (got.value.argument, got.value.index) == ("predictions", 37)
    assert str(got.value) == str(alone.value) == "predictions[37]: expected str, got None"
    # batches 0-6 and at most the one sent beside the bad batch 7 (two at a time): 8 of 12 batches
    assert server.count - sent <= 2 * 8 * 5


def test_the_tasks_batches_are_cut_from_the_blocks_rows_in_order():
    """``batch_size`` rows a task, joined across blocks and cut within them; None: a block each."""
    from textgen_metrics.ray import _batches

    runs = [("a", 0, 5), ("b", 0, 3), ("c", 2, 9)]
    assert list(_batches(iter(runs), 4)) == [(["a"], [(0, 4)]), (["a", "b"], [(4, 5), (0, 3)]),
                                             (["c"], [(2, 6)]), (["c"], [(6, 9)])]
    assert list(_batches(iter(runs), None)) == [(["a"], [(0, 5)]), (["b"], [(0, 3)]), (["c"], [(2, 9)])]


def test_random_tables_partitionings_and_arrival_orders_equal_the_library(cluster):
    """Three random tables (1 to 5 references a row: TER's fractional sums), each in a random
    number of blocks cut into batches of a random size, judged by a judge that answers after a
    random wait, so that the batches finish in an order of their own: every metric's result
    dict equals the library's over the table, with ``==``."""
    from textgen_metrics import ray as tgm_ray

    rng = random.Random(4949)
    metrics = [m for m in LEXICAL if m != "bertscore"] + ["faithfulness"]
    options = {**OPTIONS, "faithfulness": {"use_aggregator": False}}
    judge = Jitter(0.01)
    for _ in range(3):
        data = random_table(rng)
        ds = cluster.data.from_items(data, override_num_blocks=rng.randint(1, 6))
        got = tgm_ray.evaluate(ds, metrics, options=options, judge=judge, concurrency=2,
                               batch_size=rng.choice([None, rng.randint(1, 20)]))
        for name in metrics:
            extra = {"judge": Jitter(0)} if name == "faithfulness" else {}
            assert got[name] == library(name, data, **options.get(name, {}), **extra), name
