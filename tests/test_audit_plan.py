"""What to audit as one value (``textgen_metrics.audits.AuditPlan``): a plan and the keywords of
before give the same audit, every plan field is a keyword of ``audit``, the command line builds
its plan from its flags, a plan and one of its fields in one call are refused; and
``textgen_metrics.audit`` is the function whatever was imported first (the package is ``audits``,
a plain package)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import types

import pytest

import textgen_metrics
from test_audit_probes import ROWS, Planted
from textgen_metrics import cli
from textgen_metrics.audits import AuditPlan
from textgen_metrics.audits import run as audit_run
from textgen_metrics.audits.plan import PLAN_FIELDS
from textgen_metrics.judges import CallableJudge

RAW = ROWS[:12]
OFFLINE = {"base_url": "http://127.0.0.1:9/v1", "api_key": "k"}  # a dry run sends nothing: no server


def _judge():
    return CallableJudge(Planted(position=0.3, noise=0.05))


def test_a_plan_and_the_keywords_of_before_give_the_same_audit():
    keywords = {"metrics": "pairwise_preference", "probes": "position,repeat", "repeats": 2, "human_column": "gold",
                "threshold": 0.4, "n_resamples": 50, "seed": 3}
    plan = AuditPlan(**keywords)
    by_keywords = textgen_metrics.audit(RAW, judge=_judge(), **keywords)
    assert by_keywords["settings"]["threshold"] == 0.4 and by_keywords["settings"]["n_resamples"] == 50
    assert set(by_keywords["probes"]) == {"position", "repeat"}
    assert textgen_metrics.audit(RAW, plan=plan, judge=_judge()) == by_keywords
    assert textgen_metrics.audit(RAW, plan, judge=_judge()) == by_keywords
    assert textgen_metrics.audit(dataclasses.replace(plan, source=RAW), judge=_judge()) == by_keywords
    # another seed in the plan is another audit: the plan's fields are used, not the defaults
    reseeded = textgen_metrics.audit(RAW, dataclasses.replace(plan, seed=4), judge=_judge())
    assert reseeded["settings"]["seed"] == 4 and reseeded["probes"] != by_keywords["probes"]


def test_every_plan_field_is_a_keyword_of_audit_with_the_plan_s_default():
    """The plan's fields are audit's keywords (one declaration, no second list of defaults):
    each field given by name gives the plan's dry run; audit's own parameters are the rows,
    the plan and what the call decides (the judge, its options, dry_run)."""
    params = inspect.signature(textgen_metrics.audit).parameters
    assert list(params) == ["source", "plan", "judge", "judge_options", "dry_run", "declared"]
    plan = AuditPlan(metrics="pairwise_preference", source=RAW, probes=("position", "repeat", "verbosity"),
                     repeats=4, seed=None)
    by_plan = textgen_metrics.audit(plan, judge="openai:gpt-4o-mini", judge_options=OFFLINE, dry_run=True)
    fields = {name: getattr(plan, name) for name in PLAN_FIELDS}
    assert textgen_metrics.audit(judge="openai:gpt-4o-mini", judge_options=OFFLINE, dry_run=True, **fields) == by_plan
    assert by_plan["total"]["requests"] == len(RAW) * 2 * (1 + 1 + 3)  # plain, padded, 3 repeats; 2 orders each
    assert AuditPlan(probes=["position"], annotator_columns=["x", "y"]) == AuditPlan(probes=("position",),
                                                                                      annotator_columns=("x", "y"))


@pytest.mark.parametrize("call, error, message", [
    (lambda plan: textgen_metrics.audit(RAW, plan, judge="openai:m", repeats=5), TypeError,
     "'repeats' is the plan's"),
    (lambda plan: textgen_metrics.audit(plan, plan=plan, judge="openai:m"), TypeError, "give the plan once"),
    (lambda plan: textgen_metrics.audit(RAW, judge="openai:m", metric="pairwise_preference"), TypeError,
     "unexpected keyword argument 'metric'"),
    (lambda plan: textgen_metrics.audit(RAW, judge="openai:m"), ValueError, "metrics: name the LLM-guided metric"),
    (lambda plan: textgen_metrics.audit(dataclasses.replace(plan, repeats=1), RAW, judge="openai:m"), TypeError,
     "give the plan once"),
    (lambda plan: textgen_metrics.audit(RAW, dataclasses.replace(plan, repeats=1), judge="openai:m"), ValueError,
     "repeats: 1 must be an integer of at least 2"),
    (lambda plan: textgen_metrics.audit(RAW, dataclasses.replace(plan, missing="drop"), judge="openai:m"),
     ValueError, "missing: 'drop' is not one of"),
])
def test_a_plan_that_cannot_run_as_given_is_refused_naming_the_field(call, error, message):
    plan = AuditPlan(metrics="pairwise_preference")
    with pytest.raises(error, match=message):
        call(plan)


def test_the_command_line_builds_its_plan_from_its_flags(monkeypatch, tmp_path, capsys):
    rows = tmp_path / "pairs.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in RAW), encoding="utf-8")
    calls = []

    def recorded(plan, **call):
        calls.append((plan, call))
        return {"dry_run": True, "metrics": {}, "total": {}, "notes": []}

    monkeypatch.setattr(audit_run, "audit", recorded)
    from textgen_metrics import cost

    monkeypatch.setattr(cost, "format_estimate", lambda result: "estimate")
    status = cli.main(["audit", str(rows), "--metrics", "pairwise_preference", "--judge", "openai:m",
                       "--judge-url", "http://127.0.0.1:9/v1", "--judge-option", "api_key=k",
                       "--column", "baselines=baseline", "--option", "pairwise_preference.criteria=brevity",
                       "--probe", "position,repeat", "--repeats", "4", "--threshold", "0.7", "--human-column", "gold",
                       "--missing", "as_verdict", "--annotator-column", "x", "--annotator-column", "y",
                       "--epsilon", "0.1", "--confidence-level", "0.9", "--n-resamples", "200", "--seed", "7",
                       "--dry-run"])
    assert status == 0 and capsys.readouterr().out.strip() == "estimate"
    [(plan, call)] = calls
    assert plan == AuditPlan(metrics="pairwise_preference", source=str(rows), columns={"baselines": "baseline"},
                             options={"pairwise_preference": {"criteria": "brevity"}}, probes=("position", "repeat"),
                             repeats=4, threshold=0.7, human_column="gold", missing="as_verdict",
                             annotator_columns=("x", "y"), epsilon=0.1, confidence_level=0.9, n_resamples=200, seed=7)
    assert call["dry_run"] is True and call["judge"] == "openai:m"
    assert call["judge_options"]["base_url"] == "http://127.0.0.1:9/v1"


def test_textgen_metrics_audit_is_the_function_whatever_was_imported_first():
    """The command line imports the audit package first; ``textgen_metrics.audit`` is the
    function all the same, and the package is a plain module (no class swapped in)."""
    import textgen_metrics.audits.cli  # noqa: F401  (what the command line imports)
    from textgen_metrics import audit

    assert inspect.isfunction(audit) and audit is audit_run.audit is textgen_metrics.audit
    assert type(textgen_metrics.audits) is types.ModuleType
    assert textgen_metrics.AuditPlan is AuditPlan
