"""Spectator views of a Rack-O game: every rack is shown (this is for debugging and
watching, not an agent's view; agents get :meth:`RackoCore.observe`)."""

from __future__ import annotations

import numpy as np

from deckgym.terminal import plural
from racko_env.tables import longest_run, r8_points

__all__ = ["ansi", "rgb_array"]


def _info(core, state, b: int) -> dict:
    d = core.state_dict(state, b)
    d["known"] = [set(k) for k in d["known_slots"]]
    return d


def _status(core, d: dict) -> str:
    """Whose move it is, or how the round ended (went out, R7; capped, R9)."""
    out = [p for p, rack in enumerate(d["racks"]) if core.rules.min_run_to_win <= 1 or
           int(longest_run(np.array(rack))) >= core.rules.min_run_to_win]
    out = [p for p in out if int(r8_points(np.array(d["racks"][p]))) == 50 and d["phase"] == "choose"]
    if out:
        return f"round over: P{out[0]} went out"
    if d["turn"] >= core.rules.max_turns and d["phase"] == "choose":
        return f"round over: capped at {core.rules.max_turns} turns (R9)"
    return f"P{d['player']} to play, phase {d['phase']}" + (f", holding {d['hand']}" if d["hand"] else "")


def ansi(core, state, b: int = 0) -> str:
    """Text picture of game ``b``: racks (slot 1 first; ``*`` = publicly known card), the
    piles, the card in hand, whose turn and phase, and the scores."""
    d = _info(core, state, b)
    rules = core.rules
    lines = [
        f"Rack-O  {rules.num_players} players, cards 1..{rules.deck_size}"
        + ("  partners 0&2 vs 1&3" if rules.partners else "")
        + f"   turn {d['turn']}/{rules.max_turns}   dealer P{d['dealer']}",
    ]
    for p, rack in enumerate(d["racks"]):
        cells = " ".join(f"{c:>3}{'*' if (i + 1) in d['known'][p] else ' '}" for i, c in enumerate(rack))
        mark = ">" if p == d["player"] and not _status(core, d).startswith("round over") else " "
        lines.append(f"{mark} P{p} [{cells}]  total {d['totals'][p]}")
    top = d["discard_pile"][-1] if d["discard_pile"] else None
    lines.append(
        f"  draw pile: {plural(len(d['draw_pile']), 'card')}"
        + (f" (top {d['draw_pile'][0]})" if d["draw_pile"] else "")
        + f"   discard pile: {plural(len(d['discard_pile']), 'card')} (top {top if top is not None else '-'})"
    )
    lines.append("  " + _status(core, d))
    return "\n".join(lines)


# -- picture ----------------------------------------------------------------------------------
_BG = (24, 96, 56)
_TEXT = (240, 240, 240)
_HILITE = (255, 215, 0)


def _card_colour(card: int, n: int) -> tuple[int, int, int]:
    """A colour ramp over the card values (blue → red), so order is visible at a glance."""
    t = (card - 1) / max(n - 1, 1)
    return (int(60 + 190 * t), int(90 + 80 * (1 - abs(2 * t - 1))), int(230 - 190 * t))


def rgb_array(core, state, b: int = 0) -> np.ndarray:
    """``(H, W, 3) uint8`` picture of game ``b``: one row per rack, each card a coloured
    tile labelled with its number and raised in proportion to its value (an increasing rack
    looks like a staircase), then the draw pile (face down) and the discard pile."""
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.load_default(size=16)
    except TypeError:  # Pillow < 10.1: fixed-size bitmap font
        font = ImageFont.load_default()

    d = _info(core, state, b)
    n = core.rules.deck_size
    P = core.num_players
    tile_w, gap, row_h, margin = 44, 6, 96, 16
    width = margin * 2 + 90 + 10 * (tile_w + gap)
    height = margin * 2 + P * (row_h + gap) + 130
    img = Image.new("RGB", (width, height), _BG)
    draw = ImageDraw.Draw(img)
    for p, rack in enumerate(d["racks"]):
        y0 = margin + p * (row_h + gap)
        label = f"P{p}" + (" >" if p == d["player"] else "")
        draw.text((margin, y0 + row_h // 2 - 18), label, fill=_HILITE if p == d["player"] else _TEXT, font=font)
        draw.text((margin, y0 + row_h // 2 + 2), f"{d['totals'][p]} pts", fill=_TEXT)
        for i, card in enumerate(rack):
            x0 = margin + 90 + i * (tile_w + gap)
            h = 24 + int((row_h - 28) * card / n)
            top = y0 + row_h - h
            outline = _HILITE if (i + 1) in d["known"][p] else (20, 20, 20)
            draw.rectangle([x0, top, x0 + tile_w, y0 + row_h], fill=_card_colour(card, n), outline=outline, width=2)
            draw.text((x0 + 6, top + 4), f"{card:>2}", fill=(0, 0, 0), font=font)
    y0 = margin + P * (row_h + gap) + 10
    # Draw pile (face down) with its size.
    x0 = margin + 90
    draw.rectangle([x0, y0, x0 + 70, y0 + 100], fill=(60, 60, 140), outline=(230, 230, 230), width=2)
    draw.text((x0 + 8, y0 + 40), f"draw\n{len(d['draw_pile'])}", fill=_TEXT)
    # Discard pile, top card face up.
    x1 = x0 + 100
    if d["discard_pile"]:
        top = d["discard_pile"][-1]
        draw.rectangle([x1, y0, x1 + 70, y0 + 100], fill=_card_colour(top, n), outline=(230, 230, 230), width=2)
        draw.text((x1 + 8, y0 + 8), f"{top}", fill=(0, 0, 0), font=font)
        draw.text((x1 + 8, y0 + 80), plural(len(d['discard_pile']), 'card'), fill=(0, 0, 0))
    else:
        draw.rectangle([x1, y0, x1 + 70, y0 + 100], outline=(230, 230, 230), width=2)
    x2 = x1 + 100
    status = f"turn {d['turn']}  " + _status(core, d)
    if d["hand"]:
        draw.rectangle([x2, y0 + 30, x2 + 50, y0 + 100], fill=_card_colour(d["hand"], n), outline=_HILITE, width=2)
        draw.text((x2 + 8, y0 + 36), f"{d['hand']}", fill=(0, 0, 0), font=font)
    draw.text((x2 + 70, y0 + 10), status, fill=_TEXT)
    return np.asarray(img, dtype=np.uint8)
