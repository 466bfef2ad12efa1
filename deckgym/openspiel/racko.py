"""Rack-O as an OpenSpiel game, ``python_racko``: the rules of ``docs/RULES.md`` (R1–R12) for
one game, in plain Python, written to be read before the batched core (:mod:`racko_env`).

Which copy of the rules is normative: the batched core (:class:`racko_env.RackoCore`) is the
product, what every env, agent and trainer plays. This module is the readable reference that
checks it: ``tests/test_openspiel_oracle.py`` plays both with the same chance outcomes and
compares every legal-action set, observation, reward and score. Where the two disagree, the
test fails, and ``docs/RULES.md`` decides which one is wrong.

``pyspiel.load_game("python_racko(num_players=3,reshuffle=flip)")`` once :mod:`deckgym.openspiel`
is imported. Every field of :class:`racko_env.RackoRules` is a parameter with the same name and
default (``deck_size=0`` and ``min_run_to_win=-1`` stand for the rules' ``None``: by player
count), plus ``episode`` ("round"/"match") and ``reward`` ("win"/"points").

Chance is explicit: the first dealer (R3), every card of the deal, one at a time, and every draw
of a card nobody has seen (R4). A draw pile is shuffled face down, so drawing its top card is
drawing uniformly from its cards: the R6 ``"shuffle"`` rebuild makes a new unordered pile whose
draws are chance nodes again, while ``"flip"`` keeps the discards' public order, so a draw from
a flipped pile is no chance at all. Player actions are the core's ids (``racko_env.env``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from deckgym.openspiel.common import (GameConfig, Observer, game_type, make_info, resample_with_belief,
                                      safe_deserialize, variant_type, win_rewards, StateViews)
from racko_env.rules import RackoRules
from racko_env.state import LOG_TURNS

DRAW, TAKE, DISCARD_DRAWN = 0, 1, 12  # actions 2..11 put the card in hand into slot 1..10
CHOOSE, PLACE_DISCARD, PLACE_DRAWN = 0, 1, 2  # R4: choose a pile, then place the card
RUN_BONUS = {3: 50, 4: 100, 5: 200, 6: 400}  # R10, by the longest run (6 or more: 400)

PARAMS = {"num_players": 2, "deck_size": 0, "min_run_to_win": -1, "bonus": False, "partners": False,
          "partner_bonus": True, "reshuffle": "shuffle", "max_turns": 300, "target_score": 500,
          "episode": "round", "reward": "win"}
GAME_TYPE = game_type("python_racko", "Python Rack-O (deckgym)", PARAMS, max_players=4)


def increasing_prefix(rack: list[int]) -> int:
    """R8: the cards that rise from slot 1 before the first card lower than its predecessor."""
    n = 1
    while n < 10 and rack[n] > rack[n - 1]:
        n += 1
    return n


def longest_run(rack: list[int]) -> int:
    """R7/R10: the longest run of consecutive numbers in adjacent slots, in cards."""
    best = cur = 1
    for i in range(1, 10):
        cur = cur + 1 if rack[i] == rack[i - 1] + 1 else 1
        best = max(best, cur)
    return best


def flags(cards, n: int, value: dict | None = None) -> list[int]:
    """Per card 1..n: 1 (or ``value[card]``) for the cards listed, else 0."""
    out = [0] * n
    for c in cards:
        out[c - 1] = 1 if value is None else value[c]
    return out


class RackoGame(pyspiel.Game):
    """``python_racko``: Rack-O with every rules field as a game parameter (module docstring)."""

    #: the layouts of ``observation_tensor`` and ``information_state_tensor``: the cores' versions
    obs_version, infostate_version = 1, 2

    def __init__(self, params: dict | None = None) -> None:
        p = {**PARAMS, **(params or {})}
        rules = RackoRules(num_players=p["num_players"], deck_size=p["deck_size"] or None,
                           min_run_to_win=None if p["min_run_to_win"] < 0 else p["min_run_to_win"],
                           bonus=p["bonus"], partners=p["partners"], partner_bonus=p["partner_bonus"],
                           reshuffle=p["reshuffle"], max_turns=p["max_turns"], target_score=p["target_score"])
        self.config = GameConfig("racko", rules, p["episode"], p["reward"])
        self.config.observers = (RackoObserver(self.config, False), RackoObserver(self.config, True))
        P, N = rules.num_players, rules.deck_size
        round_len = 3 * rules.max_turns + 10 * P + 2  # deal, and per turn two decisions and a draw
        rounds = 1 if p["episode"] == "round" else -(-rules.target_score // 5)  # R8: everyone scores >= 5 a round
        best = 2 * 475 if rules.partners else 475
        top = (1.0, -(P - 1.0)) if p["reward"] == "win" else (float(best * rounds), 0.0)
        zero_sum = p["reward"] == "win"
        super().__init__(variant_type(GAME_TYPE, p["episode"], zero_sum),
                         make_info(13, N + 1, P, top[1], top[0], round_len * rounds, zero_sum), p)

    def new_initial_state(self, *args) -> "RackoState":
        return RackoState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> Observer:
        return RackoObserver(self.config, iig_obs_type is None or iig_obs_type.perfect_recall, params)

    def deserialize_state(self, text: str) -> "RackoState":
        """The state ``serialize`` wrote: its actions replayed (never unpickled)."""
        return safe_deserialize(self, text)


class RackoState(StateViews, pyspiel.State):
    """One Rack-O game (a round, or a match of rounds, R12)."""

    def __init__(self, game: RackoGame) -> None:
        super().__init__(game)
        self.cfg = game.config
        P = self.cfg.rules.num_players
        self.totals = [0] * P  # R12 (team totals with R11)
        self.rewards_now = [0.0] * P
        self.sums = [0.0] * P
        self.round_points, self.own_points = [0] * P, [0] * P
        self.went_out, self.over, self.truncated = -1, False, False
        self.dealer = -1  # R3: drawn by the first chance node
        self._new_round()

    # -- the deal (R3) ---------------------------------------------------------------------
    def _new_round(self) -> None:
        P, N = self.cfg.rules.num_players, self.cfg.rules.deck_size
        self.racks = [[0] * 10 for _ in range(P)]
        self.public = [[False] * 10 for _ in range(P)]  # R5: taken from the discard pile
        self.undealt = list(range(1, N + 1))
        self.dealt = 0  # cards dealt so far; 10 P + 1 with the one turned up
        self.draw, self.draw_known = [], False  # draw pile top first; known order after an R6 flip
        self.discard = []  # bottom first
        self.seen = set()  # every card face up this round
        self.hand, self.phase, self.turn, self.chance_draw = 0, CHOOSE, 0, False
        self.player = (self.dealer + 1) % P
        self.events: list[str] = []  # the public history, for information-state strings
        self.took = [set() for _ in range(P)]
        self.thrown = [set() for _ in range(P)]
        self.left = [{} for _ in range(P)]  # card -> slot (1..10) it last left
        self.slot_out = [[0] * 10 for _ in range(P)]
        self.slot_turn = [[-1] * 10 for _ in range(P)]
        self.log = [[] for _ in range(P)]  # (top, kind, slot, out) per turn, most recent first

    def _deal_card(self, card: int) -> None:
        """R3: the card after the dealer's left, one at a time, slots 10 towards 1; then one up."""
        P = self.cfg.rules.num_players
        self.undealt.remove(card)
        if self.dealt < 10 * P:
            seat = (self.dealer + 1 + self.dealt) % P
            self.racks[seat][9 - self.dealt // P] = card
        else:  # the next card opens the discard pile; the rest is the draw pile
            self.discard = [card]
            self.seen.add(card)
            self.draw, self.undealt = sorted(self.undealt), []
            self.events.append(f"up{card}")
        self.dealt += 1

    # -- OpenSpiel's interface ---------------------------------------------------------------
    def current_player(self) -> int:
        if self.over:
            return pyspiel.PlayerId.TERMINAL
        if self.dealer < 0 or self.undealt or self.chance_draw:
            return pyspiel.PlayerId.CHANCE
        return self.player

    def is_terminal(self) -> bool:
        return self.over

    def drawing(self) -> bool:
        """A card of the draw pile is being drawn (a chance node)."""
        return self.chance_draw

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The first dealer (a seat), a card of the deal, or the card drawn (R3, R4)."""
        if self.dealer < 0:
            options = list(range(self.cfg.rules.num_players))
        else:
            options = self.undealt if self.undealt else self.draw
        return [(o, 1.0 / len(options)) for o in options]

    def _legal_actions(self, player: int) -> list[int]:
        if self.phase == CHOOSE:  # R4: a pile; the discard top must go into the rack
            return [DRAW, TAKE]
        return list(range(2, 12)) + ([DISCARD_DRAWN] if self.phase == PLACE_DRAWN else [])

    def _apply_action(self, action: int) -> None:
        if not self.is_chance_node():  # rewards last from a player's action to the next one
            self.rewards_now = [0.0] * self.cfg.rules.num_players
        if self.is_chance_node():
            self._apply_chance(action)
        elif self.phase == CHOOSE:
            self._choose(action)
        else:
            self._place(action)

    def _apply_chance(self, outcome: int) -> None:
        if self.dealer < 0:
            self.dealer = outcome
            self.player = (outcome + 1) % self.cfg.rules.num_players
        elif self.undealt:
            self._deal_card(outcome)
        else:  # R4: the card drawn, seen by the drawer only
            self.draw.remove(outcome)
            self.hand, self.chance_draw = outcome, False

    def _choose(self, action: int) -> None:
        p = self.player
        if action == TAKE:  # R4: the discard top, face up
            self.hand = self.discard.pop()
            self.took[p].add(self.hand)
            self.phase = PLACE_DISCARD
            self.events.append(f"{p}take{self.hand}")
            return
        if not self.draw:  # R6: all discards but the top become the draw pile, checked right now
            self.draw, self.discard = self.discard[:-1], self.discard[-1:]
            self.draw_known = self.cfg.rules.reshuffle == "flip"  # flipped: bottom card drawn first
            if not self.draw_known:
                self.draw.sort()
            self.events.append("rebuild")
        self.phase = PLACE_DRAWN
        self.events.append(f"{p}draw")
        if self.draw_known:
            self.hand = self.draw.pop(0)
        else:
            self.chance_draw = True

    def _place(self, action: int) -> None:
        """R5 (the swap) or R4 (a drawn card thrown), then R7 and R9 at the end of the turn."""
        p, rack, hand = self.player, self.racks[self.player], self.hand
        top = self.discard[-1] if self.discard else 0
        if action == DISCARD_DRAWN:
            out, kind, slot = hand, 3, 0
            self.thrown[p].add(hand)
        else:
            slot = action - 1
            out, rack[slot - 1] = rack[slot - 1], hand
            self.public[p][slot - 1] = self.phase == PLACE_DISCARD  # everybody saw it taken
            kind = 1 if self.phase == PLACE_DISCARD else 2
            self.left[p][out] = slot
            self.slot_out[p][slot - 1], self.slot_turn[p][slot - 1] = out, self.turn
        entry = (hand if kind == 1 else top, kind, slot, out)
        self.log[p] = [entry] + self.log[p][: LOG_TURNS - 1]
        self.discard.append(out)
        self.seen.add(out)
        self.events.append(f"{p}s{slot}>{out}")
        self.hand, self.phase = 0, CHOOSE
        self.turn += 1
        self.player = (p + 1) % self.cfg.rules.num_players
        if self._is_rack_o(rack):
            self._end_round(went_out=p)
        elif self.turn >= self.cfg.rules.max_turns:  # R9: the round is capped
            self._end_round(went_out=-1)

    def _is_rack_o(self, rack: list[int]) -> bool:
        """R7: increasing from slot 1 to 10, with the run two players need."""
        need = self.cfg.rules.min_run_to_win
        return increasing_prefix(rack) == 10 and (need <= 1 or longest_run(rack) >= need)

    # -- the end of a round (R8–R12) ---------------------------------------------------------
    def _end_round(self, went_out: int) -> None:
        rules, P = self.cfg.rules, self.cfg.rules.num_players
        own = [5 * increasing_prefix(r) for r in self.racks]  # R8
        if went_out >= 0:
            own[went_out] = 75
            if rules.bonus or (rules.partners and rules.partner_bonus):  # R10, R11
                own[went_out] += RUN_BONUS.get(min(longest_run(self.racks[went_out]), 6), 0)
        pts = [own[s] + own[(s + 2) % 4] for s in range(P)] if rules.partners else own  # R11
        if went_out >= 0:
            winners = [rules.team_of(s) == rules.team_of(went_out) for s in range(P)]
        else:  # R9: the most round points win the capped round
            winners = [x == max(pts) for x in pts]
        self.totals = [t + x for t, x in zip(self.totals, pts)]
        self.round_points, self.own_points, self.went_out = pts, own, went_out
        self.truncated = went_out < 0 and self.cfg.episode == "round"
        if self.cfg.episode == "match":
            if max(self.totals) < rules.target_score:  # R12: next round, the deal passes left
                self._pay(pts if self.cfg.reward == "points" else [0] * P)
                self.dealer = (self.dealer + 1) % P
                self._new_round()
                return
            winners = [t == max(self.totals) for t in self.totals]
        self.over = True
        self._pay(pts if self.cfg.reward == "points" else win_rewards(winners))

    # -- strings, copies, beliefs --------------------------------------------------------------
    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"dealer {action}" if self.dealer < 0 else f"card {action}"
        return ("draw", "take_discard")[action] if action < 2 else (
            "discard_drawn" if action == DISCARD_DRAWN else f"slot_{action - 1}")

    def __str__(self) -> str:
        racks = "\n".join(f"seat {s}: " + " ".join(map(str, r)) for s, r in enumerate(self.racks))
        return (f"{racks}\ndraw pile: {self.draw}\ndiscard pile: {self.discard}\nhand: {self.hand}  "
                f"player: {self.player}  phase: {self.phase}  turn: {self.turn}  totals: {self.totals}")

    def resample_from_infostate(self, player: int, sampler=None, belief: str = "uniform") -> "RackoState":
        """A state ``player`` cannot tell from this one, drawn by deckgym's belief sampler
        (``belief``: ``"uniform"``, ``"history"``, ...; :mod:`deckgym.agents.racko_belief`)."""
        return resample_with_belief(self, player, sampler, belief)

    def set_world(self, me: int, world) -> None:
        """Put a belief's world (a ``RackoInfoState``, seat 0 = ``me``) in place: the opponents'
        racks and the draw pile, the cards ``me`` cannot see."""
        P, K = self.cfg.rules.num_players, self.cfg.rules.pile_size
        for j in range(1, P):
            self.racks[(me + j) % P] = np.abs(world.racks[0, j].astype(int)).tolist()
        s, h = int(world.disc_n[0]), int(world.phase[0] != CHOOSE)
        draw = sorted(int(c) for c in world.piles[0, : K - s - h])
        if not self.draw_known or draw != sorted(self.draw):  # (the beliefs do not model R6's flip)
            self.draw, self.draw_known = draw, False


class RackoObserver(Observer):
    """``observation_tensor`` = deckgym's default observation (layout v1, :mod:`racko_env.env`);
    ``information_state_tensor`` = its ``obs="infostate"`` one (:mod:`racko_env.infostate`)."""

    def __init__(self, cfg: GameConfig, perfect_recall: bool, params=None) -> None:
        r = cfg.rules
        P, N, K = r.num_players, r.deck_size, r.pile_size
        pieces = [("rack", 10, 1 / N), ("opp_known", 10 * (P - 1), 1 / N), ("phase", 3, 1), ("to_move", P, 1),
                  ("hand", 1, 1 / N), ("discard_top", 1, 1 / N), ("draw_size", 1, 1 / K), ("discard_size", 1, 1 / K),
                  ("turn", 1, 1 / r.max_turns), ("scores", P, 1 / r.target_score), ("seen", N, 1), ("in_discard", N, 1)]
        if perfect_recall:
            pieces += [("slot_out", 10 * P, 1 / N), ("slot_age", 10 * P, 1 / r.max_turns), ("took", P * N, 1),
                       ("thrown", P * N, 1), ("left", P * N, 0.1), ("discard_depth", N, 1 / K)]
            pieces += [(name, P * LOG_TURNS, 1 / s) for name, s in (("log_top", N), ("log_kind", 3),
                                                                     ("log_slot", 10), ("log_out", N))]
        super().__init__(cfg, pieces, params)

    def values(self, st: RackoState, me: int) -> list:
        """The observation of seat ``me`` before scaling: cards, counts and flags, ego order."""
        P, N = self.cfg.rules.num_players, self.cfg.rules.deck_size
        seats = [(me + j) % P for j in range(P)]
        v = list(st.racks[me])
        for q in seats[1:]:  # of the opponents, only the cards known to be there (R5)
            v += [c if pub else 0 for c, pub in zip(st.racks[q], st.public[q])]
        v += [st.phase == k for k in range(3)] + [(st.player - me) % P == j for j in range(P)]
        holding = st.phase != CHOOSE and st.player == me
        v += [st.hand if holding else 0, st.discard[-1] if st.discard else 0, len(st.draw), len(st.discard), st.turn]
        v += [st.totals[q] for q in seats]
        v += flags(st.seen, N) + flags(st.discard, N)
        if "slot_out" not in self.dict:
            return v
        for q in seats:
            v += st.slot_out[q]
        for q in seats:
            v += [st.turn - t if t >= 0 else 0 for t in st.slot_turn[q]]
        for table in (st.took, st.thrown):
            for q in seats:
                v += flags(table[q], N)
        for q in seats:
            v += flags(st.left[q], N, st.left[q])
        v += flags(reversed(st.discard), N, {c: i + 1 for i, c in enumerate(reversed(st.discard))})
        for f in range(4):
            for q in seats:
                log = [e[f] for e in st.log[q]]
                v += log + [0] * (LOG_TURNS - len(log))
        return v

    def string_from(self, st: RackoState, me: int) -> str:
        P = self.cfg.rules.num_players
        known = " ".join(f"seat{q}:" + ",".join(f"{i + 1}={c}" for i, (c, pub) in enumerate(zip(st.racks[q], st.public[q]))
                                               if pub) for q in range(P) if q != me)
        text = (f"seat {me} rack {' '.join(map(str, st.racks[me]))} | hand {st.hand if st.player == me else 0} "
                f"| discard {st.discard[-1] if st.discard else '-'} ({len(st.discard)}) draw {len(st.draw)} "
                f"| to move {st.player} phase {st.phase} turn {st.turn} | known {known} | totals {st.totals}")
        if "slot_out" in self.dict:  # perfect recall: the public history of the round
            text += " | " + " ".join(st.events)
        return text


def params_of(rules: RackoRules) -> dict:
    """The game parameters of ``rules`` (``deck_size=0`` and ``min_run_to_win=-1`` for the rules' None)."""
    p = {k: getattr(rules, k) for k in rules.__dataclass_fields__}
    p["deck_size"] = p["deck_size"] or 0
    p["min_run_to_win"] = -1 if p["min_run_to_win"] is None else p["min_run_to_win"]
    return p


def resume(s: "RackoState", core: Any, st: Any, b: int) -> None:
    """Set the new state ``s`` to game ``b`` of the core state ``st`` (an ``obs="infostate"`` core's)."""
    P = core.num_players
    racks = st.racks[b].astype(int)
    s.dealer, s.player, s.phase, s.turn = int(st.dealer[b]), int(st.player[b]), int(st.phase[b]), int(st.turn[b])
    s.racks, s.public = np.abs(racks).tolist(), (racks < 0).tolist()
    draw, s.discard, s.hand = core.piles(st, b)
    s.draw, s.draw_known, s.undealt, s.dealt = sorted(draw), False, [], 10 * P + 1
    s.seen = set(np.flatnonzero(st.pub[b, 0]).tolist()) - {0}
    s.totals = st.scores[b].astype(int).tolist()
    s.took = [set(np.flatnonzero(st.took[b, p]).tolist()) for p in range(P)]
    s.thrown = [set(np.flatnonzero(st.thrown[b, p]).tolist()) for p in range(P)]
    s.left = [{int(c): int(st.left[b, p, c]) for c in np.flatnonzero(st.left[b, p])} for p in range(P)]
    s.slot_out = st.slot_out[b].astype(int).tolist()
    s.slot_turn = st.slot_turn[b].astype(int).tolist()
    s.log = [[tuple(int(x) for x in e) for e in st.log[b, p] if e[1]] for p in range(P)]

def feed_deal(core: Any, st: Any, os_state: "RackoState") -> None:
    """The core's deal (R3) of game 0 of ``st`` as the OpenSpiel state's chance outcomes (the oracle's lock step)."""
    P = core.num_players
    if os_state.dealer < 0:
        os_state.apply_action(int(st.dealer[0]))
    dealer = int(st.dealer[0])
    if os_state.dealer != dealer:
        raise AssertionError(f"dealer: openspiel {os_state.dealer}, core {dealer}")
    racks = core.racks(st)[0]
    for j in range(10 * P):
        os_state.apply_action(int(racks[(dealer + 1 + j) % P, 9 - j // P]))
    _, discard, _ = core.piles(st)
    os_state.apply_action(int(discard[-1]))


def drawn_card(core: Any, st: Any, before: Any, a: int, os_state: "RackoState") -> int:
    """The card the core just drew (the card in hand), as the OpenSpiel draw's chance outcome."""
    return int(core.piles(st)[2])


pyspiel.register_game(GAME_TYPE, RackoGame)  # as OpenSpiel's own games do: importing the module registers it
