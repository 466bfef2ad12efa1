"""Rendering of one Least Score game: text (``ansi``) and an image (``rgb_array``).

Renders show the whole table (every hand face up): they are for humans watching a game,
not observations.
"""

from __future__ import annotations

import numpy as np

from deckgym.terminal import plural
from leastscore_env.cards import NUM_CARDS, RANK_NAMES, SUIT_SYMBOLS

__all__ = ["ansi", "rgb_array"]


def _cards_of_word(word) -> list[int]:
    return [int(c) for c in np.array([word], dtype=np.int64).view(np.uint8) if c < NUM_CARDS]


def _sym(c: int) -> str:
    return RANK_NAMES[c >> 2] + SUIT_SYMBOLS[c & 3]


def _table(core, state, b: int) -> dict:
    P = core.num_players
    alive = core.alive(state)[b]
    totals = core.hand_totals(state.take(slice(b, b + 1)))[0]
    return {
        "hands": [_cards_of_word(state.hands[b, p]) for p in range(P)],
        "totals": [int(t) for t in totals],
        "alive": [bool(a) for a in alive],
        "floor": _cards_of_word(state.floor[b]),
        "discard": _cards_of_word(state.pending[b]),
        "deck": NUM_CARDS - int(state.top[b]),
        "dead": bin(int(state.dead[b])).count("1"),
        "scores": [int(x) for x in state.scores[b]],
        "player": int(state.player[b]),
        "phase": core.phase_names[int(state.phase[b])],
        "turn": int(state.turn[b]),
        "round": int(state.round[b]),
        "over": bool(state.over[b]),
    }


def _declarer(core, t: dict) -> int | None:
    """Who declared, on a round that ended before the cap (L7): the player to move stays the declarer."""
    return t["player"] if t["over"] and t["turn"] < core.rules.max_turns else None


def _over(core, t: dict) -> str:
    d = _declarer(core, t)
    return f"over: player_{d} declared" if d is not None else f"over: capped at {core.rules.max_turns} turns (L10)"


def ansi(core, state, b: int = 0) -> str:
    """A text picture of game ``b``: hands (suit symbols), floor, deck size, scores, turn."""
    t = _table(core, state, b)
    lines = [
        f"Least Score  round {t['round']}  turn {t['turn']}  "
        + (f"({_over(core, t)})" if t["over"] else f"player_{t['player']} to {t['phase']}"),
        f"floor: {' '.join(_sym(c) for c in t['floor']) or '-'}"
        + (f"   just discarded: {' '.join(_sym(c) for c in t['discard'])}" if t["discard"] else ""),
        f"deck: {plural(t['deck'], 'card')}   dead pile: {plural(t['dead'], 'card')}",
    ]
    for p, hand in enumerate(t["hands"]):
        mark = "D" if p == _declarer(core, t) else ">" if p == t["player"] and not t["over"] else " "
        if not t["alive"][p]:
            lines.append(f"{mark} player_{p}: eliminated   score {t['scores'][p]}")
            continue
        cards = " ".join(f"{_sym(c):>3}" for c in hand)
        lines.append(f"{mark} player_{p}: {cards:<20} total {t['totals'][p]:>2}   score {t['scores'][p]}")
    return "\n".join(lines)


_CARD_W, _CARD_H, _GAP = 44, 62, 6
_RED, _BLACK = (200, 30, 30), (20, 20, 20)


def _draw_card(draw, x: int, y: int, c: int) -> None:
    draw.rounded_rectangle([x, y, x + _CARD_W, y + _CARD_H], radius=6, fill=(255, 255, 255), outline=(60, 60, 60))
    color = _RED if (c & 3) in (1, 2) else _BLACK
    draw.text((x + 5, y + 4), RANK_NAMES[c >> 2], fill=color)
    draw.text((x + 5, y + 18), "CDHS"[c & 3], fill=color)
    # a simple suit pip in the middle: a filled shape per suit
    cx, cy = x + _CARD_W // 2 + 6, y + _CARD_H // 2 + 8
    s = c & 3
    if s == 1:  # diamond
        draw.polygon([(cx, cy - 9), (cx + 7, cy), (cx, cy + 9), (cx - 7, cy)], fill=color)
    elif s == 2:  # heart
        draw.ellipse([cx - 8, cy - 7, cx, cy + 1], fill=color)
        draw.ellipse([cx, cy - 7, cx + 8, cy + 1], fill=color)
        draw.polygon([(cx - 8, cy - 2), (cx + 8, cy - 2), (cx, cy + 9)], fill=color)
    elif s == 3:  # spade
        draw.polygon([(cx, cy - 9), (cx + 8, cy + 2), (cx - 8, cy + 2)], fill=color)
        draw.ellipse([cx - 8, cy - 2, cx, cy + 6], fill=color)
        draw.ellipse([cx, cy - 2, cx + 8, cy + 6], fill=color)
        draw.rectangle([cx - 1, cy + 4, cx + 1, cy + 10], fill=color)
    else:  # club
        draw.ellipse([cx - 4, cy - 9, cx + 4, cy - 1], fill=color)
        draw.ellipse([cx - 9, cy - 3, cx - 1, cy + 5], fill=color)
        draw.ellipse([cx + 1, cy - 3, cx + 9, cy + 5], fill=color)
        draw.rectangle([cx - 1, cy + 2, cx + 1, cy + 10], fill=color)


def rgb_array(core, state, b: int = 0) -> np.ndarray:
    """An (H, W, 3) uint8 picture of game ``b``: every hand drawn as cards, the floor, scores."""
    from PIL import Image, ImageDraw

    t = _table(core, state, b)
    P = core.num_players
    label_w = 150
    row_h = _CARD_H + 2 * _GAP
    W = label_w + 5 * (_CARD_W + _GAP) + 2 * _GAP + 5 * (_CARD_W + _GAP) + 40
    H = (P + 1) * row_h + 30
    img = Image.new("RGB", (W, H), (20, 100, 50))
    draw = ImageDraw.Draw(img)
    title = f"round {t['round']}  turn {t['turn']}  " + (_over(core, t) if t["over"] else f"player_{t['player']}: {t['phase']}")
    draw.text((_GAP, _GAP), title, fill=(255, 255, 255))
    y = 30
    draw.text((_GAP, y + _GAP), f"floor\ndeck {t['deck']}\ndead {t['dead']}", fill=(255, 255, 255))
    for i, c in enumerate(t["floor"]):
        _draw_card(draw, label_w + i * (_CARD_W + _GAP), y + _GAP, c)
    if t["discard"]:
        x0 = label_w + 5 * (_CARD_W + _GAP) + 2 * _GAP
        draw.text((x0, y), "discarded", fill=(255, 255, 255))
        for i, c in enumerate(t["discard"]):
            _draw_card(draw, x0 + i * (_CARD_W + _GAP), y + _GAP + 8, c)
    for p in range(P):
        y = 30 + (p + 1) * row_h
        mark = "> " if p == t["player"] and not t["over"] else "  "
        status = f"total {t['totals'][p]}" if t["alive"][p] else "eliminated"
        draw.text((_GAP, y + _GAP), f"{mark}player_{p}\n  {status}\n  score {t['scores'][p]}", fill=(255, 255, 255))
        for i, c in enumerate(t["hands"][p]):
            _draw_card(draw, label_w + i * (_CARD_W + _GAP), y + _GAP, c)
    return np.asarray(img, dtype=np.uint8).copy()
