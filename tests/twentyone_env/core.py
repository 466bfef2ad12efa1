"""Twenty-One's batched core (the contract of ``docs/CONTRACT.md``, written plainly, no kernels)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from deckgym.core import (BatchState, RebuiltWhenUnpickled, StepResult, check_actions, check_core_options,
                          check_game_index, check_init_args, check_obs_option, check_out, check_row_mask,
                          check_seat, illegal_actions_error, obs_rows, sample_legal, zero_sum_win_rewards)
from deckgym.rng import make_keys, shuffled
from tests.twentyone_env.rules import TwentyOneRules

DECK = 40
DRAW, STAND = 0, 1
ACTION_NAMES = ("draw", "stand")
PHASE_NAMES = ("turn",)


@dataclass
class TwentyOneState(BatchState):
    rng_key: np.ndarray  # (B,) uint64
    rng_counter: np.ndarray  # (B,) uint64
    deck: np.ndarray  # (B, 40) int8 card values in dealing order
    owner: np.ndarray  # (B, 40) int8 the seat that holds deck[i], -1 while face down
    top: np.ndarray  # (B,) int8 the next card to deal
    stood: np.ndarray  # (B, P) bool: stood or bust this round
    player: np.ndarray  # (B,) int8 the seat to move
    first: np.ndarray  # (B,) int8 the round's first player
    turn: np.ndarray  # (B,) int16 decisions this round
    wins: np.ndarray  # (B, P) int32 round wins in the match
    over: np.ndarray  # (B,) bool the episode ended (no legal action until reset_where)


class TwentyOneCore(RebuiltWhenUnpickled):
    action_names = ACTION_NAMES
    phase_names = PHASE_NAMES
    num_actions = 2
    obs_version = 1

    def __init__(self, rules: TwentyOneRules, episode: str = "round", reward: str = "win", obs: str = "default") -> None:
        check_core_options(episode, reward)
        check_obs_option(obs)
        if obs != "default":
            raise ValueError("Twenty-One has no information-state observation (obs='default' only)")
        self.rules, self.episode, self.reward, self.obs = rules, episode, reward, obs
        self.num_players = P = rules.num_players
        self.obs_size = 4 * P + 2
        self.obs_low = np.float32(0.0)
        # env.state(): every card's owner (one-hot over the seats, or face down), the deck top, who stood,
        # the seat to move, the round's turn count, the match wins
        self.state_slices = {"owner": slice(0, 40 * (P + 1)), "top": slice(40 * (P + 1), 40 * (P + 1) + 1)}
        off = 40 * (P + 1) + 1
        for name, n in (("stood", P), ("player", P), ("turn", 1), ("wins", P)):
            self.state_slices[name], off = slice(off, off + n), off + n
        self.state_size = off
        self.state_low = np.zeros(off, np.float32)
        self.state_high = np.ones(off, np.float32)
        self.state_high[self.state_slices["wins"]] = rules.rounds_to_win

    # -- dealing -----------------------------------------------------------------------------------
    def _deal_round(self, s: TwentyOneState, rows: np.ndarray, first: np.ndarray, deck: np.ndarray | None = None) -> None:
        P = self.num_players
        if deck is None:
            counters = s.rng_counter[rows]
            deck = shuffled(s.rng_key[rows], counters, DECK) // 4 + 1
            s.rng_counter[rows] = counters
        s.deck[rows] = deck
        s.owner[rows] = -1
        s.owner[rows, :P] = np.arange(P)  # one face-up card each
        s.top[rows] = P
        s.stood[rows] = False
        s.first[rows] = s.player[rows] = first
        s.turn[rows] = 0

    def _fresh(self, s: TwentyOneState, rows: np.ndarray) -> None:
        s.wins[rows] = 0
        s.over[rows] = False
        self._deal_round(s, rows, np.zeros(rows.size, np.int8))

    def _empty(self, keys: np.ndarray) -> TwentyOneState:
        B, P = keys.size, self.num_players
        return TwentyOneState(keys, np.zeros(B, np.uint64), np.zeros((B, DECK), np.int8), np.full((B, DECK), -1, np.int8),
                              np.zeros(B, np.int8), np.zeros((B, P), bool), np.zeros(B, np.int8), np.zeros(B, np.int8),
                              np.zeros(B, np.int16), np.zeros((B, P), np.int32), np.zeros(B, bool))

    def init(self, batch: int, seed: int, game_ids: np.ndarray | None = None) -> TwentyOneState:
        ids = check_init_args(batch, seed, game_ids)
        s = self._empty(make_keys(seed, ids))
        self._fresh(s, np.arange(batch))
        return s

    def reset_where(self, state: TwentyOneState, mask: np.ndarray) -> None:
        self._fresh(state, np.flatnonzero(check_row_mask(mask, state.batch_size)))

    def deal(self, seed: int, options: dict) -> TwentyOneState:
        """One game whose deck is ``options["deck"]``: the 40 card values in dealing order."""
        unknown = set(options) - {"deck"}
        if unknown:
            raise ValueError(f"unknown deal option(s) {sorted(unknown)}; valid: deck")
        deck = np.asarray(options.get("deck", []))
        if deck.shape != (DECK,) or sorted(deck.tolist()) != sorted(list(range(1, 11)) * 4):
            raise ValueError("deal option deck must be the 40 cards 1..10 (four of each) in dealing order")
        s = self.init(1, seed)
        self._deal_round(s, np.array([0]), np.zeros(1, np.int8), deck.astype(np.int8)[None])
        return s

    # -- reading -----------------------------------------------------------------------------------
    def totals(self, s: TwentyOneState) -> np.ndarray:
        """``(B, P)`` int: each seat's total this round."""
        held = s.owner[:, None, :] == np.arange(self.num_players)[None, :, None]
        return (held * s.deck[:, None, :].astype(np.int32)).sum(axis=2)

    def current_player(self, state: TwentyOneState) -> np.ndarray:
        return state.player.astype(np.int64)

    def phase(self, state: TwentyOneState) -> np.ndarray:
        return np.zeros(state.batch_size, np.int64)

    def alive(self, state: TwentyOneState) -> np.ndarray:
        return np.ones((state.batch_size, self.num_players), bool)

    def legal_action_mask(self, state: TwentyOneState) -> np.ndarray:
        live = ~state.over
        return np.stack([live & (state.top < DECK), live], axis=1)

    def sample_legal(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return sample_legal(mask, rng)

    # -- the turn ----------------------------------------------------------------------------------
    def step(self, state: TwentyOneState, actions: np.ndarray, check: bool = True) -> StepResult:
        s, B, P, r = state, state.batch_size, self.num_players, self.rules
        a = np.asarray(actions)
        if check:
            a = check_actions(actions, B, self.num_actions)
            masks = self.legal_action_mask(s)
            bad = np.flatnonzero(~masks[np.arange(B), a])
            if bad.size:
                raise illegal_actions_error(self, bad, a, self.phase(s)[bad], masks[bad])
        rows, p = np.arange(B), s.player.astype(np.int64)
        draw = np.flatnonzero(a == DRAW)
        s.owner[draw, s.top[draw].astype(np.int64)] = p[draw]
        s.top[draw] += 1
        totals = self.totals(s)
        s.stood[rows, p] |= (a == STAND) | (totals[rows, p] > r.target)
        s.turn += 1
        order = (p[:, None] + 1 + np.arange(P)[None, :]) % P  # the seats after the mover
        waiting = ~s.stood[rows[:, None], order]
        s.player[:] = np.where(waiting.any(axis=1), order[rows, np.argmax(waiting, axis=1)], p)
        capped = waiting.any(axis=1) & (s.turn >= r.max_turns)
        round_over = ~waiting.any(axis=1) | capped

        res = StepResult(np.zeros((B, P), np.float32), np.zeros(B, bool), np.zeros(B, bool), round_over,
                         np.zeros((B, P), np.int32), s.wins.copy(), np.zeros((B, P), bool),
                         {"capped": np.repeat(capped[:, None], P, axis=1)})
        if not round_over.any():
            return res
        ok = np.where(totals <= r.target, totals, -1)
        best = ok.max(axis=1, keepdims=True)
        round_win = (ok == best) & (best >= 0) & round_over[:, None]
        res.round_points[:] = round_win
        s.wins += round_win
        res.total_points[:] = s.wins
        if self.episode == "round":
            res.terminated[:] = round_over & ~capped
            res.truncated[:] = capped
            res.winners[:] = round_win
        else:
            res.terminated[:] = round_over & (s.wins >= r.rounds_to_win).any(axis=1)
            res.winners[:] = res.terminated[:, None] & (s.wins == s.wins.max(axis=1, keepdims=True))
        ended = res.terminated | res.truncated
        s.over |= ended
        if self.reward == "win":
            res.rewards[:] = zero_sum_win_rewards(res.winners) * ended[:, None]
        else:
            res.rewards[:] = res.round_points
        again = np.flatnonzero(round_over & ~ended)  # a match goes on: the next round
        if again.size:
            self._deal_round(s, again, ((s.first[again] + 1) % P).astype(np.int8))
        return res

    def empty_result(self, state: TwentyOneState) -> StepResult:
        """A step that ended nothing: zeros, and the match wins as the totals."""
        B, P = state.player.shape[0], self.num_players
        return StepResult(np.zeros((B, P), np.float32), np.zeros(B, bool), np.zeros(B, bool), np.zeros(B, bool),
                          np.zeros((B, P), np.int32), state.wins.copy(), np.zeros((B, P), bool),
                          {"capped": np.zeros((B, P), bool)})

    def state_array(self, state: TwentyOneState) -> np.ndarray:
        """``(B, state_size)`` float32: the whole table, hidden cards included (``state_slices``)."""
        B, P, sl = state.player.shape[0], self.num_players, self.state_slices
        out = np.zeros((B, self.state_size), np.float32)
        owner = np.where(state.owner < 0, P, state.owner).astype(np.int64)  # P: face down
        out[:, sl["owner"]] = np.eye(P + 1, dtype=np.float32)[owner].reshape(B, -1)
        out[:, sl["top"]] = state.top[:, None] / 40.0
        out[:, sl["stood"]] = state.stood
        out[:, sl["player"]] = np.eye(P, dtype=np.float32)[state.player.astype(np.int64)]
        out[:, sl["turn"]] = np.minimum(state.turn[:, None] / self.rules.max_turns, 1.0)
        out[:, sl["wins"]] = state.wins
        return out

    # -- observing ---------------------------------------------------------------------------------
    def observe(self, state: TwentyOneState, seat: Any, out: np.ndarray | None = None) -> np.ndarray:
        s, B, P = state, state.batch_size, self.num_players
        seat = check_seat(seat, B, P)
        if out is None:
            out = np.empty((B, self.obs_size), np.float32)
        check_out(out, B, self.obs_size)
        rel = (np.asarray(seat).reshape(-1, 1) + np.arange(P)[None, :]) % P  # ego-centric seats
        rows = np.arange(B)[:, None]
        out[:, :P] = self.totals(s)[rows, rel]
        out[:, P:2 * P] = s.stood[rows, rel]
        out[:, 2 * P:3 * P] = s.wins[rows, rel]
        out[:, 3 * P:4 * P] = rel == s.player[:, None]
        out[:, 4 * P] = DECK - s.top
        out[:, 4 * P + 1] = s.turn
        return out

    def obs_view(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        o, P = obs_rows(self, obs), self.num_players
        return {"totals": o[:, :P].astype(np.int64), "stood": o[:, P:2 * P] > 0, "wins": o[:, 2 * P:3 * P].astype(np.int64),
                "to_move": np.argmax(o[:, 3 * P:4 * P], axis=1), "deck_left": o[:, 4 * P].astype(np.int64),
                "turn": o[:, 4 * P + 1].astype(np.int64), "phase": np.zeros(len(o), np.int64)}

    def state_dict(self, state: TwentyOneState, b: int = 0) -> dict[str, Any]:
        s = state
        b = check_game_index(b, s.batch_size)
        hands = [[int(c) for c, o in zip(s.deck[b], s.owner[b]) if o == p] for p in range(self.num_players)]
        return {"rules": self.rules, "player": int(s.player[b]), "first": int(s.first[b]), "turn": int(s.turn[b]),
                "hands": hands, "totals": [sum(h) for h in hands], "stood": s.stood[b].tolist(),
                "wins": s.wins[b].tolist(), "deck": s.deck[b, int(s.top[b]):].tolist(), "over": bool(s.over[b])}
