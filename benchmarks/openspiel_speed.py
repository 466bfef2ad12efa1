"""Random-play speed of the OpenSpiel games (``python_racko``, ``python_leastscore``) beside
deckgym's PettingZoo AEC env, in the same run: player steps per second.

    python benchmarks/openspiel_speed.py [--seconds 10] [--players 2 4]

Per game: the AEC env (``env.last()``: observation and mask, then a random legal action); the
OpenSpiel state with random legal actions and chance outcomes (chance steps not counted), then
the same reading ``observation_tensor`` of the player to act at each decision, as the AEC env
does. Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root

import pyspiel  # noqa: E402

import deckgym.openspiel  # noqa: E402,F401
from deckgym.evaluation.bench import _aec_random_play, _timed  # noqa: E402
from leastscore_env import env as leastscore_env  # noqa: E402
from racko_env import env as racko_env  # noqa: E402


def openspiel_random_play(name: str, players: int, observe: bool, seed: int = 0):
    """A callable that plays 2,000 random player steps of ``name`` (new games as needed)."""
    game = pyspiel.load_game(name, {"num_players": players})
    rng = np.random.default_rng(seed)
    state = [game.new_initial_state()]

    def run() -> int:
        n = 0
        while n < 2000:
            s = state[0]
            if s.is_terminal():
                state[0] = s = game.new_initial_state()
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            if observe:
                s.observation_tensor(s.current_player())
            legal = s.legal_actions()
            s.apply_action(legal[rng.integers(len(legal))])
            n += 1
        return n

    return run


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--players", type=int, nargs="+", default=[2, 4])
    a = ap.parse_args(argv)
    out = {}
    for game, name, make in (("racko", "python_racko", racko_env), ("leastscore", "python_leastscore", leastscore_env)):
        for P in a.players:
            row = {"aec_env": _aec_random_play(lambda: make(num_players=P), a.seconds),
                   "openspiel": _timed(openspiel_random_play(name, P, False), a.seconds),
                   "openspiel_observed": _timed(openspiel_random_play(name, P, True), a.seconds)}
            out[f"{game}_{P}p"] = {k: round(v) for k, v in row.items()}
            print(f"{game} {P}p: " + ", ".join(f"{k} {v:,.0f} steps/s" for k, v in row.items()), flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
