"""Least Score as an OpenSpiel game, ``python_leastscore``: the rules of ``docs/RULES.md``
(L1–L10) for one game, in plain Python, written to be read before the batched core
(:mod:`leastscore_env`).

Which copy of the rules is normative: the batched core (:class:`leastscore_env.LeastScoreCore`)
is the product, what every env, agent and trainer plays. This module is the readable reference
that checks it: ``tests/test_openspiel_oracle.py`` plays both with the same chance outcomes and
compares every legal-action set, observation, reward and score. Where the two disagree, the
test fails, and ``docs/RULES.md`` decides which one is wrong.

``pyspiel.load_game("python_leastscore(num_players=3)")`` once :mod:`deckgym.openspiel` is
imported. Every field of :class:`leastscore_env.LeastScoreRules` is a parameter with the same
name and default (``sequence_lengths`` as text, ``"3_5"``: a game string would end the parameter
at a comma and read digits and ``+`` as a number), plus ``episode`` ("round"/"match")
and ``reward`` ("win"/"points").

Chance is explicit: the first player (L3, ``first_player="random"``), every card of the deal,
one at a time, and every card drawn from the deck. The deck is face down and shuffled, so its
top card is a uniform draw from its cards; after L6 the dead pile is that deck. Cards are ids
``rank * 4 + suit`` (:mod:`leastscore_env.cards`); player actions are the core's ids
(:mod:`leastscore_env.state`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pyspiel

from deckgym.openspiel.common import (GameConfig, Observer, StateViews, game_type, make_info, resample_with_belief,
                                      safe_deserialize, variant_type, win_rewards)
from leastscore_env.cards import card_str
from leastscore_env.rules import LeastScoreRules


DECLARE, DRAW_DECK, TAKE_FLOOR = 31, 32, 33  # actions 0..30 throw the hand slots of the bits of a + 1
PARAMS = {"num_players": 4, "hand_size": 5, "sequence_lengths": "3_5", "sequence_same_suit": False,
          "tie_wins": True, "penalty": 20, "elimination_score": 100, "max_turns": 200, "first_player": "random",
          "cap_ends_match": True, "episode": "round", "reward": "win"}
GAME_TYPE = game_type("python_leastscore", "Python Least Score (deckgym)", PARAMS, max_players=8)


def rank(card: int) -> int:
    return card // 4  # 0 = ace ... 12 = king


def value(card: int) -> int:
    """L1: ace 1, two to ten their number, jack, queen and king 10."""
    return min(rank(card) + 1, 10)


def is_group(cards: list[int], rules: LeastScoreRules) -> bool:
    """L5: may these cards (sorted) be thrown away together?"""
    ranks = [rank(c) for c in cards]
    one_suit = len({c % 4 for c in cards}) == 1
    if len(cards) == 1:
        return True
    if len(cards) in (2, 4) and len(set(ranks)) == 1:  # a pair, or all four of a rank; never three
        return True
    if len(cards) in rules.sequence_lengths and (one_suit or not rules.sequence_same_suit):
        low = all(b == a + 1 for a, b in zip(ranks, ranks[1:]))
        high = ranks[0] == 0 and ranks[1:] == list(range(14 - len(cards), 13))  # ace high: Q-K-A; no wrap
        if low or high:
            return True
    return len(cards) == 5 and one_suit  # a flush: a whole hand of five, one suit


@lru_cache(maxsize=1 << 16)
def legal_groups(ranks: tuple[int, ...], suits: tuple[int, ...] | bool, rules: LeastScoreRules) -> tuple[int, ...]:
    """L5: the discard actions of a sorted hand, from its ranks and its suits (or, when only a
    flush needs them, whether the hand is one), remembered for the next hand of that shape."""
    if not isinstance(suits, tuple):  # one suit for all five cards, or any suits that are not a flush
        suits = (0,) * 5 if suits else (0, 1, 2, 3, 0)[: len(ranks)]
    hand = [r * 4 + s for r, s in zip(ranks, suits)]
    return tuple(a for a in range(31) if max(slots(a)) < len(hand) and is_group([hand[i] for i in slots(a)], rules))


class LeastScoreGame(pyspiel.Game):
    """``python_leastscore``: Least Score with every rules field as a parameter (module docstring)."""

    #: the layouts of ``observation_tensor`` and ``information_state_tensor``: the cores' versions
    obs_version, infostate_version = 1, 1

    def __init__(self, params: dict | None = None) -> None:
        p = {**PARAMS, **(params or {})}
        try:
            seq = tuple(int(x) for x in str(p["sequence_lengths"]).replace(",", "_").split("_") if x.strip())
        except ValueError:
            raise ValueError(f"sequence_lengths must be ints joined by '_', e.g. '3_5', got {p['sequence_lengths']!r}") from None
        rules = LeastScoreRules(num_players=p["num_players"], hand_size=p["hand_size"], sequence_lengths=seq,
                                sequence_same_suit=p["sequence_same_suit"], tie_wins=p["tie_wins"],
                                penalty=p["penalty"], elimination_score=p["elimination_score"],
                                max_turns=p["max_turns"], first_player=p["first_player"],
                                cap_ends_match=p["cap_ends_match"])
        self.config = GameConfig("leastscore", rules, p["episode"], p["reward"])
        self.config.observers = (LeastScoreObserver(self.config, False), LeastScoreObserver(self.config, True))
        P = rules.num_players
        round_len = 3 * rules.max_turns + 5 * P + 2
        match = p["episode"] == "match"
        rounds = (P - 1) * rules.elimination_score if match else 1  # a non-capped round adds >= 1 point
        worst = rules.elimination_score + rules.penalty + 50 if match else rules.penalty + 50
        zero_sum = p["reward"] == "win" and not match  # L9: tied winners, players out paid as they leave
        low, high = (-(P - 1.0), float(P)) if p["reward"] == "win" else (-float(worst), 0.0)
        super().__init__(variant_type(GAME_TYPE, p["episode"], zero_sum),
                         make_info(38, 52, P, low, high, round_len * rounds if not match or rules.cap_ends_match
                                   else 10**9, zero_sum), p)

    def new_initial_state(self, *args) -> "LeastScoreState":
        return LeastScoreState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> Observer:
        return LeastScoreObserver(self.config, iig_obs_type is None or iig_obs_type.perfect_recall, params)

    def deserialize_state(self, text: str) -> "LeastScoreState":
        """The state ``serialize`` wrote: its actions replayed (never unpickled)."""
        return safe_deserialize(self, text)


class LeastScoreState(StateViews, pyspiel.State):
    """One Least Score game (a round, or a match of rounds with eliminations, L9)."""

    def __init__(self, game: LeastScoreGame) -> None:
        super().__init__(game)
        self.cfg = game.config
        P = self.cfg.rules.num_players
        self.totals, self.alive = [0] * P, [True] * P
        self.rewards_now, self.sums = [0.0] * P, [0.0] * P
        self.round_points, self.hand_totals = [0] * P, [0] * P
        self.over = self.truncated = False
        self.first = 0 if self.cfg.rules.first_player == "seat0" else -1  # L3: else drawn by chance
        self._new_round()

    # -- the deal (L3) -----------------------------------------------------------------------
    def _new_round(self) -> None:
        P = self.cfg.rules.num_players
        self.hands = [[] for _ in range(P)]  # sorted card ids
        self.known = [set() for _ in range(P)]  # L4: taken from the floor, still held
        self.undealt, self.dealt = list(range(52)), 0
        self.deck, self.floor, self.pending, self.dead, self.seen = [], [], [], set(), set()
        self.cur, self.phase, self.turn = self.first, 0, 0
        self.thrown = [set() for _ in range(P)]
        self.picked = [set() for _ in range(P)]
        self.draws = [0] * P
        self.events: list[str] = []

    def next_deal(self) -> tuple[int, int]:
        """(seat, card number) of the next card dealt, one at a time round the players still in
        from the first player; (-1, 0) for the card turned up as the first floor."""
        P, hs = self.cfg.rules.num_players, self.cfg.rules.hand_size
        order = [(self.first + j) % P for j in range(P) if self.alive[(self.first + j) % P]]
        if self.dealt < hs * len(order):
            return order[self.dealt % len(order)], self.dealt // len(order)
        return -1, 0

    def _deal_card(self, card: int) -> None:
        seat, _ = self.next_deal()
        self.undealt.remove(card)
        self.dealt += 1
        if seat >= 0:
            self.hands[seat] = sorted(self.hands[seat] + [card])
            return
        self.floor = [card]  # L3: the deck's top card turned up, the first player's floor
        self.seen.add(card)
        self.deck, self.undealt = self.undealt, []
        self.events.append(f"up{card_str(card)}")

    # -- OpenSpiel's interface ---------------------------------------------------------------
    def current_player(self) -> int:
        if self.over:
            return pyspiel.PlayerId.TERMINAL
        if self.first < 0 or self.undealt or self.drawing():
            return pyspiel.PlayerId.CHANCE
        return self.cur

    def drawing(self) -> bool:
        """A card of the deck is being drawn (a chance node)."""
        return self.phase == 2

    def is_terminal(self) -> bool:
        return self.over

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The first player, a card of the deal, or the deck's card drawn (L3, L4)."""
        options = [s for s in range(self.cfg.rules.num_players)] if self.first < 0 else (self.undealt or self.deck)
        return [(o, 1.0 / len(options)) for o in options]

    def _legal_actions(self, player: int) -> list[int]:
        if self.phase == 1:  # L4: the deck's top card or any one floor card
            return [DRAW_DECK] + [TAKE_FLOOR + j for j in range(len(self.floor))]
        hand = self.hands[self.cur]
        flush = len(hand) == 5 and len({c % 4 for c in hand}) == 1
        suits = tuple(c % 4 for c in hand) if self.cfg.rules.sequence_same_suit else flush
        legal = list(legal_groups(tuple(rank(c) for c in hand), suits, self.cfg.rules))
        if self.turn >= sum(self.alive):  # L7: everybody still in has played once
            legal.append(DECLARE)
        return legal

    def _apply_action(self, action: int) -> None:
        if not self.is_chance_node():  # rewards last from a player's action to the next one
            self.rewards_now = [0.0] * self.cfg.rules.num_players
        if self.first < 0:
            self.first = self.cur = action
        elif self.undealt:
            self._deal_card(action)
        elif self.drawing():
            self._take(action)
        elif action == DECLARE:  # L7: the hands are shown, the round ends
            self.phase = 1
            self.events.append(f"{self.cur}declare")
            self._end_round(declared=True)
        elif self.phase == 0:
            self._throw(action)
        elif action == DRAW_DECK:
            if not self.deck:  # L6: the dead pile, shuffled, is the new deck
                self.deck, self.dead = sorted(self.dead), set()
                self.events.append("rebuild")
            self.phase = 2  # the chance node draws the card
            self.events.append(f"{self.cur}deck")
        else:
            self.known[self.cur].add(self.floor[action - TAKE_FLOOR])
            self.picked[self.cur].add(self.floor[action - TAKE_FLOOR])
            self._take(self.floor[action - TAKE_FLOOR])

    def _throw(self, action: int) -> None:
        """L4, first half: the group (L5) goes face up; it will be the next player's floor."""
        hand = self.hands[self.cur]
        self.pending = [hand[i] for i in slots(action)]
        self.hands[self.cur] = [c for c in hand if c not in self.pending]
        self.known[self.cur] -= set(self.pending)
        self.thrown[self.cur] |= set(self.pending)
        self.seen |= set(self.pending)
        self.phase = 1
        self.events.append(f"{self.cur}throw" + "+".join(map(card_str, self.pending)))

    def _take(self, card: int) -> None:
        """L4, second half: one card joins the hand; the floor cards left go dead; the turn passes."""
        if self.drawing():
            self.deck.remove(card)
            self.draws[self.cur] += 1
        else:
            self.events.append(f"{self.cur}floor{card_str(card)}")
        self.hands[self.cur] = sorted(self.hands[self.cur] + [card])
        self.dead |= set(self.floor) - {card}
        self.floor, self.pending = self.pending, []
        self.turn += 1
        self.cur = self.next_seat(self.cur)
        self.phase = 0
        if self.turn >= self.cfg.rules.max_turns:  # L10: the round is capped
            self._end_round(declared=False)

    def next_seat(self, seat: int) -> int:
        """The next seat to the left still in the game."""
        P = self.cfg.rules.num_players
        return next((seat + j) % P for j in range(1, P + 1) if self.alive[(seat + j) % P])

    # -- the end of a round (L8–L10) ---------------------------------------------------------
    def _end_round(self, declared: bool) -> None:
        rules, P, episode = self.cfg.rules, self.cfg.rules.num_players, self.cfg.episode
        totals = [sum(value(c) for c in h) for h in self.hands]
        pts = [0] * P  # L10: a capped round scores nothing
        if declared:  # L8
            d = totals[self.cur]
            m = min(totals[s] for s in range(P) if self.alive[s] and s != self.cur)
            if d < m or (d == m and rules.tie_wins):
                pts = [totals[s] - d if self.alive[s] else 0 for s in range(P)]
            else:
                pts[self.cur] = rules.penalty + d - m
        self.totals = [a + b for a, b in zip(self.totals, pts)]
        self.round_points, self.hand_totals = pts, totals
        paid = [-x for x in pts] if self.cfg.reward == "points" else [0.0] * P
        if episode == "round" or (not declared and rules.cap_ends_match):
            self.over, self.truncated = True, not declared
            if self.cfg.reward == "win" and declared:  # the fewest round points win the round
                best = min(pts[s] for s in range(P) if self.alive[s])
                paid = win_rewards([self.alive[s] and pts[s] == best for s in range(P)])
            elif self.cfg.reward == "win" and episode == "match":  # players still in pay back the eliminated
                n = sum(self.alive)
                paid = [(P - n) / ((P - 1) * n) if self.alive[s] else 0.0 for s in range(P)]
            return self._pay(paid)
        out = [self.alive[s] and self.totals[s] >= rules.elimination_score for s in range(P)]  # L9
        self.alive = [a and not o for a, o in zip(self.alive, out)]
        winners = [False] * P
        if sum(self.alive) <= 1:  # the last player in wins, or the lowest of those out together
            lowest = min(self.totals[s] for s in range(P) if out[s])
            winners = self.alive if any(self.alive) else [out[s] and self.totals[s] == lowest for s in range(P)]
            self.over = True
        if self.cfg.reward == "win":  # a player out is paid its loss when it leaves
            paid = [1.0 if winners[s] else (-1.0 / (P - 1) if out[s] else 0.0) for s in range(P)]
        self._pay(paid)
        if not self.over:  # the next round: the start passes left among the players still in
            self.first = self.next_seat(self.first)
            self._new_round()

    # -- strings, copies, beliefs --------------------------------------------------------------
    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"seat {action}" if self.first < 0 else card_str(action)
        if action < 31:
            return "throw slots " + "+".join(str(i + 1) for i in slots(action))
        return "declare" if action == DECLARE else ("draw_deck" if action == DRAW_DECK else f"take_floor_{action - 33}")

    def __str__(self) -> str:
        hands = "\n".join(f"seat {s}: " + " ".join(map(card_str, h)) + ("" if self.alive[s] else " (out)")
                          for s, h in enumerate(self.hands))
        return (f"{hands}\nfloor: {' '.join(map(card_str, self.floor))}  thrown: {' '.join(map(card_str, self.pending))}"
                f"\ndeck: {len(self.deck)}  dead: {len(self.dead)}  to move: {self.cur}  phase: {self.phase}  "
                f"turn: {self.turn}  scores: {self.totals}")

    def resample_from_infostate(self, player: int, sampler=None, belief: str = "uniform") -> "LeastScoreState":
        """A state ``player`` cannot tell from this one, drawn by deckgym's belief sampler
        (``belief``: ``"uniform"``, ``"prior"``, ``"particles"``; :mod:`deckgym.agents.leastscore_belief`)."""
        return resample_with_belief(self, player, sampler, belief)

    def set_world(self, me: int, world) -> None:
        """Put a belief's world (seat 0 = ``me``) in place: the opponents' hands and the deck."""
        P = self.cfg.rules.num_players
        for j in range(1, P):
            word = int(world.hands[0, j])
            self.hands[(me + j) % P] = [b for b in word.to_bytes(8, "little") if b < 52]
        self.deck = sorted(int(c) for c in world.deck[0, int(world.top[0]):52])


def slots(action: int) -> list[int]:
    """The hand slots (canonical order) thrown by discard action ``action``: the bits of ``action + 1``."""
    return SLOTS[action]


SLOTS = [[i for i in range(5) if (a + 1) >> i & 1] for a in range(31)]


class LeastScoreObserver(Observer):
    """``observation_tensor`` = deckgym's default observation (:mod:`leastscore_env.env`);
    ``information_state_tensor`` = its ``obs="infostate"`` one (:mod:`leastscore_env.infostate`)."""

    def __init__(self, cfg: GameConfig, perfect_recall: bool, params=None) -> None:
        r, P = cfg.rules, cfg.rules.num_players
        pieces = [(name, 52, 1) for name in ("hand_mask", "floor", "discard", "seen", "dead")]
        pieces += [("opp_known", 52 * (P - 1), 1), ("hand_slots", 15, 1), ("opp_hand_size", P - 1, 1 / r.hand_size),
                   ("scores", P, 1 / r.elimination_score), ("alive", P, 1), ("to_move", P, 1), ("phase", 1, 1),
                   ("can_declare", 1, 1), ("deck_size", 1, 1 / 52), ("turn", 1, 1 / r.max_turns)]
        if perfect_recall:
            pieces += [("thrown", 52 * P, 1), ("picked", 52 * P, 1), ("draws", P, 1 / 52)]
        super().__init__(cfg, pieces, params)

    def values(self, st: LeastScoreState, me: int) -> np.ndarray:
        """The observation of seat ``me`` before scaling, opponents in ego order."""
        P = self.cfg.rules.num_players
        seats = [(me + j) % P for j in range(P)]
        v = []
        hand = st.hands[me] + [None] * (5 - len(st.hands[me]))
        for c in hand:  # per slot: (rank + 1) / 13, (suit + 1) / 4, value / 10
            v += [0.0] * 3 if c is None else [(rank(c) + 1) / 13, (c % 4 + 1) / 4, value(c) / 10]
        v += [len(st.hands[q]) for q in seats[1:]] + [st.totals[q] for q in seats]
        v += [st.alive[q] for q in seats] + [st.cur == q for q in seats]
        v += [min(st.phase, 1), st.phase == 0 and st.turn >= sum(st.alive), len(st.deck), st.turn]
        blocks = [st.hands[me], st.floor, st.pending, st.seen, st.dead] + [st.known[q] for q in seats[1:]]
        parts = [card_blocks(blocks), np.asarray(v, np.float32)]
        if "thrown" in self.dict:
            parts += [card_blocks([st.thrown[q] for q in seats] + [st.picked[q] for q in seats]),
                      np.asarray([st.draws[q] for q in seats], np.float32)]
        return np.concatenate(parts)

    def string_from(self, st: LeastScoreState, me: int) -> str:
        P = self.cfg.rules.num_players
        text = (f"seat {me} hand {' '.join(map(card_str, st.hands[me]))} | floor {' '.join(map(card_str, st.floor))} "
                f"| thrown {' '.join(map(card_str, st.pending))} | deck {len(st.deck)} | to move {st.cur} phase "
                f"{st.phase} turn {st.turn} | hand sizes {[len(h) for h in st.hands]} | known "
                + " ".join(f"{q}:" + ",".join(map(card_str, sorted(st.known[q]))) for q in range(P) if q != me)
                + f" | scores {st.totals} alive {[int(a) for a in st.alive]}")
        if "thrown" in self.dict:  # perfect recall: the public history of the round
            text += " | " + " ".join(st.events)
        return text


def card_blocks(blocks: list) -> np.ndarray:
    """52-card blocks end to end: 1 for each card listed in a block."""
    out = np.zeros(52 * len(blocks), np.float32)
    out[[52 * k + c for k, ids in enumerate(blocks) for c in ids]] = 1
    return out


def params_of(rules: LeastScoreRules) -> dict:
    """The game parameters of ``rules`` (``sequence_lengths`` as ``"3_5"``)."""
    p = {k: getattr(rules, k) for k in rules.__dataclass_fields__}
    p["sequence_lengths"] = "_".join(map(str, p["sequence_lengths"]))
    return p


def resume(s: "LeastScoreState", core: Any, st: Any, b: int) -> None:
    """Set the new state ``s`` to game ``b`` of the core state ``st`` (an ``obs="infostate"`` core's)."""
    P = st.hands.shape[1]

    def cards(bits: Any) -> list[int]:
        return [c for c in range(52) if int(bits) >> c & 1]

    s.hands = [cards(st.hand_bits[b, p]) for p in range(P)]
    s.known = [set(cards(st.known[b, p])) for p in range(P)]
    s.floor, s.pending = cards(st.floor_bits[b]), cards(st.pending_bits[b])
    s.deck, s.dead, s.seen = sorted(st.deck[b, int(st.top[b]):52].tolist()), set(cards(st.dead[b])), set(cards(st.seen[b]))
    s.undealt, s.totals = [], st.scores[b].astype(int).tolist()
    s.alive = [bool(int(st.alive[b]) >> p & 1) for p in range(P)]
    s.cur, s.first, s.phase, s.turn = int(st.player[b]), int(st.first[b]), int(st.phase[b]), int(st.turn[b])
    s.thrown = [set(cards(st.thrown[b, p])) for p in range(P)]
    s.picked = [set(cards(st.picked[b, p])) for p in range(P)]
    s.draws = st.draws[b].astype(int).tolist()

def feed_deal(core: Any, st: Any, os_state: "LeastScoreState") -> None:
    """The core's deal (L3) of game 0 of ``st`` as the OpenSpiel state's chance outcomes (the oracle's lock step)."""
    if os_state.first < 0:
        os_state.apply_action(int(st.first[0]))
    if os_state.first != int(st.first[0]):
        raise AssertionError(f"first player: openspiel {os_state.first}, core {int(st.first[0])}")
    hands = core.hand_cards(st)[0]
    while os_state.is_chance_node():
        seat, _ = os_state.next_deal()
        if seat >= 0:
            held = [int(c) for c in hands[seat] if c >= 0 and int(c) not in os_state.hands[seat]]
            os_state.apply_action(held[0])
        else:  # the card turned up: the floor
            floor = [c for c in range(52) if int(st.floor_bits[0]) >> c & 1]
            os_state.apply_action(floor[0])


_ROUND_CORES: dict = {}


def drawn_card(core: Any, st: Any, before: Any, a: int, os_state: "LeastScoreState") -> int:
    """The card the core just drew: the drawer's new card, from the step replayed on ``before`` (the
    state before it) in a round episode (a match may have dealt anew since)."""
    key = (core.rules, core.reward)
    round_core = _ROUND_CORES.get(key) or _ROUND_CORES.setdefault(
        key, type(core)(core.rules, episode="round", reward=core.reward, obs="infostate"))
    round_core.step(before, np.array([a]))
    held = [int(c) for c in round_core.hand_cards(before)[0, os_state.cur]
            if c >= 0 and int(c) not in os_state.hands[os_state.cur]]
    if len(held) != 1:
        raise AssertionError(f"the drawn card: {held}")
    return held[0]


pyspiel.register_game(GAME_TYPE, LeastScoreGame)  # as OpenSpiel's own games do: importing the module registers it
