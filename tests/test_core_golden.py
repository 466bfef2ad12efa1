"""Reference runs of both cores and both AEC envs, compared digest by digest.

Each case plays seeded random legal actions and hashes (sha256) everything the cores
expose: the deals, the whole state after every step, every mask, the observations of the
seat to act and of a fixed seat, every ``StepResult`` field, ``obs_view`` and
``state_dict``. The digests in ``tests/data/core_golden.json`` were made with the code as it
was before the cores were split into modules; a refactoring of a core must reproduce them
bit for bit. Regenerate (only on a deliberate change of behaviour) with
``python tests/test_core_golden.py --write``.

The five AEC digests were regenerated once, when the AEC infos began to carry every round-result
key from ``reset`` on (neutral values until a round ends; the digests hash ``round_points`` and
``total_points`` at every step). The core and deal digests did not change, and the AEC runs
hashed without the per-step infos but with the infos at each episode's end gave the same
digests before and after that change: the same play, rewards and round results.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from leastscore_env.core import LeastScoreCore
from leastscore_env.rules import LeastScoreRules
from racko_env.core import RackoCore
from racko_env.rules import RackoRules

GOLDEN = Path(__file__).parent / "data" / "core_golden.json"


class _Hash:
    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def add(self, x) -> None:
        if isinstance(x, np.ndarray):
            a = np.ascontiguousarray(x)
            self.h.update(f"{a.dtype.str}{a.shape}".encode())
            self.h.update(a.tobytes())
        elif isinstance(x, dict):
            for k in sorted(x, key=str):
                self.h.update(str(k).encode())
                self.add(x[k])
        elif isinstance(x, (list, tuple)):
            self.h.update(f"[{len(x)}".encode())
            for v in x:
                self.add(v)
        else:
            self.h.update(repr(x).encode())

    def state(self, st) -> None:
        for f in fields(st):
            self.add(getattr(st, f.name))


def _core(game: str, players: int, variant: str, episode: str, reward: str):
    if game == "racko":
        kw = {"short": dict(max_turns=25, target_score=150), "bonus_flip": dict(bonus=True, reshuffle="flip", max_turns=60,
              target_score=120), "run3": dict(min_run_to_win=3, max_turns=40, target_score=100),
              "partners": dict(partners=True, bonus=True, max_turns=30, target_score=200), "default": {}}[variant]
        return RackoCore(RackoRules(num_players=players, **kw), episode=episode, reward=reward)
    kw = {"default": {}, "suited_seq": dict(sequence_same_suit=True, sequence_lengths=(3, 4), tie_wins=False,
          elimination_score=50), "short": dict(max_turns=12, first_player="seat0", elimination_score=25, hand_size=3,
          cap_ends_match=False)}[variant]
    return LeastScoreCore(LeastScoreRules(num_players=players, **kw), episode=episode, reward=reward)


def _core_cases() -> list[tuple]:
    cases = []
    for players in (2, 3, 4):
        for variant in ("default", "short", "bonus_flip", "run3") + (("partners",) if players == 4 else ()):
            for episode, reward in (("round", "win"), ("match", "points")) if variant != "default" else (("round", "win"),):
                for B in (1, 7, 64):
                    cases.append(("racko", players, variant, episode, reward, B))
    for players in (2, 3, 4, 8):
        for variant in ("default", "suited_seq", "short"):
            for episode, reward in (("round", "win"), ("match", "win"), ("match", "points"), ("round", "points")):
                if variant != "default" and reward == "points" and episode == "round":
                    continue
                for B in (1, 7, 64):
                    cases.append(("leastscore", players, variant, episode, reward, B))
    return cases


def _actions(core, game: str, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions; in Rack-O mostly a card into the slot of its rank (so that
    players go out, matches end and the R7/R10 paths run)."""
    actions = np.argmax(rng.random(mask.shape) * mask, axis=1).astype(np.int64)
    if game == "racko":
        hand = core.obs_view(obs)["hand"]
        slot = 2 + np.clip((hand - 1) * 10 // core.deck_size, 0, 9)
        smart = (hand > 0) & (rng.random(len(hand)) < 0.85)
        actions = np.where(smart & mask[np.arange(len(hand)), slot], slot, actions)
    return actions


def run_core(game: str, players: int, variant: str, episode: str, reward: str, B: int) -> str:
    core = _core(game, players, variant, episode, reward)
    steps = {1: 500, 7: 160, 64: 80}[B]
    seed = 1000 * players + B
    rng = np.random.default_rng(seed)
    h = _Hash()
    st = core.init(B, seed)
    h.state(st)
    buf = np.empty((B, core.obs_size), np.float32)
    for t in range(steps):
        mask = core.legal_action_mask(st)
        h.add(mask)
        cur = core.current_player(st)
        h.add(cur)
        h.add(core.phase(st))
        h.add(core.alive(st))
        obs = core.observe(st, cur)
        h.add(obs)
        if t % 7 == 0:
            h.add(core.observe(st, 0))
            h.add(core.observe(st, cur, out=buf))
            h.add(core.obs_view(obs))
            h.add(repr(core.state_dict(st, B - 1)))
        if t % 5 == 0:
            h.add(core.sample_legal(mask, np.random.default_rng(t)))
        actions = _actions(core, game, obs, mask, rng)
        res = core.step(st, actions)
        for f in fields(res):
            h.add(getattr(res, f.name))
        h.state(st)
        done = res.terminated | res.truncated
        if done.any():
            core.reset_where(st, done)
            h.state(st)
    return h.h.hexdigest()


def _deal_cases() -> list[tuple]:
    return [
        ("racko", 2, {"racks": [list(range(1, 11)), list(range(11, 21))], "discard_pile": [40, 39], "first_player": 1}),
        ("racko", 3, {"draw_pile": [5, 7, 9], "scores": [10, 20, 30]}),
        ("leastscore", 4, {"hands": [["AS", "2S", "3S"], ["KH"], ["10D", "10C"], ["5H", "6H", "7H", "8H", "9H"]],
                           "floor": ["QS"], "deck": ["4D"], "first_player": 2, "scores": [1, 2, 3, 4]}),
        ("leastscore", 2, {"hands": [["AC"], ["AD", "2D"]]}),
    ]


def run_deal(game: str, players: int, options: dict) -> str:
    core = _core(game, players, "default", "round", "win")
    st = core.deal(7, options)
    h = _Hash()
    h.state(st)
    rng = np.random.default_rng(3)
    for _ in range(60):
        mask = core.legal_action_mask(st)
        h.add(mask)
        h.add(core.observe(st, core.current_player(st)))
        res = core.step(st, np.argmax(rng.random(mask.shape) * mask, axis=1))
        for f in fields(res):
            h.add(getattr(res, f.name))
        h.state(st)
        if (res.terminated | res.truncated).any():
            break
    return h.h.hexdigest()


def _aec_cases() -> list[tuple]:
    return [("racko", 2, "round", {}), ("racko", 3, "match", {"max_turns": 20, "target_score": 100}),
            ("leastscore", 4, "round", {}), ("leastscore", 3, "match", {}), ("leastscore", 8, "round", {})]


def run_aec(game: str, players: int, episode: str, kw: dict) -> str:
    if game == "racko":
        from racko_env.env import raw_env
    else:
        from leastscore_env.env import raw_env
    env = raw_env(num_players=players, episode=episode, **kw)
    h = _Hash()
    rng = np.random.default_rng(players)
    for seed in (0, 1, 2):
        env.reset(seed=seed)
        for n, agent in enumerate(env.agent_iter(max_iter=800)):
            obs, rew, term, trunc, info = env.last()
            h.add(agent)
            h.add(obs["observation"])
            h.add(obs["action_mask"])
            h.add((float(rew), bool(term), bool(trunc)))
            h.add({k: np.asarray(v) for k, v in info.items() if k in ("round_points", "total_points")})
            if term or trunc:
                action = None
            else:
                m = obs["action_mask"]
                action = int(np.argmax(rng.random(m.shape) * m))
            env.step(action)
        h.add(dict(env.rewards))
    return h.h.hexdigest()


def _case_id(case: tuple) -> str:
    return "-".join(str(x) if not isinstance(x, dict) else hashlib.sha256(json.dumps(x, sort_keys=True).encode()).hexdigest()[:8]
                    for x in case)


def compute_all() -> dict[str, str]:
    out = {}
    for c in _core_cases():
        out["core-" + _case_id(c)] = run_core(*c)
    for c in _deal_cases():
        out["deal-" + _case_id(c)] = run_deal(*c)
    for c in _aec_cases():
        out["aec-" + _case_id(c)] = run_aec(*c)
    return out


def _golden() -> dict[str, str]:
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("case", _core_cases(), ids=_case_id)
def test_core_reference_run(case):
    assert run_core(*case) == _golden()["core-" + _case_id(case)]


@pytest.mark.parametrize("case", _deal_cases(), ids=_case_id)
def test_explicit_deal_reference_run(case):
    assert run_deal(*case) == _golden()["deal-" + _case_id(case)]


@pytest.mark.parametrize("case", _aec_cases(), ids=_case_id)
def test_aec_reference_run(case):
    assert run_aec(*case) == _golden()["aec-" + _case_id(case)]


def test_every_reference_run_is_checked():
    names = {"core-" + _case_id(c) for c in _core_cases()} | {"deal-" + _case_id(c) for c in _deal_cases()} \
        | {"aec-" + _case_id(c) for c in _aec_cases()}
    assert names == set(_golden())


if __name__ == "__main__":
    if "--write" in sys.argv:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(compute_all(), indent=1, sort_keys=True) + "\n")
    else:
        got, want = compute_all(), _golden()
        bad = [k for k in want if got.get(k) != want[k]]
        print(f"{len(want) - len(bad)}/{len(want)} reference runs identical; differ: {bad}")
