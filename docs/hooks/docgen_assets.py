"""Files made when the site is built: a game's animation (a real game played by the arena,
written as a replay, read back and drawn frame by frame by the game's own renderer) and the
notebooks as pages with their committed outputs."""

from __future__ import annotations

import base64
import glob
import io
import json
import tempfile
from typing import Any

#: who plays the pictured game, by game: the descriptor's evaluation ladder, first two rungs
FRAMES_MAX = 60


def game_animation(name: str, seed: int = 0) -> bytes:
    """An animated GIF of deal 0 of seed ``seed``: the game's evaluation ladder plays it in the
    arena (one deal, replays on), the replay is read back with :func:`deckgym.replay.load` and
    each recorded state is drawn by the game's ``render.rgb_array``."""
    import numpy as np
    from PIL import Image

    from deckgym import replay as rp
    from deckgym.evaluation.arena import evaluate
    from deckgym.registration import game as game_entry

    spec = game_entry(name).descriptor
    players = spec.demo_players or spec.rules().num_players
    seats = list(spec.eval_against)[:players]
    with tempfile.TemporaryDirectory() as folder:
        evaluate(name, seats, deals=1, seed=seed, players=players, replays=folder, replay_games=1, batch=players)
        path = sorted(glob.glob(f"{folder}/*.jsonl"))[0]
        replay = rp.load(path)
        rp.resimulate(replay)  # the pictured game is the one the rules play, move for move
    core = replay.make_core()
    raws = [d["raw"] for d in replay.decisions] + ([replay.end["raw"]] if replay.end else [])
    step = max(1, len(raws) // FRAMES_MAX)
    picks = list(range(0, len(raws), step))
    if picks[-1] != len(raws) - 1:
        picks.append(len(raws) - 1)
    frames = [Image.fromarray(np.asarray(spec.render.rgb_array(core, rp.state_from_raw(core, raws[i]), 0)))
              for i in picks]
    durations = [400] * (len(frames) - 1) + [3000]  # hold the end, where the round is scored
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=durations, loop=0)
    return out.getvalue()


def _source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def notebook_markdown(path: str, title_link: str) -> str:
    """A notebook as a Markdown page: markdown cells as they are, code cells as Python blocks,
    their committed outputs (text, and PNG pictures inline) below them. Nothing is executed."""
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    out = [f"*This page is the notebook `{title_link}` with its committed outputs.*\n"]
    for cell in nb.get("cells", []):
        text = _source(cell)
        if cell.get("cell_type") == "markdown":
            out.append(text + "\n")
        elif cell.get("cell_type") == "code":
            out.append("```{.python .notebook}\n" + text.rstrip() + "\n```\n")
            for o in cell.get("outputs", []):
                data = o.get("data", {})
                if o.get("output_type") == "stream":
                    out.append("```text\n" + "".join(o.get("text", "")).rstrip() + "\n```\n")
                elif "image/png" in data:
                    png = data["image/png"]
                    png = "".join(png) if isinstance(png, list) else png
                    base64.b64decode(png, validate=False)
                    out.append(f'<img alt="output" src="data:image/png;base64,{png.strip()}">\n')
                elif "text/plain" in data:
                    txt = data["text/plain"]
                    out.append("```text\n" + ("".join(txt) if isinstance(txt, list) else txt).rstrip() + "\n```\n")
                elif o.get("output_type") == "error":
                    out.append("```text\n" + o.get("ename", "") + ": " + o.get("evalue", "") + "\n```\n")
    return "\n".join(out)
