"""Every metric card's "Agreement with people" section equals a fresh computation from the
bundled sets (``python -m textgen_metrics.meta.cards --check``): no card figure can drift from the
code or the data."""

from __future__ import annotations

import difflib
import os
import re

import pytest

from textgen_metrics.meta import cards
from textgen_metrics.registry import METRICS

ROOT = os.path.join(os.path.dirname(__file__), "..")


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
        if section not in text:
            stale.append(name)
            shown = text[text.index(cards.START):text.index(cards.END) + len(cards.END)]
            diffs += difflib.unified_diff(shown.splitlines(), section.splitlines(), name, "fresh", lineterm="", n=0)
    assert not stale, (f"cards differ from a fresh computation (run python -m textgen_metrics.meta.cards): {stale}\n"
                       + "\n".join(diffs[:40]))
    # the lexical sections carry figures with intervals, the LLM-guided ones say nothing was measured
    for name in cards.LEXICAL:
        assert re.search(r"\| -?\w[\w.]* \| -?\d\.\d+ \[-?\d", sections[name]), name
    assert "Not measured yet with a real judge" in sections["faithfulness"]


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
