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

from deckgym.registration import GAMES, game as game_entry

__all__ = ["VARIANTS", "Variant", "soak", "main"]


@dataclass(frozen=True)
class Variant:
    name: str
    game: str
    rules: dict[str, Any] = field(default_factory=dict)
    episode: str = "round"


def _variants() -> list[Variant]:
    """Every registered game's soak variants (its descriptor's ``invariants.VARIANTS``), named ``<game>_<name>``."""
    out = []
    for name, entry in GAMES.items():
        if entry.descriptor.invariants is None:
            continue
        out += [Variant(f"{name}_{v}", name, dict(rules), episode) for v, rules, episode in entry.descriptor.invariants_module().VARIANTS]
    return out


VARIANTS = _variants()


# -- the soak loop --------------------------------------------------------------------------------
def soak(variant: Variant, steps: int, batch: int = 4096, seed: int = 0, leak_every: int = 4) -> dict[str, Any]:
    """Play ``steps`` random legal agent-steps of ``variant`` on ``batch`` games; count violations."""
    entry = game_entry(variant.game)
    core = entry.make_core(entry.make_rules(**variant.rules), episode=variant.episode, reward="win")
    checks = entry.descriptor.invariants_module()
    cards_ok, hidden_shuffle, moves = checks.cards_ok, checks.hidden_shuffle, checks.moves
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
