"""The Gymnasium vector env (``deckgym.vector_env``): against the core driven by hand for the
same seed, ``make_vec``, both autoreset modes, masks in infos, bad arguments, pickling, and
the SB3 ``CoreVecEnv`` that is built on it."""

from __future__ import annotations

import copy
import pickle

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import deckgym  # noqa: F401  (registers the ids)
from deckgym.agents.base import Agent
from deckgym.registration import game as game_entry
from deckgym.learner import LearnerEngine
from deckgym.vector_env import DeckGymVectorEnv

IDS = {"racko": "deckgym/RackO-v0", "leastscore": "deckgym/LeastScore-v0"}


class HashAgent(Agent):
    """Deterministic, varied play: a legal action picked by a hash of the observation (its own
    seed changes nothing), so a hand-driven core can replay exactly what the env's opponents do."""

    def __init__(self, core, salt: int = 0) -> None:
        super().__init__(core)
        self.spec = f"hash{salt}"
        self.w = np.random.default_rng(1000 + salt).random(core.obs_size)

    def act(self, observations, action_masks):
        h = (np.asarray(observations)[:, : self.core.obs_size] @ self.w * 7919).astype(np.int64)
        masks = np.asarray(action_masks, bool)
        pick = h % masks.sum(axis=1)
        order = np.cumsum(masks, axis=1) - 1
        return np.argmax(masks & (order == pick[:, None]), axis=1).astype(np.int64)


def drive_core(core, seed, game_id, episodes, learner, pool, feats, use_features, shaping):
    """Game ``game_id`` of ``seed`` replayed on a B = 1 core, the learner in seat ``episodes[e][0]``
    against ``pool[episodes[e][1]]``; yields what a NEXT_STEP env shows for that row at each
    step: ``(obs, reward, ended, capped)``, a dealt-again game one step after its end."""
    st = core.init(1, seed, game_ids=np.array([game_id]))

    def advance(seat, opp):
        r = 0.0
        while core.current_player(st)[0] != seat:
            o = core.observe(st, core.current_player(st))
            res = core.step(st, pool[opp].act(o, core.legal_action_mask(st)))
            r += float(res.rewards[0, seat])
            if res.terminated[0] or res.truncated[0]:
                return r, True, bool(res.truncated[0])
        return r, False, False

    def obs_of(seat):
        raw = core.observe(st, seat)
        return np.concatenate([raw, feats.derived_features(core, raw)], axis=1) if use_features else raw

    def phi(seat):
        return float(feats.shaping_potential(core, core.observe(st, seat))[0]) if shaping else 0.0

    for e, (seat, opp) in enumerate(episodes):
        if e:
            core.reset_where(st, np.array([True]))
        assert not advance(seat, opp)[1]
        if e:
            yield obs_of(seat), 0.0, False, False
        while True:
            before = phi(seat)
            res = core.step(st, learner.act(obs_of(seat), core.legal_action_mask(st)))
            r, ended, capped = float(res.rewards[0, seat]), bool(res.terminated[0] or res.truncated[0]), bool(res.truncated[0])
            if not ended:
                r2, ended, capped = advance(seat, opp)
                r += r2
            yield obs_of(seat), r + shaping * (phi(seat) - before), ended, capped
            if ended:
                break


@pytest.mark.parametrize("game,players,kw", [
    ("racko", 2, dict(shaping=0.3, features=True, max_turns=20)),  # Rack-O: hashed play ends by the cap
    ("racko", 3, dict(max_turns=12, shaping=1.0)),
    ("leastscore", 4, dict(reward="points")),
    ("leastscore", 2, dict(features=True, max_turns=8)),
])
def test_each_row_is_the_cores_own_game_for_the_seed(game, players, kw):
    """Row ``i`` of the env equals game ``i`` of the seed played on the core by hand: the same
    observations, rewards (shaping included) and ends, in NEXT_STEP autoreset order."""
    N, seed, steps = 5, 31, 80
    entry = game_entry(game)
    rules_kw = {k: v for k, v in kw.items() if k == "max_turns"}
    core = entry.make_core(entry.make_rules(num_players=players, **rules_kw),
                           reward=kw.get("reward", "win"))
    pool, learner = [HashAgent(core, salt=1), HashAgent(core, salt=2)], HashAgent(core, salt=3)
    env = DeckGymVectorEnv(game, num_envs=N, num_players=players, opponents=pool, **kw)
    obs, infos = env.reset(seed=seed)
    history = [(obs, np.zeros(N), np.zeros(N, bool), np.zeros(N, bool), infos)]
    for _ in range(steps):
        obs, rew, term, trunc, infos = env.step(learner.act(obs, env.action_masks()))
        history.append((obs, rew, term, trunc, infos))
    names = [a.spec for a in pool]
    n_ends = 0
    for i in range(N):
        # each episode's seat and opponent: what the first step showing it says
        episodes = [(int(inf["seat"][i]), names.index(inf["opponent"][i])) for h, (_, _, _, _, inf) in enumerate(history)
                    if h == 0 or history[h - 1][2][i] or history[h - 1][3][i]]
        drv = drive_core(core, seed, i, episodes, learner, pool, entry.features(), kw.get("features", False),
                         kw.get("shaping", 0.0))
        for h, (o, r, ended, capped) in zip(range(1, steps + 1), drv):
            eo, er, et, etr, _ = history[h]
            np.testing.assert_array_equal(eo[i], o[0], err_msg=f"game {i}, step {h}")
            assert er[i] == pytest.approx(r, abs=1e-5), (i, h)
            assert (bool(et[i]), bool(etr[i])) == (ended and not capped, capped), (i, h)
            n_ends += ended
    assert n_ends >= 2  # the comparison crossed episode ends and new deals
    assert any(h[2].any() for h in history) == (game == "leastscore")  # Rack-O's hashed games all hit the cap


def random_legal(rng, masks):
    return np.argmax(rng.random(masks.shape) * masks, axis=1)


@pytest.mark.parametrize("game", list(IDS))
def test_make_vec_builds_the_vector_env(game):
    envs = gymnasium.make_vec(IDS[game], num_envs=4, vectorization_mode="vector_entry_point", num_players=3,
                              opponents=["random"], features=True)
    assert isinstance(envs, gymnasium.vector.VectorEnv) and isinstance(envs.unwrapped, DeckGymVectorEnv)
    u = envs.unwrapped
    assert u.num_envs == 4 and u.num_players == 3 and u.game == game
    assert u.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    n = u.core.obs_size + game_entry(game).features().num_features(u.core)
    assert u.single_observation_space.shape == (n,) and u.observation_space.shape == (4, n)
    assert u.single_action_space == gymnasium.spaces.Discrete(u.core.num_actions)
    assert u.action_space == gymnasium.spaces.MultiDiscrete([u.core.num_actions] * 4)
    obs, infos = envs.reset(seed=0)
    assert obs in u.observation_space and obs.dtype == np.float32
    assert infos["action_mask"].shape == (4, u.core.num_actions) and infos["_action_mask"].all()
    # the registered default is the vector entry point; "sync" still stacks single-agent views
    assert isinstance(gymnasium.make_vec(IDS[game], num_envs=2).unwrapped, DeckGymVectorEnv)
    sync = gymnasium.make_vec(IDS[game], num_envs=2, vectorization_mode="sync")
    assert isinstance(sync, gymnasium.vector.SyncVectorEnv)
    sobs, sinfo = sync.reset(seed=0)
    n2 = sync.single_observation_space.shape[0]
    assert sobs.shape == (2, n2) and sinfo["action_mask"].shape == (2, sync.single_action_space.n)


@pytest.mark.parametrize("game,players", [("racko", 2), ("racko", 4), ("leastscore", 3)])
def test_masks_in_infos_and_the_learner_to_move(game, players):
    env = DeckGymVectorEnv(game, num_envs=12, num_players=players, opponents=["random"], max_turns=30)
    core = env.core
    obs, infos = env.reset(seed=4)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(150):
        masks = env.action_masks()
        assert masks.shape == (12, core.num_actions) and masks.dtype == bool and masks.any(axis=1).all()
        np.testing.assert_array_equal(infos["action_mask"], masks.astype(np.int8))
        # every game waits for the learner, who sees exactly the core's legal mask
        assert (core.current_player(env.state) == env.learner_seat).all()
        np.testing.assert_array_equal(masks, core.legal_action_mask(env.state))
        obs, rew, term, trunc, infos = env.step(random_legal(rng, masks))
        done = term | trunc
        if done.any():
            ended += done.sum()
            for key in ("won", "round_points", "capped"):
                np.testing.assert_array_equal(infos["_" + key], done)
            assert ((infos["won"][done] >= 0) & (infos["won"][done] <= 1)).all()
            np.testing.assert_array_equal(infos["capped"][done], trunc[done])
        else:
            assert "won" not in infos
        np.testing.assert_array_equal(obs[~done], core.observe(env.state, env.learner_seat)[~done])
    assert ended > 5


@pytest.mark.parametrize("game", list(IDS))
def test_next_step_and_same_step_play_the_same_games(game):
    """Both modes deal the same games; NEXT_STEP shows a new game one step later (its action for
    that game ignored, reward 0), SAME_STEP at once with the last observation in final_obs."""
    kw = dict(num_envs=6, opponents=["random", f"{game}:{'bucket' if game == 'racko' else 'greedy'}"],
              shaping=0.2, max_turns=15)
    nxt = DeckGymVectorEnv(game, autoreset_mode=AutoresetMode.NEXT_STEP, **kw)
    same = DeckGymVectorEnv(game, autoreset_mode="SameStep", **kw)
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    o_n, i_n = nxt.reset(seed=9)
    o_s, i_s = same.reset(seed=9)
    np.testing.assert_array_equal(o_n, o_s)
    rng = np.random.default_rng(3)
    for _ in range(120):
        a = random_legal(rng, same.action_masks())
        np.testing.assert_array_equal(nxt.action_masks(), same.action_masks())
        o_n, r_n, t_n, u_n, i_n = nxt.step(a)
        o_s, r_s, t_s, u_s, i_s = same.step(a)
        np.testing.assert_array_equal(r_n, r_s)
        np.testing.assert_array_equal(t_n, t_s)
        np.testing.assert_array_equal(u_n, u_s)
        done = t_s | u_s
        np.testing.assert_array_equal(o_n[~done], o_s[~done])
        if done.any():
            break
    assert done.any()
    np.testing.assert_array_equal(i_s["_final_obs"], done)
    for g in np.flatnonzero(done):
        np.testing.assert_array_equal(i_s["final_obs"][g], o_n[g])  # the last observation
        for key in ("won", "seat", "opponent", "capped"):
            assert i_s["final_info"][key][g] == i_n[key][g]
    # the next NEXT_STEP step ignores the ended games' actions (-1 here) and shows the new
    # games SAME_STEP already showed, with reward 0; the other games play on as usual
    a = np.where(done, -1, random_legal(rng, nxt.action_masks()))
    o2, r2, t2, u2, i2 = nxt.step(a)
    np.testing.assert_array_equal(o2[done], o_s[done])
    np.testing.assert_array_equal(r2[done], 0.0)
    assert not (t2 | u2)[done].any()
    np.testing.assert_array_equal(i2["seat"][done], same.learner_seat[done])
    going = ~done & ~(t2 | u2)
    assert (nxt.ep_len[done] == 0).all() and (nxt.ep_len[going] > 1).all()  # no decision counted yet


def run_same_step(env, steps, seed):
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for _ in range(steps):
        obs, rew, term, trunc, infos = env.step(random_legal(rng, env.action_masks()))
        out.append((obs, rew, term | trunc, infos.get("final_obs")))
    return out


@pytest.mark.parametrize("game,kw", [
    ("racko", dict(opponents=["random", "racko:bucket"], opponent_weights=[1, 3], shaping=0.2, features=False)),
    ("leastscore", dict(opponents=["random"], episode="match", reward="points", features=False)),
    ("leastscore", dict(opponents=["leastscore:greedy", "random"], num_players=3, shaping=0.5, features=True)),
])
def test_core_vec_env_is_the_same_step_vector_env(game, kw):
    """The SB3 adapter adds nothing to the games: same seed, same actions, same trajectory."""
    pytest.importorskip("stable_baselines3")
    from deckgym.training.vec_env import CoreVecEnv

    sb3 = CoreVecEnv(game, num_envs=8, seed=5, **kw)
    gym = DeckGymVectorEnv(game, num_envs=8, autoreset_mode=AutoresetMode.SAME_STEP, **kw)
    rng, rng2 = np.random.default_rng(7), np.random.default_rng(7)
    np.testing.assert_array_equal(sb3.reset(), gym.reset(seed=5)[0])
    ends = 0
    for _ in range(120):
        obs, rew, done, infos = sb3.step(random_legal(rng, sb3.action_masks()))
        gobs, grew, gterm, gtrunc, ginfo = gym.step(random_legal(rng2, gym.action_masks()))
        np.testing.assert_array_equal(obs, gobs)
        np.testing.assert_array_equal(rew, grew)
        np.testing.assert_array_equal(done, gterm | gtrunc)
        for g in np.flatnonzero(done):
            ends += 1
            np.testing.assert_array_equal(infos[g]["terminal_observation"], ginfo["final_obs"][g])
            assert infos[g]["won"] == ginfo["final_info"]["won"][g]
            assert infos[g]["opponent"] == ginfo["final_info"]["opponent"][g]
            assert infos[g]["capped"] == gtrunc[g] and infos[g]["TimeLimit.truncated"] is False
    assert ends > 3


@pytest.mark.parametrize("game,players", [("leastscore", 4), ("racko", 2)])
def test_games_ending_in_a_step_share_its_one_features_call(game, players, monkeypatch):
    """The last observations of the games that end in a step are observed and featurised with
    the learner's rows (one call each per step), and equal what each game shows on its own."""
    env = DeckGymVectorEnv(game, num_envs=16, num_players=players, opponents=["random"], features=True,
                           autoreset_mode=AutoresetMode.SAME_STEP, **({"max_turns": 6} if game == "racko" else {}))
    feats = env.features_module
    calls, own = [], {}
    real_features, real_finish = feats.derived_features, LearnerEngine._finish

    def counted(core, obs, version):
        calls.append(len(obs))
        return real_features(core, obs, version=version)

    def finish(self, games, res, idx, done):  # what each ended game shows alone, before it is dealt again
        for g in games.tolist():
            raw = self.core.observe(self.state.take(np.array([g])), self.learner_seat[[g]])
            own[g] = np.concatenate([raw, real_features(self.core, raw, version=self.features_version)], axis=1)[0]
        real_finish(self, games, res, idx, done)

    monkeypatch.setattr(feats, "derived_features", counted)
    monkeypatch.setattr(LearnerEngine, "_finish", finish)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    several = 0
    for _ in range(60):
        calls.clear()
        own.clear()
        obs, rew, term, trunc, infos = env.step(random_legal(rng, env.action_masks()))
        ended = np.flatnonzero(term | trunc)
        assert calls == [16 + len(own)]  # one call: the learner's rows, then the ended games'
        assert sorted(own) == ended.tolist()
        for g in ended.tolist():
            np.testing.assert_array_equal(infos["final_obs"][g], own[g])
        several += len(ended) > 1
    assert several >= 3  # steps where more than one game ended (their states joined in one batch)


def test_seeding():
    def run(env, seeds):
        out = []
        for s in seeds:
            obs, _ = env.reset(seed=s)
            out.append(obs)
        return out

    a = DeckGymVectorEnv("racko", num_envs=3, opponents=["random"])
    b = DeckGymVectorEnv("racko", num_envs=3, opponents=["random"])
    ra, rb = run(a, [4, None, None]), run(b, [4, None, None])
    for x, y in zip(ra, rb):
        np.testing.assert_array_equal(x, y)  # unseeded resets continue from the seeded one
    assert not np.array_equal(ra[1], ra[2]) and not np.array_equal(ra[0], ra[1])
    # a constructor seed is the seed of the first reset that gives none
    c = DeckGymVectorEnv("racko", num_envs=3, opponents=["random"], seed=4)
    for x, y in zip(run(c, [None, None, None]), ra):
        np.testing.assert_array_equal(x, y)
    # game i is the core's game (seed, i), whatever N is
    d = DeckGymVectorEnv("racko", num_envs=5, opponents=["random"], seat=0)
    e = DeckGymVectorEnv("racko", num_envs=2, opponents=["random"], seat=0)
    core = d.core
    st = core.init(5, 8, game_ids=np.arange(5))
    first = core.current_player(st) == 0  # no opponent moves before the learner in those games
    np.testing.assert_array_equal(d.reset(seed=8)[0][first], core.observe(st, 0)[first])
    np.testing.assert_array_equal(d.reset(seed=8)[0][:2][first[:2]], e.reset(seed=8)[0][first[:2]])


@pytest.mark.parametrize("bad, match", [
    (dict(num_envs=0), "num_envs must be a positive integer"),
    (dict(num_envs=2.5), "num_envs must be a positive integer"),
    (dict(opponents=[3]), "opponent 0 must be an agent spec"),
    (dict(opponents=["random", object()]), "opponent 1 must be an agent spec"),
    (dict(opponents=["nobody"]), "unknown agent"),
    (dict(opponents=["random", "racko:bucket"], opponent_weights=[1]), "one weight per opponent"),
    (dict(opponents=["random", "racko:bucket"], opponent_weights=[0.5, -0.5]), "non-negative"),
    (dict(opponents=["random", "racko:bucket"], opponent_weights=[np.nan, 1]), "finite"),
    (dict(opponents=["random", "racko:bucket"], opponent_weights=[0, 0]), "positive sum"),
    (dict(autoreset_mode=AutoresetMode.DISABLED), "not supported"),
    (dict(autoreset_mode="later"), "autoreset_mode must be"),
    (dict(seat=2), "seat must be None or a seat in 0..1"),
    (dict(render_mode="human"), "render_mode"),
    (dict(seed=-1), "seed must be"),
    (dict(rules=game_entry("racko").make_rules(), num_players=3), "not both"),
])
def test_bad_arguments_fail_at_construction(bad, match):
    kw = {"num_envs": 2, **bad}
    with pytest.raises(ValueError, match=match):
        DeckGymVectorEnv("racko", **kw)


def test_bad_steps_and_resets():
    env = DeckGymVectorEnv("racko", num_envs=3, opponents=["random"])
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="seed must be"):
        env.reset(seed=1.5)
    with pytest.raises(ValueError, match="options must be a dict"):
        env.reset(options=[1])
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"deal": 3})
    env.reset(seed=0, options={"seat": 1})
    assert (env.learner_seat == 1).all()
    m = env.action_masks()
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        env.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="integers"):
        env.step(np.zeros(3))
    with pytest.raises(ValueError, match="out of range"):
        env.step(np.full(3, env.core.num_actions))
    bad = np.argmax(m, axis=1)
    bad[1] = int(np.flatnonzero(~m[1])[0])
    env.illegal_action = "raise"
    with pytest.raises(ValueError, match=rf"illegal learner action {bad[1]} \(.*\) in game 1 in phase .*; legal: "):
        env.step(bad)
    env.step(np.argmax(m, axis=1))  # still usable after the refusals
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        DeckGymVectorEnv("racko", num_envs=2, illegal_action="ignore")


def test_a_pool_that_changes():
    env = DeckGymVectorEnv("racko", num_envs=64, opponents=["random", "racko:bucket"], opponent_weights=[1, 3])
    env.reset(seed=0)
    assert 0.5 < (env.opp_of == 1).mean() < 0.95
    k = env.add_opponent("racko:ranges", weight=0.0, name="late")
    env.set_opponent_weights([0, 0, 1])
    for bad in ([1, 2], [1, 1, -1], [0, 0, 0]):
        with pytest.raises(ValueError):
            env.set_opponent_weights(bad)
    with pytest.raises(ValueError, match="weight"):
        env.add_opponent("random", weight=float("nan"))
    with pytest.raises(ValueError, match="opponent 3 must be"):
        env.add_opponent(3)
    rng = np.random.default_rng(0)
    for _ in range(300):
        _, _, term, trunc, infos = env.step(random_legal(rng, env.action_masks()))
        if (term | trunc).any():
            break
    # NEXT_STEP: the ended games are dealt again against the new entry, shown in the next step
    done = term | trunc
    assert (env.opp_of[done] == k).all()
    _, _, _, _, infos = env.step(random_legal(rng, env.action_masks()))
    assert set(infos["opponent"][done]) == {"late"}


@pytest.mark.parametrize("game", list(IDS))
def test_pickle_and_deepcopy_continue_identically(game):
    env = DeckGymVectorEnv(game, num_envs=4, opponents=["random", f"{game}:{'sequence' if game == 'racko' else 'counting'}"],
                           features=True, shaping=0.1, render_mode="ansi")
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(5):
        env.step(random_legal(rng, env.action_masks()))
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    assert all(not any(type(v).__name__ == "module" for v in vars(c).values()) for c in clones)
    runs = []
    for e in [env] + clones:
        r = np.random.default_rng(1)
        runs.append([e.step(random_legal(r, e.action_masks()))[:4] for _ in range(40)] + [e.render()])
    for other in runs[1:]:
        for x, y in zip(runs[0][:-1], other[:-1]):
            for p, q in zip(x, y):
                np.testing.assert_array_equal(p, q)
        assert runs[0][-1] == other[-1]


def test_render_one_frame_per_game():
    env = DeckGymVectorEnv("leastscore", num_envs=3, render_mode="rgb_array", opponents=["random"])
    with pytest.raises(RuntimeError, match="reset"):
        env.render()
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 3 and all(f.dtype == np.uint8 and f.ndim == 3 for f in frames)
    assert DeckGymVectorEnv("racko", num_envs=2).render() is None


def test_history_records_the_games_and_changes_nothing_the_learner_sees():
    """``history=True``: the same observations, rewards and masks as without it, and
    ``observe_for`` gives an information-state agent the learner seat's recorded history."""
    from deckgym.agents.registry import acts_on_infostates, make_agent

    kw = dict(num_envs=6, num_players=3, opponents=["racko:sequence", "random"], features=True, seed=2,
              autoreset_mode=AutoresetMode.SAME_STEP)  # every returned observation is of the game now dealt
    a, b = DeckGymVectorEnv("racko", history=True, **kw), DeckGymVectorEnv("racko", **kw)
    oa, _ = a.reset(seed=9)
    ob, _ = b.reset(seed=9)
    search = make_agent("racko:search", a.core, seed=0, game="racko")
    planner = make_agent("racko:lookahead", a.core, seed=0, game="racko")
    assert acts_on_infostates("racko:search?samples=4") and not acts_on_infostates("racko:lookahead")
    with pytest.raises(ValueError, match="racko:search.*history=True"):
        b.observe_for(search)
    logged = False
    for _ in range(40):
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(a.action_masks(), b.action_masks())
        info = a.observe_for(search)
        np.testing.assert_array_equal(info[:, :a.core.obs_size], oa[:, :a.core.obs_size])
        np.testing.assert_array_equal(a.observe_for(planner), oa[:, :a.core.obs_size])
        logged |= bool(a.play_core.obs_view(info)["log_kind"].any())
        act = planner.act(oa[:, :a.core.obs_size], a.action_masks())
        oa, ra, *_ = a.step(act)
        ob, rb, *_ = b.step(act)
        np.testing.assert_array_equal(ra, rb)
    assert logged


def test_an_information_state_opponent_makes_the_env_record_the_history():
    env = DeckGymVectorEnv("racko", num_envs=3, num_players=2, opponents=["racko:search?samples=2&sweeps=1"], seed=0)
    assert env.history
    obs, _ = env.reset(seed=1)
    env.step(np.argmax(env.action_masks(), axis=1))
    plain = DeckGymVectorEnv("racko", num_envs=3, num_players=2, opponents=["random"], seed=0)
    with pytest.raises(ValueError, match="racko:search.*history=True"):
        plain.add_opponent("racko:search")


@pytest.mark.parametrize("game", list(IDS))
def test_information_state_learner_with_the_default_opponents(game):
    """``obs="infostate"``: the learner sees information states, the default opponents (built on
    the default-observation core) keep reading the default observation they are given."""
    envs = gymnasium.make_vec(IDS[game], num_envs=4, vectorization_mode="vector_entry_point", obs="infostate")
    env = envs.unwrapped
    assert env.opponent_names == list(deckgym.registration.game(game).descriptor.default_opponents)
    assert env.core.obs == "infostate" and env.core.obs_size > env.opponents[0].core.obs_size
    obs, _ = envs.reset(seed=3)
    ended = 0
    for _ in range(150):
        assert obs.shape == (4, env.core.obs_size) and obs in envs.observation_space
        obs, _, term, trunc, _ = envs.step(np.argmax(env.action_masks(), axis=1))
        ended += int((term | trunc).sum())
    assert ended > 0


@pytest.mark.parametrize("game", list(IDS))
def test_mask_less_actions_end_their_games_as_in_the_single_agent_view(game):
    """``illegal_action="terminate"`` (the default, as ``gymnasium.make``'s view): a learner that
    ignores the masks (CleanRL's ``ppo.py``) plays on; each illegal action ends only its game,
    reward −1, a loss, with the action and the row's count in the infos; ``"raise"`` refuses."""
    envs = gymnasium.make_vec(IDS[game], num_envs=8, vectorization_mode="vector_entry_point", illegal_action="terminate")
    env = envs.unwrapped
    assert env.illegal_action == "terminate"
    assert gymnasium.make_vec(IDS[game], num_envs=2, vectorization_mode="vector_entry_point").unwrapped.illegal_action \
        == "terminate"
    rng = np.random.default_rng(0)
    obs, _ = envs.reset(seed=1)
    seen = np.zeros(8, np.int64)
    pending = np.zeros(8, bool)  # NEXT_STEP: the step after an end deals the next game
    for _ in range(60):
        masks = env.action_masks().copy()
        actions = rng.integers(0, env.single_action_space.n, 8)
        bad = ~masks[np.arange(8), actions] & ~pending
        before = obs.copy()
        obs, rew, term, trunc, infos = envs.step(actions)
        seen += bad
        assert (term[bad] & ~trunc[bad]).all() and (rew[bad] == -1.0).all()
        if bad.any():
            np.testing.assert_array_equal(infos["_illegal_action"], bad)
            np.testing.assert_array_equal(infos["illegal_action"][bad], actions[bad])
            np.testing.assert_array_equal(infos["illegal_actions"][bad], seen[bad])
            assert (infos["won"][bad] == 0).all() and (infos["round_points"][bad] == 0).all()
            np.testing.assert_array_equal(obs[bad], before[bad])  # the observation it was taken on
        else:
            assert "illegal_action" not in infos
        pending = term | trunc
    assert seen.sum() > 20
    np.testing.assert_array_equal(env.illegal_log.counts, seen)
    strict = DeckGymVectorEnv(game, num_envs=2, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="illegal learner action .* in game 0 in phase"):
        strict.step(np.argmin(strict.action_masks(), axis=1))
