"""
# Rack-O

A draw-and-discard card game for 2–4 players: be the first to get the 10 cards of your
rack in increasing order ("Rack-O"). The rules are ``docs/RULES.md`` R1–R12 (cited below).

| Import             | `from racko_env import env` (or `pettingzoo.make("aec", "deckgym/racko-v0")`) |
|--------------------|-------------------------------------------------------------------------------|
| Actions            | Discrete                                                                      |
| Parallel API       | No (turn-based; `is_parallelizable = False`)                                  |
| Manual Control     | No                                                                            |
| Agents             | `agents = ['player_0', …, 'player_{P-1}']`                                    |
| Agents             | 2–4 (`num_players`, default 2)                                                |
| Action Shape       | (1,)                                                                          |
| Action Values      | Discrete(13)                                                                  |
| Observation Shape  | `{"observation": (obs_size,), "action_mask": (13,)}`; obs_size = 12P + 2N + 8 (112 for 2 players, 144 for 3, 176 for 4) |
| Observation Values | observation in [0, 1] (scores may exceed 1 past the target); action_mask in {0, 1} |

## Arguments

``env(num_players=2, *, episode="round", reward="win", obs="default", illegal_action="raise",
render_mode=None, **rule_kwargs)``; ``rule_kwargs`` are the fields of
:class:`racko_env.rules.RackoRules`: ``deck_size`` (R1), ``min_run_to_win`` (R7), ``bonus``
(R10), ``partners`` and ``partner_bonus`` (R11), ``reshuffle`` ("shuffle"/"flip", R6),
``max_turns`` (R9), ``target_score`` (R12). An impossible setting raises ``ValueError``
naming the field.

- ``episode="round"``: an episode is one round (R3–R9). ``"match"``: rounds until a player
  (team) reaches ``target_score`` (R12); the next round is dealt automatically and the deal
  passes to the left.
- ``reward="win"``: zero-sum at the end of the episode (+1 per winner, losers share −1 each
  in total; all zero if everybody wins). A round always has a winner: a round capped by
  ``max_turns`` is won by the highest round score (R9: ties share), so it pays ±1 like
  any other, and only a tie of everybody pays all zero. ``"points"``: each seat's round
  points when a round ends (its team's points with partners).
- ``obs="default"``: the observation below; ``"infostate"``: the information state (what a
  player with perfect recall knows), the observation below followed by the public history
  (see "Information state" below).
- ``illegal_action="raise"`` raises ``IllegalActionError`` (a ``ValueError``) naming the
  legal actions; ``"terminate"`` ends the game with −1 for the offender (PettingZoo's
  ``TerminateIllegalWrapper`` behaviour).

## Turns and actions

A turn is two decisions by the same agent (R4): *choose* a pile, then *place* the card.
``agent_selection`` stays on the same agent for both.

| Action | Name            | Legal in phase                 | Meaning                                                       |
|--------|-----------------|--------------------------------|---------------------------------------------------------------|
| 0      | `draw`          | choose                         | take the top card of the face-down draw pile (R4; R6 reshuffles an empty one) |
| 1      | `take_discard`  | choose                         | take the top card of the discard pile (must then go into the rack) |
| 2..11  | `slot_1`..`slot_10` | place_discard, place_drawn | put the card in hand into slot i (slot 1 = front), discard the replaced card (R5) |
| 12     | `discard_drawn` | place_drawn                    | discard the card just drawn from the draw pile (R4)           |

Phases (``core.phase_names``): 0 ``choose``, 1 ``place_discard`` (holding the former
discard top), 2 ``place_drawn`` (holding a card drawn from the draw pile). The
``action_mask`` holds exactly the legal actions; it is all zeros for the other agents.

## Observation (layout version ``obs_version = 1``)

Ego-centric: "me" is the observing agent, opponents follow in seat order after me
(me+1, me+2, …). Cards are encoded as ``value / N`` (0 = none/unknown). Use
``core.obs_view(obs)`` to decode a batch of observations into named integer arrays instead
of using offsets; ``core.obs_slices`` gives the offsets. With P players, N cards,
K = N − 10·P:

| Offset         | Size       | Field (obs_view key) | Encoding                                                                 |
|----------------|------------|----------------------|--------------------------------------------------------------------------|
| 0              | 10         | `rack`               | my rack, slot 1 first, card / N                                          |
| 10             | 10·(P−1)   | `opp_known`          | per opponent (seat order after me), per slot: the card if publicly known to be there (it took it from the discard pile and has not swapped it out, R5), else 0; card / N |
| 10P            | 3          | `phase`              | one-hot: choose, place_discard, place_drawn (of the player to move)      |
| 10P+3          | P          | `to_move`            | one-hot of the player to move, relative to me (0 = me)                   |
| 11P+3          | 1          | `hand`               | the card I hold (0 unless I am in a place phase) / N                     |
| 11P+4          | 1          | `discard_top`        | top of the discard pile / N (0 if empty)                                 |
| 11P+5          | 1          | `draw_size`          | cards in the draw pile / K                                               |
| 11P+6          | 1          | `discard_size`       | cards in the discard pile / K                                            |
| 11P+7          | 1          | `turn`               | completed turns this round / max_turns (R9)                              |
| 11P+8          | P          | `scores`             | match totals in ego order (team totals with partners) / target_score     |
| 12P+8          | N          | `seen`               | card c−1: 1 if card c was face up this round (decoded as (B, N+1), index = card) |
| 12P+8+N        | N          | `in_discard`         | card c−1: 1 if card c is in the discard pile now (decoded as (B, N+1))   |

Nothing hidden is in it: never an opponent's unknown card, never a card drawn from the draw
pile by an opponent (even once put into its rack), never the order of the draw pile.
``env.state()`` gives the full state (every card) as a flat float32 vector in
``env.state_space``, for centralised critics (layout: :mod:`racko_env.core`,
``core.state_slices``); ``env.state_dict()`` the same in readable form, for debugging.

## Information state (``obs="infostate"``, layout version 2)

The observation above (offsets unchanged), then the round's public history per seat in ego
order (me first). With O = 12P + 2N + 8 the default size and L = 24 turns logged per seat
(obs_size = O + 20P + 3PN + N + 4PL: 624 for 2 players, 992 for 3, 1420 for 4):

| Offset         | Size  | Field (obs_view key) | Encoding                                                              |
|----------------|-------|----------------------|-----------------------------------------------------------------------|
| O              | 10·P  | `slot_out`           | per seat and slot: the card that last left it in a swap (R5) / N; 0: still the dealt card |
| O+10P          | 10·P  | `slot_age`           | turns since that swap / max_turns (0: never swapped)                  |
| O+20P          | P·N   | `took`               | per seat, card c−1: 1 if the seat took card c from the discard pile   |
| O+20P+PN       | P·N   | `thrown`             | per seat, card c−1: 1 if the seat drew card c and threw it at once    |
| O+20P+2PN      | P·N   | `left`               | per seat, card c−1: the slot (1..10) card c last left in its rack / 10 |
| O+20P+3PN      | N     | `discard_depth`      | card c−1: place in the discard pile, 1 = top, / K (0: not in it)      |
| O+20P+3PN+N    | P·L   | `log_top`            | per seat, its last L turns (newest first): the discard top when the turn began / N |
| … + PL         | P·L   | `log_kind`           | / 3: 1 took that card, 2 drew and swapped, 3 drew and threw it (0: no turn) |
| … + 2PL        | P·L   | `log_slot`           | the slot (1..10) the swap used / 10 (0: none)                         |
| … + 3PL        | P·L   | `log_out`            | the card the turn put on the discard pile / N                         |

Per-card fields decode as `(B, P, N+1)` / `(B, N+1)` arrays indexed by card, the log as
`(B, P, L)` ints. Version 1 was the same without the turn log. It never names
a card an opponent drew, nor the draw-pile order; every deal clears the history.
`racko_env.infostate` holds the code.

## Rewards and round results

See ``reward`` above. When a round ends, every agent's ``info`` gets ``round_points``,
``total_points`` (team values with partners), ``own_points`` (the seat's own R8/R10
points), ``went_out`` (bool) and ``run_bonus`` (R10). The keys are there from ``reset``
on, with neutral values until a round ends (0, False; ``total_points`` the deal's totals),
with ``illegal_move``, ``illegal_action`` and ``illegal_actions`` (:mod:`deckgym.aec`).
A round that hits ``max_turns`` (R9) is a truncation (``episode="round"``), its ``"win"``
rewards by R9 as above; a finished round or match is a termination.

## Explicit deals

``env.reset(seed=s, options={...})`` deals a given position (all keys optional):

- ``"racks"``: P lists of 10 cards, slot 1 first, one per seat;
- ``"draw_pile"``: cards on top of the draw pile, top first;
- ``"discard_pile"``: the discard pile, bottom first, top last (at least one card);
- ``"first_player"``: the seat that plays first (the dealer is the seat before it, R3);
- ``"scores"``: match totals per seat (for ``episode="match"``).

Unlisted cards are shuffled with the seed and dealt to the racks (if ``racks`` is absent),
then put beneath the listed draw-pile cards; with no discard pile the top draw-pile card is
turned up (R3). A card given twice or out of range, a rack of the wrong length, the wrong
number of racks or an unknown key raises ``ValueError`` naming it.

## Other methods

``env.unwrapped.rack(agent)`` → the agent's rack (slot 1 first);
``env.unwrapped.core`` → the batched :class:`racko_env.core.RackoCore` (same rules);
``render()`` in ``"ansi"`` (text) or ``"rgb_array"`` (picture) mode shows every rack.

## Version history

- v0 (obs layout 1): first release.
- v0, information state layout 2: each seat's last 24 turns appended (``log_*``); the
  default observation is unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils import wrappers

from deckgym.aec import CoreAECEnv
from racko_env import render as _render
from racko_env.core import RackoCore
from racko_env.rules import RackoRules

__all__ = ["env", "raw_env"]


class raw_env(CoreAECEnv):
    """Rack-O as a PettingZoo AEC env (see the module docstring).

    Args:
        num_players: table size, 2–4 (R1).
        episode: ``"round"`` (R3–R9), or ``"match"``: rounds until a player (team) reaches
            ``target_score`` (R12), the deal passing to the left.
        reward: ``"win"`` (zero-sum at the episode's end; a capped round is won by the highest
            round score, R9) or ``"points"`` (each seat's round points).
        obs: ``"default"``, or ``"infostate"``: the rack view followed by the public history.
        illegal_action: ``"raise"`` (an ``IllegalActionError`` naming the legal actions) or
            ``"terminate"`` (the game ends with −1 for the offender).
        render_mode: ``"human"``, ``"ansi"`` or ``"rgb_array"`` (every rack, for people).
        rule_kwargs: fields of :class:`racko_env.rules.RackoRules` (``deck_size``, ``bonus``,
            ``partners``, ``max_turns``, ...).
    """

    metadata = {"name": "racko_v0", "render_modes": ["human", "ansi", "rgb_array"], "is_parallelizable": False, "render_fps": 1}

    def __init__(
        self,
        num_players: int = 2,
        *,
        episode: str = "round",
        reward: str = "win",
        obs: str = "default",
        illegal_action: str = "raise",
        render_mode: str | None = None,
        **rule_kwargs: Any,
    ) -> None:
        rules = RackoRules(num_players=num_players, **rule_kwargs)
        core = RackoCore(rules, episode=episode, reward=reward, obs=obs)
        super().__init__(
            core,
            illegal_action=illegal_action,
            render_mode=render_mode,
            init_kwargs=dict(num_players=num_players, episode=episode, reward=reward, obs=obs, illegal_action=illegal_action,
                             render_mode=render_mode, **rule_kwargs),
        )


    def rack(self, agent: str) -> list[int]:
        """The cards of ``agent``'s rack, slot 1 (front) first."""
        if self.game_state is None:
            raise RuntimeError("call reset() before rack()")
        seat = self.agent_name_mapping[agent]
        return np.abs(self.game_state.racks[0, seat].astype(int)).tolist()

    def _render_ansi(self) -> str:
        return _render.ansi(self.core, self.game_state, 0)

    def _render_rgb(self) -> np.ndarray:
        return _render.rgb_array(self.core, self.game_state, 0)


def env(**kwargs: Any):
    """Rack-O AEC env wrapped in PettingZoo's standard wrappers."""
    e = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e
