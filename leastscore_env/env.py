"""
# Least Score

```
from leastscore_env import env
```

| Import             | `from leastscore_env import env` (or `deckgym.game("leastscore").make_env()`) |
|--------------------|------------------------------------------------------------------------------|
| Actions            | Discrete                                                                     |
| Parallel API       | No                                                                           |
| Manual Control     | No                                                                           |
| Agents             | `agents= ['player_0', 'player_1', ...]` (2 to 8, default 4)                  |
| Agents             | 2-8                                                                          |
| Action Shape       | (1,)                                                                         |
| Action Values      | Discrete(38)                                                                 |
| Observation Shape  | (52 * (4 + P) + 15 + (P - 1) + 3 * P + 4,): 450 for 4 players                 |
| Observation Values | [0, 1] (scores: total / elimination_score, may pass 1 on the eliminating round) |

Least Score (seed 004, rules L1-L10 of `docs/RULES.md`) is a draw-and-discard card game with a
standard 52-card deck. Each player holds 5 hidden cards and wants the lowest hand total
(Ace 1, 2-10 face value, J/Q/K 10). On a turn a player either **declares** (once every
player still in the game has played a turn this round) or **plays**: discards a legal group
(one card, a pair, all four of a rank, a sequence of 3 or 5 ranks, or a five-card flush)
and then takes one card: the top of the deck or any one card the previous player
discarded (the *floor*). On a declaration all hands are shown: if the declarer's total is
the lowest (ties count for the declarer), everybody else scores their total minus the
declarer's; otherwise the declarer scores 20 plus the difference and the others 0.
**Lower points are better.** In a match, players reaching 100 points are eliminated until
one player is left.

### Arguments

```
env(num_players=4, episode="round", reward="win", obs="default", illegal_action="raise", render_mode=None, **rule_kwargs)
```

`episode`: `"round"` (an episode is one round) or `"match"` (rounds until one player is
left, L9). `reward`: `"win"` (+1 for the winners, the losers share -1 in a zero-sum way, at
the end of the episode; round winners are the players with the fewest round points) or
`"points"` (minus each player's points whenever a round ends). `illegal_action`:
`"raise"` (an `IllegalActionError`, a `ValueError`) or `"terminate"` (the offender gets -1
and the game ends, as PettingZoo's `TerminateIllegalWrapper`). `rule_kwargs` are fields of
`LeastScoreRules`: `hand_size`, `sequence_lengths`, `sequence_same_suit`, `tie_wins`,
`penalty`, `elimination_score` (25, 50 or 100 in the seed), `max_turns`, `first_player`,
`cap_ends_match`.

### Agents and turns

Every turn is two decisions by the same agent (L4): first the *discard* phase (discard a
group or declare), then the *draw* phase. `agent_selection` therefore stays on the same
agent for two steps. In `"match"` episodes an eliminated agent is terminated and then
removed from `agents` after its dead step (the usual PettingZoo way).

### Action space

| Action   | Phase   | Meaning                                                                  |
|----------|---------|--------------------------------------------------------------------------|
| 0 .. 30  | discard | discard the hand cards whose bits are set in `action + 1`: bit i = the   |
|          |         | i-th card of the hand in canonical order (A < 2 < ... < K, then C<D<H<S) |
| 31       | discard | declare (L7; legal once every player still in has played this round)     |
| 32       | draw    | take the top card of the deck (an empty deck is first refilled from the  |
|          |         | shuffled dead pile, L6)                                                  |
| 33 + j   | draw    | take the j-th card of the floor (floor in canonical order), j = 0..4     |

`observation["action_mask"]` holds exactly the legal actions: singles, pairs (exactly 2
cards of one rank), all four of a rank (never three), sequences of the allowed lengths
(ace low or high, no wrap-around), the five-card flush; in the draw phase the deck and each
floor card. `env.hand(agent)` lists an agent's cards in the order the action bits use,
e.g. `["AS", "10H", "KD"]`; `core.action_names` names every action.

### Observation space

`observation["observation"]` is a float32 vector, ego-centric (seats are listed from the
observing agent: itself, then the players to its left in turn order); `P` = number of
players. Use `env.unwrapped.core.obs_view(obs)` to decode a batch into named arrays (`hand`,
`hand_mask`, `floor`, `discard`, `seen`, `dead`, `opp_known`, `opp_hand_size`, `scores`,
`alive`, `to_move`, `phase`, `can_declare`, `deck_size`, `turn`) instead of raw offsets.

| Offset          | Size      | Field         | Meaning                                                       |
|-----------------|-----------|---------------|---------------------------------------------------------------|
| 0               | 52        | hand_mask     | own hand, one-hot over the 52 card ids (id = rank*4 + suit)   |
| 52              | 52        | floor         | the floor (cards the player to move may take)                 |
| 104             | 52        | discard       | draw phase: the cards the player to move just discarded       |
| 156             | 52        | seen          | every card that has been face up this round                   |
| 208             | 52        | dead          | the dead pile                                                 |
| 260             | 52*(P-1)  | opp_known     | per opponent (ego order): cards it is known to hold (taken    |
|                 |           |               | from the floor and not discarded since)                       |
| 52*(P+4)        | 15        | hand_slots    | per own hand slot (canonical order, as the action bits):      |
|                 |           |               | (rank+1)/13, (suit+1)/4, value/10; zeros for an empty slot    |
| +15             | P-1       | opp_hand_size | opponents' hand sizes / hand_size                             |
| +P-1            | P         | scores        | totals (ego order) / elimination_score                        |
| +P              | P         | alive         | still in the game (ego order)                                 |
| +P              | P         | to_move       | one-hot of the player to move (ego order)                     |
| +P              | 1         | phase         | 0 discard, 1 draw                                             |
| +1              | 1         | can_declare   | the player to move may declare now (L7)                       |
| +1              | 1         | deck_size     | cards in the deck / 52                                        |
| +1              | 1         | turn          | completed turns this round / max_turns                        |

Nothing hidden is ever in an observation: not an opponent's card drawn from the deck, not
the order of the deck. `env.state()` returns everything as a flat float32 vector in
`env.state_space`, for centralised critics (layout: `leastscore_env.core`,
`core.state_slices`); `env.state_dict()` the same in readable form, for debugging.

### Information state (`obs="infostate"`, layout version 1)

What a player with perfect recall knows: the observation above (offsets unchanged), then per
seat in ego order the round's public history. With O the default size (obs_size = O + 105P:
870 for 4 players):

| Offset   | Size  | Field    | Meaning                                                    |
|----------|-------|----------|------------------------------------------------------------|
| O        | 52·P  | thrown   | per seat, one-hot of the cards it threw this round          |
| O+52P    | 52·P  | picked   | per seat, one-hot of the cards it took from the floor       |
| O+104P   | P     | draws    | per seat, cards it drew from the deck this round / 52       |

`obs_view` decodes them as bool `(B, P, 52)` sets and int counts; every deal clears them.
`leastscore_env.infostate` holds the code.

### Rewards

`"win"`, `episode="round"`: at the end of the round, `+1` for each winner and `-k/(P-k)` for
each loser (`k` winners; everybody 0 if all or nobody win). A round truncated by the L10
cap has no winner (nobody declared; everybody scores 0), so its rewards are all 0.
`"win"`, `episode="match"`: an eliminated player leaves the game (it is removed from
`agents` after its dead step), so it is paid at once: `-1/(P-1)` on the step it is
eliminated (the zero-sum loser's value with one winner); when the match ends the winner
gets `+1`, so a match's rewards sum to 0. In the rare L9 tie (the last players all
eliminated in the same round with the same lowest total) each of the `k` tied winners gets
`+1` and the sum is `k - (P-k)/(P-1)`. A match truncated by the L10 cap has no winner: the
players still in share the eliminated players' losses equally (sum 0; all 0 if nobody was
eliminated). `"points"`: when a round ends, each player receives minus its round points
(lower points are better).

### Round results in infos

When a round ends every agent's info gets `round_points`, `total_points` and `hand_total`
(the L1 total of its hand when the round ended). The keys are there from `reset` on, with
neutral values until a round ends (0; `total_points` the deal's totals), with
`illegal_move`, `illegal_action` and `illegal_actions` (`deckgym.aec`).

### Explicit deals

`env.reset(seed=s, options={"hands": [["AS", "2H", ...], ...], "deck": [top, ...],
"floor": ["7C", ...], "first_player": k, "scores": [...]})`: one list of 1..hand_size cards
per player; `deck`, `floor`, `first_player` and `scores` are optional. Unlisted cards are
shuffled with the seed beneath the listed deck cards; without a floor, the top deck card is
turned up (L3). Duplicate or malformed cards, wrong hand sizes, a wrong number of hands and
unknown keys raise a `ValueError` naming the problem.

### Version history

* v0 (obs_version 1): initial release.
"""

from __future__ import annotations

from pettingzoo.utils import wrappers

from deckgym.aec import CoreAECEnv
from leastscore_env import render as _render
from leastscore_env.cards import card_str
from leastscore_env.core import LeastScoreCore
from leastscore_env.rules import LeastScoreRules

__all__ = ["env", "raw_env"]


class raw_env(CoreAECEnv):
    """Least Score as a PettingZoo AEC env (one game over the batched core, B = 1).

    Args:
        num_players: table size, 2–8 (L2).
        episode: ``"round"``, or ``"match"``: rounds until one player is left (L9).
        reward: ``"win"`` (the round's fewest points win, zero-sum at the episode's end) or
            ``"points"`` (minus each player's points whenever a round ends).
        obs: ``"default"``, or ``"infostate"``: the observation followed by the round's public history.
        illegal_action: ``"raise"`` (an ``IllegalActionError``) or ``"terminate"`` (the offender
            gets −1 and the game ends, as PettingZoo's ``TerminateIllegalWrapper``).
        render_mode: ``"human"``, ``"ansi"`` or ``"rgb_array"`` (the whole table, for people).
        rule_kwargs: fields of :class:`leastscore_env.rules.LeastScoreRules` (``hand_size``,
            ``elimination_score``, ``max_turns``, ...).
    """

    metadata = {"name": "leastscore_v0", "render_modes": ["human", "ansi", "rgb_array"], "is_parallelizable": False, "render_fps": 1}

    def __init__(
        self,
        num_players: int = 4,
        *,
        episode: str = "round",
        reward: str = "win",
        obs: str = "default",
        illegal_action: str = "raise",
        render_mode: str | None = None,
        **rule_kwargs,
    ) -> None:
        rules = LeastScoreRules(num_players=num_players, **rule_kwargs)
        core = LeastScoreCore(rules, episode=episode, reward=reward, obs=obs)
        super().__init__(
            core,
            illegal_action=illegal_action,
            render_mode=render_mode,
            init_kwargs=dict(
                num_players=num_players,
                episode=episode,
                reward=reward,
                obs=obs,
                illegal_action=illegal_action,
                render_mode=render_mode,
                **rule_kwargs,
            ),
        )

    def hand(self, agent: str) -> list[str]:
        """``agent``'s cards in canonical order (the order the discard-action bits use)."""
        if self.game_state is None:
            raise RuntimeError("call reset() before hand()")
        seat = self.agent_name_mapping[agent]
        return [card_str(c) for c in self.core.hand_cards(self.game_state)[0, seat] if c >= 0]

    def _render_ansi(self) -> str:
        return _render.ansi(self.core, self.game_state, 0)

    def _render_rgb(self):
        return _render.rgb_array(self.core, self.game_state, 0)


def env(**kwargs) -> wrappers.OrderEnforcingWrapper:
    """``raw_env`` in PettingZoo's standard wrappers."""
    e = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e
