"""Twenty-One drawn for a spectator: every hand in text, or one bar per seat in a picture."""

from __future__ import annotations

from typing import Any

import numpy as np


def ansi(core: Any, state: Any, b: int = 0) -> str:
    d = core.state_dict(state, b)
    lines = [f"Twenty-One, turn {d['turn'] + 1}, player_{d['player']} to move, {len(d['deck'])} cards left"]
    for p, hand in enumerate(d["hands"]):
        mark = " (stood)" if d["stood"][p] else ""
        lines.append(f"  player_{p}: {' '.join(map(str, hand))} = {d['totals'][p]}{mark}, wins {d['wins'][p]}")
    return "\n".join(lines)


def rgb_array(core: Any, state: Any, b: int = 0) -> np.ndarray:
    d = core.state_dict(state, b)
    img = np.full((60, 20 * core.num_players, 3), 255, np.uint8)
    for p, total in enumerate(d["totals"]):
        img[60 - min(total, 30) * 2:, 20 * p + 4:20 * p + 16] = (200, 40, 40) if total > core.rules.target else (40, 120, 40)
    return img
