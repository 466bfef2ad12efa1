"""Soak test of the game cores: millions of random legal steps per rules variant, checked.

    python -m deckgym.evaluation.soak                         # 10^7 agent-steps per variant, every variant
    python -m deckgym.evaluation.soak --steps 200000 --variants racko_2p leastscore_4p --json soak.json

Random legal agents play ``B`` games at once on each core (rounds and whole matches, the
games' default rules at several table sizes and the rule variants; in Rack-O nine placements
in ten go to the card's bucket slot, so that rounds are won, not only capped). After
every step:

- **cards**: every card exists exactly once (Rack-O: the racks and the piles hold 1..N;
  Least Score: the hands, floor, pending discards, dead pile and deck hold the 52 cards,
  and each hand's card word matches its bit set);
- **legal**: every live game has a legal action for the player to move;
- **zero-sum**: the ``"win"`` rewards of every finished episode sum to zero over the seats;
- **finite**: the observation of a random seat of every game is finite and inside the
  core's declared bounds;
- **leak** (every ``--leak-every`` steps): the cards that seat cannot see (the draw pile or
  deck, the opponents' cards not publicly known, a card an opponent just drew) are
  permuted among their hidden places, and the seat's observation must not change.

A violation is counted (and the first few described), never raised, so one run gives the
figures: steps, episodes, and violations per check. Exit status 1 if any check failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from deckgym.registration import game as game_entry

__all__ = ["VARIANTS", "Variant", "soak", "main"]


@dataclass(frozen=True)
class Variant:
    name: str
    game: str
    rules: dict[str, Any] = field(default_factory=dict)
    episode: str = "round"


VARIANTS = [
    Variant("racko_2p", "racko", {"num_players": 2}),
    Variant("racko_3p", "racko", {"num_players": 3}),
    Variant("racko_4p", "racko", {"num_players": 4}),
    Variant("racko_2p_bonus_flip_deck50", "racko", {"num_players": 2, "bonus": True, "reshuffle": "flip",
                                                    "deck_size": 50, "max_turns": 60}),
    Variant("racko_4p_partners", "racko", {"num_players": 4, "partners": True}),
    Variant("racko_2p_match_short", "racko", {"num_players": 2, "target_score": 60, "max_turns": 100}, "match"),
    Variant("racko_4p_partners_match", "racko", {"num_players": 4, "partners": True, "target_score": 300}, "match"),
    Variant("leastscore_2p", "leastscore", {"num_players": 2}),
    Variant("leastscore_4p", "leastscore", {"num_players": 4}),
    Variant("leastscore_8p", "leastscore", {"num_players": 8}),
    Variant("leastscore_4p_suited_3card_strict", "leastscore", {"num_players": 4, "sequence_same_suit": True,
                                                                "sequence_lengths": (3, 4, 5), "hand_size": 3,
                                                                "tie_wins": False, "max_turns": 40}),
    Variant("leastscore_4p_match", "leastscore", {"num_players": 4, "elimination_score": 50}, "match"),
    Variant("leastscore_6p_match_cap_continues", "leastscore", {"num_players": 6, "elimination_score": 25,
                                                                "cap_ends_match": False, "max_turns": 30}, "match"),
]


# -- the game-specific checks -------------------------------------------------------------------
def racko_cards_ok(core: Any, st: Any) -> np.ndarray:
    """(B,) bool: the racks and the piles hold every card 1..N exactly once."""
    B, K = st.piles.shape[0], core.pile_size
    cards = np.concatenate([np.abs(st.racks.astype(np.int16)).reshape(B, -1), st.piles[:, :K]], axis=1)
    return (np.sort(cards, axis=1) == np.arange(1, core.deck_size + 1)).all(axis=1) & (st.piles[:, K] == 0)


def racko_hidden_shuffle(core: Any, st: Any, seat: np.ndarray, rng: np.random.Generator) -> Any:
    """A copy of ``st`` with every card ``seat`` (per game) cannot see permuted among the hidden places."""
    B, P, K = st.piles.shape[0], core.num_players, core.pile_size
    vals = np.concatenate([st.racks.reshape(B, P * 10).astype(np.int16), st.piles[:, :K].astype(np.int16)], axis=1)
    M = vals.shape[1]
    owner = np.repeat(np.arange(P), 10)
    hidden = np.zeros((B, M), bool)
    hidden[:, : P * 10] = (owner[None, :] != seat[:, None]) & (vals[:, : P * 10] > 0)  # not publicly known
    s = st.disc_n.astype(np.int64)
    h = (st.phase != 0).astype(np.int64)
    col = np.arange(K)[None, :]
    hidden[:, P * 10:] = col < (K - s - h)[:, None]  # the draw pile
    drawn = (st.phase == 2) & (st.player != seat)  # a card an opponent drew from the pile
    hidden[:, P * 10:] |= drawn[:, None] & (col == (K - s - 1)[:, None])
    out = st.copy()
    new = _permute_hidden(vals, hidden, rng)
    out.racks[:] = new[:, : P * 10].reshape(B, P, 10).astype(st.racks.dtype)
    out.piles[:, :K] = new[:, P * 10:].astype(st.piles.dtype)
    return out


def _permute_hidden(vals: np.ndarray, hidden: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the values at the ``hidden`` columns randomly permuted among those columns."""
    B, M = vals.shape
    idx = np.arange(M, dtype=np.float64)
    order_a = np.argsort(np.where(hidden, idx, M + idx), axis=1)  # hidden columns first, in order
    order_b = np.argsort(np.where(hidden, rng.random((B, M)), M + idx), axis=1)  # hidden first, shuffled
    rows = np.arange(B)[:, None]
    new = vals.copy()
    new[rows, order_a] = vals[rows, order_b]
    return new


def _bits_matrix(bits: np.ndarray) -> np.ndarray:
    """(...,) 52-bit int64 sets → (..., 52) bool."""
    b = np.ascontiguousarray(bits, dtype=np.int64)
    return np.unpackbits(b.view(np.uint8).reshape(b.shape + (8,)), axis=-1, count=52, bitorder="little").astype(bool)


def _deck_matrix(st: Any) -> np.ndarray:
    """(B, 52) bool: the cards still face down in the deck."""
    B = st.deck.shape[0]
    live = np.arange(st.deck.shape[1])[None, :] >= st.top.astype(np.int64)[:, None]
    live &= st.deck < 52
    out = np.zeros((B, 53), bool)
    out[np.nonzero(live)[0], st.deck[live].astype(np.int64)] = True
    return out[:, :52]


def leastscore_cards_ok(core: Any, st: Any) -> np.ndarray:
    """(B,) bool: hands, floor, pending discards, dead pile and deck hold the 52 cards once each,
    and every hand's card word holds the cards of its bit set."""
    from leastscore_env.core import hand_word_bits

    places = np.concatenate([st.hand_bits, st.floor_bits[:, None], st.pending_bits[:, None], st.dead[:, None]], axis=1)
    count = _bits_matrix(places).sum(axis=1) + _deck_matrix(st)
    words_ok = (hand_word_bits(st.hands) == st.hand_bits).all(axis=1)
    floor_ok = hand_word_bits(st.floor) == st.floor_bits
    return (count == 1).all(axis=1) & words_ok & floor_ok


def leastscore_hidden_shuffle(core: Any, st: Any, seat: np.ndarray, rng: np.random.Generator) -> Any:
    """A copy of ``st`` in which the opponents' cards not publicly known and the deck are
    dealt again at random (each opponent keeps its hand size and its known cards)."""
    from leastscore_env.core import PAD, words_of

    B, P = st.hands.shape
    rows = np.arange(B)
    deck = _deck_matrix(st)
    unknown = np.where(np.arange(P)[None, :] != seat[:, None], st.hand_bits & ~st.known, 0)
    pool = deck | _bits_matrix(np.bitwise_or.reduce(unknown, axis=1))
    idx = np.arange(52, dtype=np.float64)
    perm = np.argsort(np.where(pool, rng.random((B, 52)), 52 + idx), axis=1)  # hidden cards first, shuffled
    out = st.copy()
    off = np.zeros(B, np.int64)
    j = np.arange(5)[None, :]
    for q in range(P):  # over seats, not games
        u = np.bitwise_count(unknown[:, q].view(np.uint64)).astype(np.int64)
        take = j < u[:, None]
        cards = perm[rows[:, None], np.minimum(off[:, None] + j, 51)]
        new_bits = np.bitwise_or.reduce(np.where(take, np.left_shift(np.int64(1), cards), 0), axis=1)
        bits = np.where(seat == q, st.hand_bits[:, q], (st.hand_bits[:, q] & st.known[:, q]) | new_bits)
        sorted_cards = np.sort(np.where(_bits_matrix(bits), np.arange(52), PAD), axis=1)[:, :5]
        out.hands[:, q] = words_of(sorted_cards.astype(np.uint8))
        out.hand_bits[:, q] = bits
        off += np.where(seat == q, 0, u)
    top = st.top.astype(np.int64)
    col = np.arange(st.deck.shape[1])[None, :]
    in_deck = (col >= top[:, None]) & (col < 52)
    src = np.clip(off[:, None] + col - top[:, None], 0, 51)
    out.deck[:] = np.where(in_deck, perm[rows[:, None], src], st.deck).astype(st.deck.dtype)
    legal_of = getattr(core, "_legal_of", None)
    if legal_of is not None:  # the opponents' legal discards follow their new hands
        mover_legal = st.legal[rows, st.cur.astype(np.int64)]
        out.legal[:] = legal_of(out.hands)
        out.legal[rows, st.cur.astype(np.int64)] = mover_legal
    return out


def racko_bucket_moves(core: Any, st: Any, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Nine placements in ten go to the card's bucket slot (still legal: any slot is): uniformly
    random play almost never builds an increasing rack, so rounds would only end at the cap
    and the win-and-bonus code would go unexercised."""
    K = core.pile_size
    rows = np.arange(st.piles.shape[0])
    hand = st.piles[rows, np.clip(K - st.disc_n.astype(np.int64) - 1, 0, K)].astype(np.int64)
    bucket = 2 + np.minimum(9, (hand - 1) * 10 // core.deck_size)
    place = (st.phase != 0) & (rng.random(rows.size) < 0.9)
    return np.where(place, bucket, actions)


def uniform_moves(core: Any, st: Any, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return actions


CHECKS = {
    "racko": (racko_cards_ok, racko_hidden_shuffle, racko_bucket_moves),
    "leastscore": (leastscore_cards_ok, leastscore_hidden_shuffle, uniform_moves),
}


# -- the soak loop --------------------------------------------------------------------------------
def soak(variant: Variant, steps: int, batch: int = 4096, seed: int = 0, leak_every: int = 4) -> dict[str, Any]:
    """Play ``steps`` random legal agent-steps of ``variant`` on ``batch`` games; count violations."""
    entry = game_entry(variant.game)
    core = entry.make_core(entry.make_rules(**variant.rules), episode=variant.episode, reward="win")
    cards_ok, hidden_shuffle, moves = CHECKS[variant.game]
    rng = np.random.default_rng(seed)
    st = core.init(batch, seed)
    P = core.num_players
    low = np.broadcast_to(np.asarray(getattr(core, "obs_low", -np.inf), np.float32), (core.obs_size,))
    high = np.broadcast_to(np.asarray(getattr(core, "obs_high", np.inf), np.float32), (core.obs_size,))
    returns = np.zeros((batch, P), np.float64)
    violations = {"cards": 0, "legal": 0, "zero_sum": 0, "finite": 0, "leak": 0}
    examples: list[str] = []
    episodes = rounds = leak_checks = won = 0
    t0 = time.perf_counter()

    def note(kind: str, rows: np.ndarray, step: int) -> None:
        violations[kind] += int(rows.size)
        if len(examples) < 10:
            examples.append(f"{kind}: step {step}, games {rows[:5].tolist()}")

    done_steps = 0
    step = 0
    while done_steps < steps:
        mask = core.legal_action_mask(st)
        bad = np.flatnonzero(~mask.any(axis=1))
        if bad.size:  # counted; those games are dealt again so the soak goes on
            note("legal", bad, step)
            core.reset_where(st, ~mask.any(axis=1))
            returns[bad] = 0.0
            mask = core.legal_action_mask(st)
        actions = moves(core, st, np.argmax(rng.random(mask.shape) * mask, axis=1).astype(np.int64), rng)
        res = core.step(st, actions)
        done_steps += batch
        step += 1
        returns += res.rewards
        rounds += int(res.round_over.sum())
        done = res.terminated | res.truncated
        if done.any():
            sums = np.abs(returns[done].sum(axis=1))
            bad = np.flatnonzero(done)[sums > 1e-4]
            if bad.size:
                note("zero_sum", bad, step)
            episodes += int(done.sum())
            won += int((res.terminated & res.winners.any(axis=1)).sum())
            returns[done] = 0.0
            core.reset_where(st, done)
        bad = np.flatnonzero(~cards_ok(core, st))
        if bad.size:
            note("cards", bad, step)
        seat = rng.integers(0, P, batch)
        obs = core.observe(st, seat)
        bad = np.flatnonzero(~(np.isfinite(obs) & (obs >= low) & (obs <= high)).all(axis=1))
        if bad.size:
            note("finite", bad, step)
        if step % leak_every == 0:
            other = core.observe(hidden_shuffle(core, st, seat, rng), seat)
            bad = np.flatnonzero((other != obs).any(axis=1))
            leak_checks += batch
            if bad.size:
                note("leak", bad, step)
    seconds = time.perf_counter() - t0
    return {"variant": variant.name, "game": variant.game, "rules": variant.rules, "episode": variant.episode,
            "agent_steps": done_steps, "batch": batch, "episodes": episodes, "episodes_won": won, "rounds": rounds,
            "leak_checks": leak_checks, "violations": violations, "examples": examples,
            "seconds": round(seconds, 1), "steps_per_second": round(done_steps / seconds)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m deckgym.evaluation.soak", description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--steps", type=int, default=10_000_000, help="random legal agent-steps per variant")
    p.add_argument("--batch", type=int, default=4096, help="games played at once (B)")
    p.add_argument("--seed", type=int, default=0, help="seed of the games and the random agents")
    p.add_argument("--leak-every", type=int, default=4, help="steps between two leak checks of every game")
    p.add_argument("--variants", nargs="+", default=None, metavar="NAME",
                   help=f"variants to run (None: all): {', '.join(v.name for v in VARIANTS)}")
    p.add_argument("--json", metavar="PATH", help="write the figures as JSON")
    args = p.parse_args(argv)
    names = {v.name: v for v in VARIANTS}
    chosen = args.variants or list(names)
    for flag, value in (("--steps", args.steps), ("--batch", args.batch), ("--leak-every", args.leak_every)):
        if value < 1:
            p.error(f"{flag} must be >= 1, got {value}")
    unknown = [n for n in chosen if n not in names]
    if unknown:
        p.error(f"unknown variants {unknown}; valid: {', '.join(names)}")
    if args.json:
        from deckgym.checks import check_output_file

        try:
            check_output_file(args.json, "--json", (".json",))
        except ValueError as exc:
            p.error(str(exc))
    results = []
    for name in chosen:
        r = soak(names[name], args.steps, args.batch, args.seed, args.leak_every)
        results.append(r)
        print(f"{name:<36} {r['agent_steps']:>12,} steps {r['episodes']:>10,} episodes ({r['episodes_won']:,} won) "
              f"{r['steps_per_second']:>9,}/s  violations {r['violations']}", flush=True)
        for e in r["examples"]:
            print(f"    {e}", flush=True)
    total = sum(sum(r["violations"].values()) for r in results)
    print(f"{len(results)} variants, {sum(r['agent_steps'] for r in results):,} agent-steps, {total} violations")
    if args.json:
        from deckgym.outputs import write_json

        write_json(args.json, {"command": "python -m deckgym.evaluation.soak " + " ".join(argv if argv is not None
                                                                                          else sys.argv[1:]),
                               "results": results, "violations": total})
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
