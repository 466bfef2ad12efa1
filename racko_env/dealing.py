"""Rack-O deals (R3): new episodes from each game's random stream, the next round of a
match, and explicit deals (``reset(options=...)``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from deckgym.core import check_init_args, check_row_mask
from deckgym.rng import make_keys, permutation_keys, random_below, shuffled
from racko_env.rules import RackoRules
from racko_env.state import CHOOSE, RackoInfoState, RackoState, empty_state, with_history


class RackoDealing:
    """The deals of a :class:`racko_env.core.RackoCore` (R3), a part it holds as ``core.dealing``.

    ``history``: the states record the public history (an ``obs="infostate"`` core's
    :class:`~racko_env.state.RackoInfoState`); every deal clears it."""

    def __init__(self, rules: RackoRules, history: bool = False) -> None:
        self.rules, self.history = rules, history
        self.num_players, self.deck_size, self.pile_size = rules.num_players, int(rules.deck_size), rules.pile_size
        P, N, K = self.num_players, self.deck_size, self.pile_size
        # -- deal (R3): seat s at offset j = (s - dealer - 1) % P from the dealer's left gets
        # deck[j], deck[j + P], ... into slots 10, 9, ...; the next card is turned up.
        deal_idx = np.zeros((P, P, 10), dtype=np.intp)
        for dealer in range(P):
            for s in range(P):
                j = (s - dealer - 1) % P
                deal_idx[dealer, s] = [j + (9 - i) * P for i in range(10)]
        self._deal_idx = deal_idx.reshape(P, P * 10)
        self._pile_idx = N - 1 - np.arange(K)  # piles[K-1] = deck[10P] (turned up), then draw pile

    def empty(self, b: int) -> RackoState:
        """``b`` games of zeros (with an empty history if the states record it)."""
        st = empty_state(b, self.num_players, self.deck_size, self.pile_size)
        return with_history(st, self.num_players, self.deck_size) if self.history else st

    def deal_rows(self, st: RackoState, rows: np.ndarray, dealer: np.ndarray) -> None:
        """R3: shuffle and deal a new round in games ``rows`` with the given dealers."""
        n, P, K = len(rows), self.num_players, self.pile_size
        ctr = st.rng_counter[rows]
        perm = shuffled(st.rng_key[rows], ctr, self.deck_size)
        st.rng_counter[rows] = ctr
        deck = (perm + 1).astype(np.int8)
        st.racks[rows] = np.take_along_axis(deck, self._deal_idx[dealer], axis=1).reshape(n, P, 10)
        piles = deck[:, self._pile_idx]
        st.piles[rows, :K] = piles
        st.disc_n[rows] = 1
        st.phase[rows] = CHOOSE
        st.dealer[rows] = dealer
        st.player[rows] = (dealer + 1) % P
        st.turn[rows] = 0
        st.pub[rows] = False
        st.pub[rows[:, None], :, piles[:, K - 1 : K]] = True
        if isinstance(st, RackoInfoState):  # a new round: nothing of it is public yet
            st.took[rows] = False
            st.thrown[rows] = False
            st.left[rows] = 0
            st.slot_out[rows] = 0
            st.slot_turn[rows] = -1
            st.log[rows] = 0

    def init(self, batch: int, seed: int, game_ids: np.ndarray | None = None) -> RackoState:
        """``batch`` (>= 1) freshly dealt games (R3); game ``i`` uses the random stream
        ``(seed, game_ids[i])`` (default ``game_ids = arange(batch)``), whatever the batch."""
        game_ids = check_init_args(batch, seed, game_ids)
        st = self.empty(batch)
        st.rng_key[:] = make_keys(seed, game_ids)
        self.new_episodes(st, np.arange(batch))
        return st

    def reset_where(self, state: RackoState, mask: np.ndarray) -> None:
        """A fresh episode in place for the games where ``mask`` (a ``(B,)`` bool array),
        each continuing its own random stream."""
        if not isinstance(state, RackoState):
            raise ValueError(f"state must be a RackoState, got {type(state).__name__}")
        self.new_episodes(state, np.flatnonzero(check_row_mask(mask, state.disc_n.shape[0])))

    def new_episodes(self, state: RackoState, rows: np.ndarray) -> None:
        """A fresh episode (match totals zero, a random first dealer, R3) in games ``rows``."""
        if len(rows) == 0:
            return
        ctr = state.rng_counter[rows]
        dealer = random_below(state.rng_key[rows], ctr, self.num_players)  # R3: first dealer at random
        state.rng_counter[rows] = ctr
        state.scores[rows] = 0
        self.deal_rows(state, rows, dealer)

    # -- explicit deals -----------------------------------------------------------------------
    _DEAL_KEYS = ("racks", "draw_pile", "discard_pile", "first_player", "scores")

    def deal(self, seed: int, options: dict) -> RackoState:
        """One game from an explicit deal (see ``racko_env.env`` docs, "Explicit deals").

        ``options``: ``racks`` (P lists of 10 cards, slot 1 first), ``draw_pile`` (top
        first), ``discard_pile`` (bottom first, top last), ``first_player`` (seat), ``scores``
        (match totals, per seat). Every key is optional; unlisted cards are shuffled with
        ``seed`` and dealt to the racks (if not given) then put beneath the listed draw-pile
        cards; without a discard pile the top draw-pile card is turned up (R3).
        """
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        for k in options:
            if k not in self._DEAL_KEYS:
                raise ValueError(f"unknown option key {k!r}; valid keys: {', '.join(self._DEAL_KEYS)}")
        P, N, K = self.num_players, self.deck_size, self.pile_size
        used: dict[int, str] = {}

        def cards(name: str, value: Any) -> list[int]:
            if isinstance(value, np.ndarray):
                value = value.tolist()
            if not isinstance(value, (list, tuple)):
                raise ValueError(f"{name} must be a list of cards, got {type(value).__name__}")
            out = []
            for c in value:
                if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)):
                    raise ValueError(f"{name}: card {c!r} is not an int")
                c = int(c)
                if not 1 <= c <= N:
                    raise ValueError(f"{name}: card {c} out of range 1..{N}")
                if c in used:
                    raise ValueError(f"{name}: card {c} given twice (also in {used[c]})")
                used[c] = name
                out.append(c)
            return out

        racks = None
        if "racks" in options:
            rk = options["racks"]
            if isinstance(rk, np.ndarray):
                rk = rk.tolist()
            if not isinstance(rk, (list, tuple)) or len(rk) != P:
                n = len(rk) if isinstance(rk, (list, tuple)) else type(rk).__name__
                raise ValueError(f"racks: need {P} racks (one per seat), got {n}")
            racks = []
            for i, r in enumerate(rk):
                rr = cards(f"racks[{i}]", r)
                if len(rr) != 10:
                    raise ValueError(f"racks[{i}]: a rack has 10 cards, got {len(rr)}")
                racks.append(rr)
        draw = cards("draw_pile", options.get("draw_pile", []))
        discard = None
        if "discard_pile" in options:
            discard = cards("discard_pile", options["discard_pile"])
            if not discard:
                raise ValueError("discard_pile: must hold at least one card (R3 turns one up)")
        if "first_player" in options:
            fp = options["first_player"]
            if isinstance(fp, (bool, np.bool_)) or not isinstance(fp, (int, np.integer)) or not 0 <= fp < P:
                raise ValueError(f"first_player must be a seat in 0..{P - 1}, got {fp!r}")
        scores = None
        if "scores" in options:
            sc = options["scores"]
            if isinstance(sc, np.ndarray):
                sc = sc.tolist()
            if (not isinstance(sc, (list, tuple)) or len(sc) != P
                    or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x <= 30000 for x in sc)):
                raise ValueError(f"scores: need {P} ints in 0..30000 (one total per seat), got {sc!r}")
            scores = [int(x) for x in sc]
        pile_cards = len(draw) + (len(discard) if discard is not None else 0)
        if pile_cards > K:
            raise ValueError(f"draw_pile/discard_pile: {pile_cards} cards listed but only {K} are outside the racks")

        st = self.empty(1)
        check_init_args(1, seed, None)
        st.rng_key[:] = make_keys(int(seed), np.zeros(1, dtype=np.int64))
        ctr = st.rng_counter
        if "first_player" in options:
            dealer = (int(options["first_player"]) - 1) % P
        else:
            dealer = int(random_below(st.rng_key, ctr, P)[0])
        unlisted = np.array([c for c in range(1, N + 1) if c not in used], dtype=np.int64)
        if len(unlisted):
            order = np.argsort(permutation_keys(st.rng_key, ctr, len(unlisted))[0], kind="stable")
            unlisted = unlisted[order]
        rest = unlisted.tolist()
        if racks is None:
            deck = rest[: 10 * P]
            rest = rest[10 * P:]
            racks = [[deck[j] for j in self._deal_idx[dealer][s * 10:(s + 1) * 10]] for s in range(P)]
        draw = draw + rest
        if discard is None:
            discard, draw = [draw[0]], draw[1:]
        s, d = len(discard), len(draw)
        assert s + d == K
        piles = np.zeros(K + 1, np.int64)
        piles[K - s : K] = discard[::-1]
        piles[:d] = draw[::-1]
        st.racks[0] = np.array(racks, dtype=np.int8)
        st.piles[0] = piles
        st.disc_n[0] = s
        st.dealer[0] = dealer
        st.player[0] = (dealer + 1) % P
        st.pub[0, :, discard] = True
        if scores is not None:
            st.scores[0] = scores
        return st
