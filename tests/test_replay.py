"""Replays (``deckgym.replay``): recorded through the play-out loop's hooks, read back by
``load``, re-simulated from seed, deal and actions bit for bit; damaged files refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
from deckgym.registration import GAMES as REGISTERED  # every game: a new one joins these tests by registering

from deckgym.agents.random_agent import RandomAgent
from deckgym.playout import play_out
from deckgym.replay import GameRecord, Recorder, ReplayError, load, make_header, raw_state, resimulate
from tests.conftest import make_core


def record(game, core, agents, seed, rows, batch, tmp_path, specs=None):
    """Play ``batch`` games (agent i in seat i), record ``rows``; returns (replays, actions of every game)."""
    P = core.num_players
    specs = specs or [getattr(a, "spec", "?") for a in agents]
    state = core.init(batch, seed)
    owner = np.tile(np.arange(P), (batch, 1))
    rec = Recorder(game, core, rows, [make_header(game, core, specs, seed, r) for r in rows], agents)
    moves = {g: [] for g in range(batch)}
    for turn in play_out(core, state, agents, owner, before_step=rec.before_step, after_step=rec.after_step):
        for g, a in zip(turn.games, turn.actions):
            moves[int(g)].append(int(a))
    out = {}
    for r, gr in rec.records.items():
        assert gr.done
        out[r] = load(gr.write(str(tmp_path / f"{game}_{r}.jsonl")))
    return out, moves


@pytest.mark.parametrize("game, players, episode", [("racko", 2, "round"), ("racko", 3, "round"),
                                                    ("leastscore", 4, "round"), ("leastscore", 3, "match")])
def test_recorded_games_resimulate_bit_for_bit(game, players, episode, tmp_path):
    kw = {"target_score": 60} if (game == "racko" and episode == "match") else {}
    if game == "leastscore" and episode == "match":
        kw = {"elimination_score": 30}
    core = make_core(game, players, episode=episode, **kw)
    agents = [RandomAgent(core, seed=10 + i) for i in range(players)]
    reps, moves = record(game, core, agents, seed=5, rows=[0, 3], batch=5, tmp_path=tmp_path)
    for r, rep in reps.items():
        assert [d["action"] for d in rep.decisions] == moves[r]  # every move of that game, in order
        assert resimulate(rep) == len(moves[r])
        assert rep.header["deal"] == r and rep.header["seed"] == 5 and rep.header["num_players"] == players
        for d in rep.decisions:
            assert d["action"] in d["legal"]
            assert d["action_name"] == core.action_names[d["action"]]
        assert rep.end is not None and rep.end["reason"] in (("rack-o", "cap") if game == "racko" else ("declare", "cap"))
    if episode == "match":
        assert any(rep.rounds for rep in reps.values())  # a match of several rounds has round lines


def test_recorded_state_and_observation_are_the_core_s(tmp_path):
    """Line k holds state k (before move k) and the mover's own decoded observation."""
    core = make_core("racko", 2)
    agents = [RandomAgent(core, seed=1), RandomAgent(core, seed=2)]
    rep = record("racko", core, agents, 3, [1], 2, tmp_path)[0][1]
    state = core.init(1, 3, game_ids=np.array([1]))
    for d in rep.decisions:
        assert d["raw"] == raw_state(state, 0)
        sd = core.state_dict(state)
        assert d["state"]["racks"] == sd["racks"] and d["state"]["draw_pile"] == sd["draw_pile"]
        assert d["seat"] == int(core.current_player(state)[0])
        view = core.obs_view(core.observe(state, d["seat"]))
        assert d["obs"]["rack"] == view["rack"][0].tolist()
        assert d["obs"]["rack"] == sd["racks"][d["seat"]]
        core.step(state, np.array([d["action"]]))


def test_recording_does_not_change_the_games(tmp_path):
    core = make_core("leastscore", 4)
    agents = [RandomAgent(core, seed=i) for i in range(4)]
    _, with_rec = record("leastscore", core, agents, 9, [0, 1, 2], 6, tmp_path)
    agents = [RandomAgent(core, seed=i) for i in range(4)]
    state = core.init(6, 9)
    without = {g: [] for g in range(6)}
    for turn in play_out(core, state, agents, np.tile(np.arange(4), (6, 1))):
        for g, a in zip(turn.games, turn.actions):
            without[int(g)].append(int(a))
    assert with_rec == without


class _Probs(RandomAgent):
    """A random agent that also reports probabilities (uniform over the legal actions)."""

    def action_probs(self, obs, masks):
        m = np.asarray(masks, dtype=float)
        return m / m.sum(axis=1, keepdims=True)


def test_action_probabilities_are_recorded_where_the_agent_has_them(tmp_path):
    core = make_core("racko", 2)
    reps, _ = record("racko", core, [_Probs(core, seed=1), RandomAgent(core, seed=2)], 4, [0], 1, tmp_path)
    rep = reps[0]
    for d in rep.decisions:
        if d["seat"] == 0:
            assert d["probs"] == pytest.approx([1 / len(d["legal"])] * len(d["legal"]))
        else:
            assert "probs" not in d


@pytest.mark.parametrize("spec", ["ppo:models/racko_2p.safetensors", "ppo:models/racko_2p_rllib.safetensors"])
def test_learned_agents_action_probs_pick_their_action(spec):
    from pathlib import Path

    from deckgym.agents.registry import make_agent

    kind, rel = spec.split(":", 1)
    core = make_core("racko", 2)
    agent = make_agent(f"{kind}:{Path(__file__).resolve().parents[1] / rel}", core, game="racko")
    state = core.init(16, 0)
    for _ in range(3):  # choose and place phases
        obs, masks = core.observe(state, core.current_player(state)), core.legal_action_mask(state)
        p = agent.action_probs(obs, masks)
        assert p.shape == masks.shape and np.allclose(p.sum(axis=1), 1.0) and (p[~masks] == 0).all()
        acts = agent.act(obs, masks)
        assert (np.argmax(p, axis=1) == acts).all()
        core.step(state, acts)


def test_capped_rounds_say_so(tmp_path):
    """A Rack-O round of one turn and a Least Score round of one turn end by the cap (R9, L10)."""
    for game, players in (("racko", 2), ("leastscore", 3)):
        core = make_core(game, players, max_turns=1)
        reps, _ = record(game, core, [RandomAgent(core, seed=i) for i in range(players)], 0, [0], 1, tmp_path)
        assert reps[0].end["reason"] == "cap"
        assert resimulate(reps[0]) == len(reps[0].decisions)


def test_a_declare_ends_the_round_by_declare(tmp_path):
    """Hand-driven Least Score game: discard singles until declaring is legal, then declare."""
    core = make_core("leastscore", 2)
    state = core.init(1, 11)
    rec = GameRecord("leastscore", core, make_header("leastscore", core, ["human", "human"], 11, 0))
    declare = core.action_names.index("declare")
    while not rec.done:
        seat = int(core.current_player(state)[0])
        mask = core.legal_action_mask(state)[0]
        a = declare if mask[declare] else int(np.flatnonzero(mask)[0])
        obs = core.observe(state, seat)[0]
        before = state.copy()
        res = core.step(state, np.array([a]))
        rec.decision(before, 0, seat, obs, mask, a)
        rec.outcome(res, 0, state, 0)
    rep = load(rec.write(str(tmp_path / "d.jsonl")))
    assert rep.end["reason"] == "declare" and rep.decisions[-1]["action_name"] == "declare"
    resimulate(rep)


def _lines(path):
    return [json.loads(x) for x in open(path)]


def _write(path, lines):
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


@pytest.fixture
def one_replay(tmp_path):
    core = make_core("racko", 2)
    reps, _ = record("racko", core, [RandomAgent(core, seed=1), RandomAgent(core, seed=2)], 2, [0], 1, tmp_path)
    return reps[0].path


def test_tampered_action_or_state_is_caught(one_replay, tmp_path):
    lines = _lines(one_replay)
    d = lines[3]
    d["action"] = next(a for a in range(13) if a != d["action"] and a in d["legal"]) if len(d["legal"]) > 1 else d["action"]
    bad = tmp_path / "bad_action.jsonl"
    _write(bad, lines)
    with pytest.raises(ReplayError, match="differs at move 3|not legal"):
        resimulate(load(bad))
    lines = _lines(one_replay)
    lines[5]["raw"]["racks"] = lines[6]["raw"]["racks"] if lines[6]["raw"]["racks"] != lines[5]["raw"]["racks"] \
        else lines[-1]["raw"]["racks"]
    bad = tmp_path / "bad_state.jsonl"
    _write(bad, lines)
    with pytest.raises(ReplayError, match="differs at move 4 .*racks"):
        resimulate(load(bad))


@pytest.mark.parametrize("damage, message", [
    (lambda ls: "", "empty"),
    (lambda ls: "not json\n", "line 1: not JSON"),
    (lambda ls: "".join(json.dumps(x) + "\n" for x in ls[1:]), "not a deckgym-replay header"),
    (lambda ls: "".join(json.dumps({**x, "version": 99} if x["type"] == "header" else x) + "\n" for x in ls),
     "format version 99"),
    (lambda ls: "".join(json.dumps(x) + "\n" for x in ls) + "{\"type\": \"decision\"}\n", "after the end line"),
    (lambda ls: json.dumps(ls[0]) + "\n" + json.dumps({"type": "decision", "seat": 0}) + "\n", "line 2: a decision without"),
    (lambda ls: json.dumps(ls[0]) + "\n" + "[1, 2]\n", "line 2: not a replay line"),
    (lambda ls: json.dumps({**ls[0], "game": "chess"}) + "\n", "unknown game 'chess'"),
])
def test_damaged_files_are_refused_by_name(one_replay, tmp_path, damage, message):
    bad = tmp_path / "damaged.jsonl"
    bad.write_text(damage(_lines(one_replay)))
    with pytest.raises(ReplayError, match=message):
        load(bad)


def test_missing_file_is_one_clear_error(tmp_path):
    with pytest.raises(ReplayError, match="cannot read"):
        load(tmp_path / "nope.jsonl")


@pytest.mark.parametrize("game", sorted(REGISTERED))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_batched_steps_keep_every_state_field_s_dtype(game, players):
    """A replay compares raw bytes, so a field must not widen as the batch is stepped (as Rack-O's seat
    to move once did with 3 or 4 players)."""
    core = make_core(game, players)
    state = core.init(6, 1)
    dtypes = {k: v.dtype for k, v in vars(state).items()}
    rng = np.random.default_rng(0)
    for _ in range(30):
        mask = core.legal_action_mask(state)
        live = mask.any(axis=1)
        if not live.all():
            break
        core.step(state, np.argmax(rng.random(mask.shape) * mask, axis=1))
        assert {k: v.dtype for k, v in vars(state).items()} == dtypes


def test_arena_writes_the_first_deals_in_every_seating(tmp_path):
    from deckgym.evaluation.arena import evaluate

    plain = evaluate("racko", ["racko:bucket", "random"], deals=4, seed=3, batch=4)
    rec = evaluate("racko", ["racko:bucket", "random"], deals=4, seed=3, batch=4, replays=str(tmp_path / "r"),
                   replay_games=3)  # batch 4: two deals per chunk, so the replays span two chunks
    assert rec.to_json() == plain.to_json()  # recording changes no game
    files = sorted(p.name for p in (tmp_path / "r").iterdir())
    assert files == [f"racko-deal{d:05d}-rot{r}.jsonl" for d in range(3) for r in range(2)]
    for name in files:
        rep = load(tmp_path / "r" / name)
        rot = rep.header["rotation"]
        assert rep.header["seats"] == [["racko:bucket", "random"][(s + rot) % 2] for s in range(2)]
        assert resimulate(rep) == len(rep.decisions) > 0
        assert all("move" in d and d["move"] in d["legal_moves"] for d in rep.decisions)


def test_arena_refuses_a_bad_replay_count(tmp_path):
    from deckgym.evaluation.arena import evaluate

    with pytest.raises(ValueError, match="--replay-games must be an int in 1..4"):
        evaluate("racko", ["random"], deals=4, replays=str(tmp_path), replay_games=5)


def test_demo_shows_progress_and_writes_replays(tmp_path, monkeypatch, capsys):
    import io

    import deckgym.evaluation.demo as demo

    out = io.StringIO()
    bar = demo.ArenaProgress("racko: 1 pairs", 10, out=out)
    bar(4)
    bar(6)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("0/10 games, 0 s, time left: after the first moves")
    assert "4/10 games" in lines[1] and "left" in lines[1] and "10/10 games" in lines[2]
    monkeypatch.setattr(demo, "lineup", lambda game, players, models: ["random", "racko:bucket"])
    assert demo.main(["--games", "1", "--game", "racko", "--out", str(tmp_path), "--models", str(tmp_path)]) == 0
    text = capsys.readouterr()
    assert f"deckgym view {tmp_path / 'replays'}" in text.out and "Results: " in text.out
    assert "preparing 2 agents" in text.err.splitlines()[0]  # said before the planners compile
    assert "2/2 games" in text.err  # the bar (not a terminal here: a line per tenth)
    files = sorted((tmp_path / "replays").iterdir())
    assert [f.name for f in files] == [f"racko-deal{d:05d}-rot{r}.jsonl" for d in range(2) for r in range(2)]
    for f in files:
        rep = load(f)
        assert sorted(rep.header["seats"]) == ["racko:bucket", "random"]
        resimulate(rep)


def test_terminal_play_saves_the_persons_game(tmp_path):
    import io

    from deckgym.evaluation.play import PlaySession

    typed = []

    def first_move(prompt=""):
        typed.append("1")
        return "1"

    out = io.StringIO()
    s = PlaySession("racko", ["racko:bucket"], seed=4, output=out, input_fn=first_move, replays=str(tmp_path),
                    rules_kwargs={"max_turns": 40})
    result = s.run()
    assert not result["quit"] and s.replay_path and f"Saved the game as {s.replay_path}" in out.getvalue()
    rep = load(s.replay_path)
    assert rep.header["seats"] == ["human", "racko:bucket"] and rep.header["seed"] == 4
    mine = [d for d in rep.decisions if d["seat"] == 0]
    assert len(mine) == len(typed) and all(d["move"] == d["legal_moves"][0] for d in mine)  # move 1: the first listed
    assert rep.end["winners"] == result["winners"] and resimulate(rep) == len(rep.decisions)


@pytest.mark.parametrize("game, old, new", [("racko", "totals", "scores"), ("leastscore", "cur", "player")])
def test_replays_from_before_a_state_field_rename_still_load_and_resimulate(game, old, new, tmp_path):
    from deckgym.viewer import frames

    core = make_core(game, 2 if game == "racko" else 4)
    agents = [RandomAgent(core, seed=i) for i in range(core.num_players)]
    replays, _ = record(game, core, agents, 5, [0], 2, tmp_path)
    path = replays[0].path
    lines = _lines(path)
    renamed = 0
    for line in lines:
        if "raw" in line:
            line["raw"] = {old if k == new else k: v for k, v in line["raw"].items()}
            renamed += 1
    assert renamed > 2 and all(new not in line.get("raw", {old: 0}) for line in lines)
    old_path = tmp_path / "before_the_rename.jsonl"
    _write(old_path, lines)
    replay = load(str(old_path))
    assert resimulate(replay) == len(replay.decisions)
    assert len(frames(replay)["frames"]) == len(replay.decisions) + 1
    import base64

    raw = bytearray(base64.b64decode(lines[1]["raw"][old]))
    raw[0] ^= 1  # the renamed field is read: damage it, and it is caught
    lines[1]["raw"][old] = base64.b64encode(bytes(raw)).decode("ascii")
    _write(old_path, lines)
    with pytest.raises(ReplayError):
        resimulate(load(str(old_path)))
