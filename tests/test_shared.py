"""The shared package: random streams, reward helper, registry, agent specs."""

import numpy as np
import pytest

from deckgym import rng
from deckgym.core import sample_legal, zero_sum_win_rewards
from deckgym.registration import GAMES, game


def test_stream_of_a_game_does_not_depend_on_batch():
    seed = 1234
    big_keys = rng.make_keys(seed, np.arange(64))
    big_ctr = np.zeros(64, dtype=np.uint64)
    small_keys = rng.make_keys(seed, np.array([37]))
    small_ctr = np.zeros(1, dtype=np.uint64)
    for _ in range(3):
        a = rng.random_u64(big_keys, big_ctr, 10)[37]
        b = rng.random_u64(small_keys, small_ctr, 10)[0]
        np.testing.assert_array_equal(a, b)
    assert big_ctr[37] == small_ctr[0] == 3


def test_different_seeds_and_games_give_different_streams():
    k1 = rng.make_keys(1, np.arange(100))
    k2 = rng.make_keys(2, np.arange(100))
    assert len(set(k1.tolist()) | set(k2.tolist())) == 200


def test_shuffled_rows_are_permutations_and_look_uniform():
    keys = rng.make_keys(7, np.arange(20000))
    ctr = np.zeros_like(keys)
    perm = rng.shuffled(keys, ctr, 5)
    assert (np.sort(perm, axis=1) == np.arange(5)).all()
    # position of card 0 is uniform over 5 places: chi-square with 4 dof, p < 1e-4 beyond 23.5
    counts = np.bincount(np.argmax(perm == 0, axis=1), minlength=5)
    expected = len(perm) / 5
    assert ((counts - expected) ** 2 / expected).sum() < 23.5


def test_random_below_in_range_and_uniform():
    keys = rng.make_keys(3, np.arange(30000))
    ctr = np.zeros_like(keys)
    x = rng.random_below(keys, ctr, 6)
    assert x.min() == 0 and x.max() == 5
    counts = np.bincount(x, minlength=6)
    expected = len(x) / 6
    assert ((counts - expected) ** 2 / expected).sum() < 25.7  # chi2(5), p ~ 1e-4


def test_make_keys_rejects_non_int_seed():
    with pytest.raises(TypeError, match="seed"):
        rng.make_keys("1", np.arange(2))


def test_seed_of_mixes_numbers_and_names():
    # numbers keep the seeds they always had (a shipped run's opponents are seeded with them)
    assert rng.seed_of(5, 7919, 2) == int(np.random.SeedSequence([5, 7919, 2]).generate_state(1)[0])
    assert rng.seed_of(0, 1, "racko:sequence") == rng.seed_of(0, 1, "racko:sequence")
    seeds = {rng.seed_of(0, 1, name) for name in ("racko:sequence", "racko:ranges", "random", "")}
    assert len(seeds) == 4
    assert rng.seed_of(0, 1, "random") != rng.seed_of(0, 2, "random")


@pytest.mark.parametrize(
    "winners, expected",
    [
        ([[True, False]], [[1.0, -1.0]]),
        ([[True, False, False, False]], [[1.0, -1 / 3, -1 / 3, -1 / 3]]),
        ([[True, True, False, False]], [[1.0, 1.0, -1.0, -1.0]]),
        ([[True, True]], [[0.0, 0.0]]),
        ([[False, False, False]], [[0.0, 0.0, 0.0]]),
    ],
)
def test_zero_sum_win_rewards(winners, expected):
    r = zero_sum_win_rewards(np.array(winners))
    np.testing.assert_allclose(r, expected, rtol=1e-6)
    np.testing.assert_allclose(r.sum(axis=1), 0.0, atol=1e-6)


def test_sample_legal_picks_only_legal_actions_uniformly_and_refuses_empty_rows():
    masks = np.zeros((3, 6), dtype=bool)
    masks[0, [1, 4]] = True
    masks[1, :] = True
    masks[2, 5] = True
    rng_ = np.random.default_rng(0)
    picks = np.stack([sample_legal(masks, rng_) for _ in range(3000)])
    assert picks.dtype == np.int64 and masks[np.arange(3), picks].all()
    assert abs((picks[:, 0] == 1).mean() - 0.5) < 0.05 and set(np.unique(picks[:, 1])) == set(range(6))
    assert np.array_equal(sample_legal(masks, np.random.default_rng(7)), sample_legal(masks, np.random.default_rng(7)))
    masks[1] = False
    with pytest.raises(ValueError, match=r"no legal action in rows \[1\]"):
        sample_legal(masks, rng_)
    with pytest.raises(ValueError, match="must be \\(B, num_actions\\)"):
        sample_legal(masks[0], rng_)


def test_unknown_game_lists_the_valid_ones():
    with pytest.raises(ValueError, match="racko.*leastscore"):
        game("poker")
    assert set(GAMES) == {"racko", "leastscore"}


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_cores_reject_unknown_episode_and_reward(game_name):
    entry = game(game_name)
    with pytest.raises(ValueError, match="episode"):
        entry.make_core(episode="season")
    with pytest.raises(ValueError, match="reward"):
        entry.make_core(reward="money")


@pytest.mark.parametrize("game", ["racko", "leastscore"])
def test_a_core_with_the_other_games_rules_is_a_type_error(game):
    # one convention for both games: a wrong rules object is a TypeError naming the class
    from racko_env import RackoCore, RackoRules
    from leastscore_env import LeastScoreCore, LeastScoreRules
    core, wrong, name = ((RackoCore, LeastScoreRules(), "RackoRules") if game == "racko"
                         else (LeastScoreCore, RackoRules(), "LeastScoreRules"))
    with pytest.raises(TypeError, match=f"rules must be a {name}, got"):
        core(wrong)


def test_size_cache_keeps_the_sizes_used_last():
    from deckgym.core import SizeCache

    made = []
    c = SizeCache(lambda b: made.append(b) or [b], keep=3)
    assert c.get(1) == [1] and c.get(2) == [2] and c.get(1) == [1] and made == [1, 2]
    c.get(3), c.get(4)  # 2 is the oldest now and leaves
    assert len(c) == 3 and c.get(2) == [2] and made == [1, 2, 3, 4, 2]


@pytest.mark.parametrize("game", sorted(GAMES))
def test_cores_keep_buffers_for_few_batch_sizes(game):
    """Batches that shrink as games end meet a new size at each step; the cores' per-size
    buffers stay bounded instead of one set for every size ever seen."""
    from deckgym.core import SizeCache
    from deckgym.registration import game as game_entry

    core = game_entry(game).make_core()
    for b in range(1, 60):
        st = core.init(b, b)
        core.observe(st, core.current_player(st))
        core.step(st, core.sample_legal(core.legal_action_mask(st), np.random.default_rng(b)))
    held = [core] + [part for part in vars(core).values() if hasattr(part, "__dict__")]  # the core's parts hold them
    caches = [v for obj in held for v in vars(obj).values() if isinstance(v, SizeCache)]
    assert caches and all(0 < len(c) <= c.keep for c in caches)


def test_one_seed_check_for_every_entry_point():
    import racko_env
    from deckgym.gym_env import DeckGymEnv
    from deckgym.rng import SeedError
    from deckgym.vector_env import DeckGymVectorEnv

    resets = (racko_env.env().reset, DeckGymEnv(opponents=["random"]).reset,
              DeckGymVectorEnv("racko", opponents=["random"]).reset)
    for reset in resets:
        for bad in (1.5, -1, True, "3"):
            with pytest.raises(SeedError, match="seed must be"):
                reset(seed=bad)
    with pytest.raises(SeedError, match="got -3"):
        DeckGymVectorEnv("racko", seed=-3)
