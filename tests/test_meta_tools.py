"""The generators are tools of the repository, not of the library: tools/cards.py writes the
metric cards' "Agreement with people" sections and tools/reproduce.py prints the published
tables (tests/test_meta_reproduce.py holds their figures); the library ships neither, and every
card's generated section names the command that writes it, a command that runs."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import cards  # noqa: E402  (tools/cards.py)


def test_the_library_ships_no_generator():
    for name in ("cards", "reproduce"):
        assert importlib.util.find_spec(f"textgen_metrics.meta.{name}") is None, name
        assert (ROOT / "tools" / f"{name}.py").is_file(), name


def test_every_card_names_the_command_that_writes_its_section_and_the_command_runs(capsys):
    marked = [card for card in sorted(ROOT.glob("metrics/*/README.md"))
              if "agreement-with-people: generated" in card.read_text(encoding="utf-8")]
    assert len(marked) >= 19
    for card in marked:
        text = card.read_text(encoding="utf-8")
        assert text.count(cards.START) == 1 and f"`{cards.COMMAND}`" in cards.START, card
        assert "textgen_metrics.meta.cards" not in text, card
    script, *_ = cards.COMMAND.removeprefix("python ").split()
    assert (ROOT / script).is_file()
    with pytest.raises(SystemExit) as done:
        cards.main(["--help"])
    assert done.value.code == 0 and f"usage: {cards.COMMAND}" in capsys.readouterr().out
