"""Every metric card's "Agreement with people" section equals a fresh computation from the
bundled sets (``python tools/cards.py --check``): no card figure can drift from the
code or the data."""

from __future__ import annotations

import difflib
import os
import re
import sys

import pytest

from textgen_metrics.registry import METRICS

ROOT = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import cards  # noqa: E402  (tools/cards.py: the cards' generator is a tool of the repository)


@pytest.fixture(scope="module")
def results():
    return cards.compute()


def test_every_card_section_equals_a_fresh_computation(results):
    sections = cards.card_sections(results, list(METRICS))
    stale, diffs = [], []
    for name, section in sections.items():
        with open(os.path.join(ROOT, "metrics", name, "README.md"), encoding="utf-8") as f:
            text = f.read()
        assert text.count(cards.START) == 1 and text.count(cards.END) == 1, name
        shown = cards.card_section(text)
        if cards.section_differs(name, shown, section):
            stale.append(name)
            diffs += difflib.unified_diff(shown.splitlines(), section.splitlines(), name, "fresh", lineterm="", n=0)
    assert not stale, (f"cards differ from a fresh computation (run python tools/cards.py): {stale}\n"
                       + "\n".join(diffs[:40]))
    # the lexical sections carry figures with intervals, the LLM-guided ones say nothing was measured
    for name in cards.LEXICAL:
        assert re.search(r"\| -?\w[\w.]* \| -?\d\.\d+ \[-?\d", sections[name]), name
    assert "Not measured yet with a real judge" in sections["faithfulness"]


def test_a_float_kernel_figure_holds_within_its_stated_units_and_no_further():
    """BERTScore's figures (torch's float kernels) may move in their last printed digit from CPU to
    CPU (0.0662 on one, 0.0661 on another): held within FLOAT_KERNEL_UNITS units of that digit, and
    nothing else; every other card to the character."""
    units = cards.FLOAT_KERNEL_UNITS
    shown = "| bertscore.f1 | 0.117 [0.011, 0.12], rank 2 | 529 segments |"
    assert not cards.section_differs("bertscore", shown, shown.replace("0.117", f"0.{117 + units}"))
    assert not cards.section_differs("bertscore", shown, shown.replace("0.12]", "0.11]"))
    assert cards.section_differs("bertscore", shown, shown.replace("0.117", f"0.{117 + units + 1}"))
    assert cards.section_differs("bertscore", shown, shown.replace("0.117", "0.217"))
    assert cards.section_differs("bertscore", shown, shown.replace("rank 2", "rank 1"))
    assert cards.section_differs("bertscore", shown, shown.replace("529", "528"))
    assert cards.section_differs("bertscore", shown, shown.replace("segments", "systems"))
    assert cards.section_differs("bleu", shown, shown.replace("0.117", "0.118"))
    assert not cards.section_differs("bleu", shown, shown)


def test_the_check_mode_reports_a_card_whose_figure_was_edited(tmp_path, results):
    for name in METRICS:
        os.makedirs(tmp_path / "metrics" / name)
        with open(os.path.join(ROOT, "metrics", name, "README.md"), encoding="utf-8") as f:
            text = f.read()
        if name == "faithfulness":
            text = text.replace("Not measured yet", "Measured")
        (tmp_path / "metrics" / name / "README.md").write_text(text, encoding="utf-8")
    assert cards.update_cards(str(tmp_path), check=True, results=results) == ["faithfulness"]
    assert cards.update_cards(str(tmp_path), results=results) == ["faithfulness"]
    assert cards.update_cards(str(tmp_path), check=True, results=results) == []
