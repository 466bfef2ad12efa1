"""``deckgym play`` on a terminal that cannot print suit symbols falls back to letters."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from deckgym.evaluation.play import PlaySession

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LETTER_CARD = re.compile(r"\b(?:10|[2-9AJQK])[CDHS]\b")
SYMBOL_CARD = re.compile(r"(?:10|[2-9AJQK])[\u2663\u2666\u2665\u2660]")


def _play(encoding: str) -> str:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding=encoding, errors="strict")  # strict, as a real terminal
    moves = iter(["1", "1", "1", "1", "q"])
    PlaySession("leastscore", ["leastscore:greedy"], seed=3, input_fn=lambda _: next(moves), output=out).run()
    out.flush()
    return raw.getvalue().decode(encoding)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "cp1252"])
def test_cards_are_letters_where_suits_cannot_be_printed(encoding):
    text = _play(encoding)
    assert LETTER_CARD.search(text) and not SYMBOL_CARD.search(text)


def test_cards_keep_their_suit_symbols_on_a_utf8_terminal():
    text = _play("utf-8")
    assert SYMBOL_CARD.search(text) and not LETTER_CARD.search(text)


def test_the_cli_plays_on_an_ascii_terminal():
    env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONIOENCODING": "ascii"}
    r = subprocess.run([sys.executable, "-m", "deckgym", "play", "leastscore", "--seed", "3"], input="1\n1\nq\n",
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, encoding="ascii")
    assert r.returncode == 0, r.stderr
    assert LETTER_CARD.search(r.stdout) and "Your hand:" in r.stdout
