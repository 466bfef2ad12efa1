"""Least Score deals: new episodes and rounds (L3), the reshuffle of the dead pile (L6)
and explicit deals (``reset(options=...)``).

A deal is a pure function of the game's stream position (``rng_key``, ``rng_counter``):
:meth:`LeastScoreDealing._deal_compute` reproduces :mod:`deckgym.rng`'s draws bit for bit
on whole batches. In round episodes at B >= 64 each game's next deal is computed ahead,
many games at a time, and used by ``reset_where`` if the game's stream is still at that
position.
"""

from __future__ import annotations

import numpy as np

from deckgym.core import check_init_args, check_row_mask
from deckgym.rng import make_keys, permutation_keys, random_below, shuffled
from leastscore_env.cards import NUM_CARDS, PAD, parse_card
from leastscore_env.core_tables import CoreTables
from leastscore_env.rules import LeastScoreRules
from leastscore_env.state import HAND_MAX, PAD_WORD, LeastScoreInfoState, LeastScoreState, empty_state, with_history
from leastscore_env.tables import CARD_BIT, N_ALIVE, PAIR_BITS, SORT5_NETWORK, bits52, hand_word_bits, words_of

_I64 = np.int64
_U = np.uint64
# deckgym.rng's constants (its streams are reproduced bit for bit by _deal_compute)
_GOLDEN, _MIX1, _MIX2 = _U(0x9E3779B97F4A7C15), _U(0xBF58476D1CE4E5B9), _U(0x94D049BB133111EB)
_J = np.arange(256, dtype=np.uint64) * _U(0xD1B54A32D192ED03)
_CARD_IDS53 = np.append(np.arange(NUM_CARDS, dtype=np.uint64), _U(0))  # (the 53rd word: the first player)


def _mix_inplace(z: np.ndarray) -> None:
    """deckgym.rng's SplitMix64 finaliser, in place (uint64)."""
    t = z >> _U(30)
    z ^= t
    z *= _MIX1
    np.right_shift(z, _U(27), out=t)
    z ^= t
    z *= _MIX2
    np.right_shift(z, _U(31), out=t)
    z ^= t


_DEAL_CACHE_MIN_B = 64  # smallest batch that computes its next deals ahead


class _DealCache:
    """The next new-episode deal of each game of a batch (see ``_new_episodes``)."""

    def __init__(self, B: int, P: int) -> None:
        self.ok = np.zeros(B, dtype=bool)
        self.key = np.zeros(B, dtype=np.uint64)
        self.ctr = np.zeros(B, dtype=np.uint64)  # the stream position it was computed for
        self.nctr = np.zeros(B, dtype=np.uint64)  # the position after it
        self.first = np.zeros(B, dtype=np.int8)
        self.deck = np.zeros((B, NUM_CARDS + 1), dtype=np.uint8)
        self.hands = np.zeros(B * P, dtype=_I64)
        self.hbits = np.zeros(B * P, dtype=_I64)
        self.legal = np.zeros(B * P, dtype=_I64)
        self.up = np.zeros(B, dtype=_I64)
        self.top = np.zeros(B, dtype=np.uint8)
        self.P = P

    def put(self, g, key, ctr, nctr, first, deck, hands, hbits, legal, up, top) -> None:
        fi = (g[:, None] * self.P + np.arange(self.P)).reshape(-1)
        self.key[g], self.ctr[g], self.nctr[g], self.first[g], self.deck[g] = key, ctr, nctr, first, deck
        self.hands[fi], self.hbits[fi], self.legal[fi] = hands, hbits, legal
        self.up[g], self.top[g] = up, top
        self.ok[g] = True

    def get(self, g):
        """The arguments of ``_write_deal`` after ``g``."""
        fi = (g[:, None] * self.P + np.arange(self.P)).reshape(-1)
        return (self.nctr.take(g), self.first.take(g), self.deck.take(g, axis=0), self.hands.take(fi),
                self.hbits.take(fi), self.legal.take(fi), self.up.take(g), self.top.take(g))


class LeastScoreDealing:
    """The deals of a :class:`leastscore_env.core.LeastScoreCore` (L3, L6), a part it holds as
    ``core.dealing``. ``episode``: the core's (round episodes deal ahead); ``history``: the
    states record the public history (an ``obs="infostate"`` core's), which every deal clears."""

    DEAL_KEYS = ("hands", "deck", "floor", "first_player", "scores")

    def __init__(self, rules: LeastScoreRules, tables: CoreTables, episode: str, history: bool = False) -> None:
        self.rules, self.episode, self.history = rules, episode, history
        P = self.num_players = rules.num_players
        self._full_alive = tables.full_alive
        self._flat_rows = tables.flat_rows
        self._legal_of = tables.legal_of
        self._step_buffers = tables.bases
        self._deal_cache: dict[int, _DealCache] = {}
        # L3 deal, per alive pattern: the deck positions dealt to each seat's 8 hand bytes
        # (52 = the PAD column), and the position of the card turned up
        hs = rules.hand_size
        self._deal_idx = np.full((1 << P, P * 8), NUM_CARDS, dtype=_I64)
        for alive in range(1 << P):
            k = 0
            for p in range(P):
                if (alive >> p) & 1:
                    self._deal_idx[alive, p * 8 : p * 8 + hs] = np.arange(k * hs, (k + 1) * hs)
                    k += 1
        self._deal_base = N_ALIVE[: 1 << P].astype(_I64) * hs

    def empty(self, B: int) -> LeastScoreState:
        """``B`` games of zeros (with an empty history if the states record it)."""
        st = empty_state(B, self.num_players)
        return with_history(st) if self.history else st

    def init(self, batch: int, seed: int, game_ids: np.ndarray | None = None) -> LeastScoreState:
        """``batch`` (>= 1) freshly dealt games (L3); game ``i`` uses the random stream
        ``(seed, game_ids[i])`` (default ``game_ids = arange(batch)``), whatever the batch."""
        ids = check_init_args(batch, seed, game_ids)
        s = self.empty(batch)
        s.rng_key[:] = make_keys(seed, ids)
        self.new_episodes(s, np.arange(batch))
        return s

    def reset_where(self, state: LeastScoreState, mask: np.ndarray) -> None:
        """A fresh episode in place for the games where ``mask`` (a ``(B,)`` bool array),
        each continuing its own random stream."""
        if not isinstance(state, LeastScoreState):
            raise ValueError(f"state must be a LeastScoreState, got {type(state).__name__}")
        g = np.flatnonzero(check_row_mask(mask, state.phase.shape[0]))
        if g.size:
            self.new_episodes(state, g)

    def new_episodes(self, s: LeastScoreState, g: np.ndarray) -> None:
        s.scores.reshape(-1)[self._flat_rows(g)] = 0
        s.alive[g] = self._full_alive
        s.round[g] = 0
        B = s.phase.shape[0]
        if self.episode != "round" or B < _DEAL_CACHE_MIN_B:
            self.deal_rows(s, g, None)
            return
        # Round episodes: every episode starts with a new deal, a pure function of the
        # game's stream position (rng_key, rng_counter). The deals are computed ahead, many
        # games at a time, into a per-batch-size cache; a cached deal is used only if the
        # game's stream position is still the one it was computed for (else: dealt now).
        c = self._deal_cache.get(B)
        if c is None:
            if len(self._deal_cache) >= 4:
                self._deal_cache.clear()
            c = self._deal_cache[B] = _DealCache(B, self.num_players)
        hit = c.ok.take(g)
        hit &= c.key.take(g) == s.rng_key.take(g)
        hit &= c.ctr.take(g) == s.rng_counter.take(g)
        c.ok[g] = False
        if hit.all():
            self._write_deal(s, g, *c.get(g))
        else:
            self.deal_rows(s, g[~hit], None)
            if hit.any():
                gh = g[hit]
                self._write_deal(s, gh, *c.get(gh))
        stale = np.flatnonzero(~c.ok)
        if stale.size >= max(B // 4, _DEAL_CACHE_MIN_B):
            # the next deal of these games (at their current stream position)
            key, ctr = s.rng_key.take(stale), s.rng_counter.take(stale)
            c.put(stale, key, ctr, *self._deal_compute(key, ctr.copy(), self.rules.first_player == "random", None))

    def deal_rows(self, s: LeastScoreState, g: np.ndarray, first: np.ndarray | None) -> None:
        """L3: shuffle, deal hand_size cards to every seat still in the game, turn one up.

        ``first``: the seat to start each game ``g``, or None for new episodes (L3: drawn
        from the game's stream, or seat 0, as ``rules.first_player``)."""
        alive = s.alive.take(g)
        draw_first = first is None and self.rules.first_player == "random"
        deal = self._deal_compute(s.rng_key.take(g), s.rng_counter.take(g), draw_first,
                                  None if alive.min() == self._full_alive else alive)
        if first is not None:
            deal = (deal[0], first.astype(np.int8), *deal[2:])
        self._write_deal(s, g, *deal)

    def _deal_compute(self, key: np.ndarray, ctr: np.ndarray, draw_first: bool, alive: np.ndarray | None):
        """The random part of L3 for games with streams ``(key, ctr)`` (``ctr`` is advanced in
        place) and ``alive`` words (None: everybody in): ``(ctr, first (int8, seat 0 unless
        draw_first), deck (n, 53) uint8, hands, hand bits, legal (n * P,) int64, the card
        turned up (n,) int64, top)``. Arrays are laid out so that numpy's inner loops run
        over the games."""
        n, P = key.size, self.num_players
        # deckgym.rng on each game's stream: random_below(P) for the first player (one draw),
        # then permutation_keys(52) (the next draw); both draws mixed together, one row of
        # 53 words per game (the 52 keys, then the first player's word)
        z = np.empty((2 if draw_first else 1, n), dtype=np.uint64)
        np.multiply(ctr, _GOLDEN, out=z[0])
        if draw_first:
            np.add(z[0], _GOLDEN, out=z[1])
        z ^= key
        _mix_inplace(z)
        y = np.empty((n, NUM_CARDS + 1), dtype=np.uint64)
        np.add(z[-1][:, None], _J[:NUM_CARDS], out=y[:, :NUM_CARDS])
        if draw_first:
            np.add(z[0], _J[0], out=y[:, NUM_CARDS])
        else:
            y[:, NUM_CARDS] = 0
        yf = y.reshape(-1)
        _mix_inplace(yf)
        if draw_first:
            first = y[:, NUM_CARDS] >> _U(40)
            first *= _U(P)
            first >>= _U(24)
            first = first.astype(np.int8)
        else:
            first = np.zeros(n, dtype=np.int8)
        ctr += _U(z.shape[0])
        # deckgym.rng.shuffled's permutation argsort(keys >> 1), by one sort of the keys
        # carrying the card id in their low 6 bits (the same unless two keys agree on their
        # top 57 bits)
        yf >>= _U(7)
        yf <<= _U(6)
        y |= _CARD_IDS53
        y[:, :NUM_CARDS].sort(axis=1)
        deck = np.empty((n, NUM_CARDS + 1), dtype=np.uint8)
        np.bitwise_and(yf, _U(63), out=deck.reshape(-1), casting="unsafe")
        deck[:, NUM_CARDS] = PAD
        # the seats in the game take consecutive cards (PAD for the others and past
        # hand_size), each hand sorted by a sorting network on its 5 card bytes
        if alive is None:
            hb = deck.take(self._deal_idx[self._full_alive], axis=1)
            base = self._deal_base[self._full_alive]
            up = deck[:, base].astype(_I64)  # L3: the top card is turned up: the first floor
        else:
            hb = deck[np.arange(n)[:, None], self._deal_idx[alive]]
            base = self._deal_base.take(alive)
            up = deck[np.arange(n), base].astype(_I64)
        hb = hb.reshape(n * P, 8)
        cols = [hb[:, i] for i in range(HAND_MAX)]
        for i, j in SORT5_NETWORK:
            lo = np.minimum(cols[i], cols[j])
            np.maximum(cols[i], cols[j], out=cols[j])
            cols[i][...] = lo
        hands = hb.view(_I64).reshape(-1)
        u16 = hb.view(np.uint16).reshape(-1)
        hbits = PAIR_BITS.take(u16[0::4])
        hbits |= PAIR_BITS.take(u16[1::4])
        hbits |= PAIR_BITS.take(u16[2::4])
        return ctr, first, deck, hands, hbits, self._legal_of(hands), up, base + 1

    def _write_deal(self, s: LeastScoreState, g: np.ndarray, ctr, first, deck, hands, hbits, legal, up, top) -> None:
        """Writes a deal (:meth:`_deal_compute`) into the games ``g``."""
        s.rng_counter[g] = ctr
        s.deck[g] = deck
        fi = self._flat_rows(g)
        s.hands.reshape(-1)[fi] = hands
        s.hand_bits.reshape(-1)[fi] = hbits
        s.legal.reshape(-1)[fi] = legal
        s.known.reshape(-1)[fi] = 0
        upbit = CARD_BIT.take(up)
        s.floor[g] = up | (PAD_WORD & ~0xFF)
        s.floor_sel[g] = 1
        s.floor_bits[g] = upbit
        s.pending[g] = PAD_WORD
        s.pending_sel[g] = 0
        s.pending_bits[g] = 0
        s.top[g] = top
        s.seen[g] = upbit
        s.dead[g] = 0
        s.player[g] = first
        s.first[g] = first
        s.phase[g] = 0
        s.turn[g] = 0
        s.round[g] += 1
        s.over[g] = False
        s.mask[g] = legal.take(self._step_buffers.get(s.phase.shape[0])[1][: g.size] + first)  # nobody may declare before everyone has played (L7)
        if isinstance(s, LeastScoreInfoState):  # a new round: nothing of it is public yet
            s.thrown[g] = 0
            s.picked[g] = 0
            s.draws[g] = 0

    def deal(self, seed: int, options: dict) -> LeastScoreState:
        """One game (B = 1) from an explicit deal; ``ValueError`` naming any problem.

        ``options``: ``{"hands": [[card, ...], ...] (one list per seat, 1..hand_size cards),
        "deck": [top, ...], "floor": [card, ...], "first_player": k, "scores": [...]}``;
        all but ``hands`` optional. Unlisted cards are shuffled with ``seed`` beneath the
        listed deck cards; without ``floor`` the top deck card is turned up (L3).
        """
        r, P = self.rules, self.num_players
        if not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        allowed = set(self.DEAL_KEYS)
        unknown = sorted(map(str, set(options) - allowed))
        if unknown:
            raise ValueError(f"unknown deal option(s) {unknown}; allowed: {sorted(allowed)}")
        if "hands" not in options:
            raise ValueError("deal options need 'hands' (one list of cards per player)")
        hands_in = options["hands"]
        if not isinstance(hands_in, (list, tuple)) or len(hands_in) != P:
            got = f"{len(hands_in)} hands" if isinstance(hands_in, (list, tuple)) else repr(hands_in)
            raise ValueError(f"'hands' must list {P} hands (one per player), got {got}")
        used: dict[int, str] = {}

        def take(cards, where: str) -> list[int]:
            if isinstance(cards, str) or not isinstance(cards, (list, tuple)):
                raise ValueError(f"{where} must be a list of cards, got {cards!r}")
            out = []
            for t in cards:
                try:
                    c = parse_card(t)
                except ValueError as e:
                    raise ValueError(f"{where}: {e}") from None
                if c in used:
                    raise ValueError(f"duplicate card {t!r} in {where} (already in {used[c]})")
                used[c] = where
                out.append(c)
            return out

        hands = []
        for p, h in enumerate(hands_in):
            cards = take(h, f"hands[{p}]")
            if not 1 <= len(cards) <= r.hand_size:
                raise ValueError(f"hands[{p}] must hold 1..{r.hand_size} cards (hand_size), got {len(cards)}")
            hands.append(sorted(cards))
        floor = None
        if "floor" in options:
            floor = take(options["floor"], "floor")
            if not 1 <= len(floor) <= HAND_MAX:
                raise ValueError(f"floor must hold 1..{HAND_MAX} cards, got {len(floor)}")
        deck_top = take(options.get("deck", []), "deck")
        first = options.get("first_player")
        if first is not None and (
            not isinstance(first, (int, np.integer)) or isinstance(first, bool) or not 0 <= first < P
        ):
            raise ValueError(f"first_player must be a seat in 0..{P - 1}, got {first!r}")
        scores = options.get("scores", [0] * P)
        if (
            not isinstance(scores, (list, tuple))
            or len(scores) != P
            or not all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x < r.elimination_score
                for x in scores
            )
        ):
            raise ValueError(f"scores must list {P} ints in 0..{r.elimination_score - 1}, got {scores!r}")
        if floor is None and len(used) == NUM_CARDS:
            raise ValueError("no card left to turn up as the floor (give 'floor' or leave cards in the deck)")
        s = self.empty(1)
        check_init_args(1, seed, None)
        s.rng_key[:] = make_keys(int(seed), np.zeros(1, dtype=_I64))
        if first is None:
            first = int(random_below(s.rng_key, s.rng_counter, P)[0]) if r.first_player == "random" else 0
        rest = np.array([c for c in range(NUM_CARDS) if c not in used], dtype=_I64)
        order = shuffled(s.rng_key, s.rng_counter, NUM_CARDS)[0]
        rest = rest[np.argsort(order[: rest.size], kind="stable")]  # unlisted cards in random order
        deck = deck_top + rest.tolist()
        if floor is None:  # L3: the top card of the deck is turned up
            floor, deck = [deck[0]], deck[1:]
        floor = sorted(floor)
        s.hands[0] = [words_of(np.array(h, dtype=np.uint8)) for h in hands]
        s.hand_bits[0] = hand_word_bits(s.hands[0])
        s.legal[0] = self._legal_of(s.hands[0])
        s.floor[0] = words_of(np.array(floor, dtype=np.uint8))
        s.floor_sel[0] = (1 << len(floor)) - 1
        s.floor_bits[0] = hand_word_bits(s.floor[0])
        top = NUM_CARDS - len(deck)
        s.deck[0, top:NUM_CARDS] = deck
        s.top[0] = top
        s.seen[0] = s.floor_bits[0]
        s.scores[0] = scores
        s.player[0] = s.first[0] = first
        s.round[0] = 1
        s.mask[0] = s.legal[0, first]
        return s

    def reshuffle(self, s: LeastScoreState, g: np.ndarray) -> None:
        """L6: shuffle the dead pile into a new deck (cards elsewhere get the sentinel key)."""
        isdead = bits52(s.dead[g])
        ctr = s.rng_counter[g]
        keys = permutation_keys(s.rng_key[g], ctr, NUM_CARDS)
        s.rng_counter[g] = ctr
        keys[~isdead] = np.uint64(0xFFFFFFFFFFFFFFFF)
        order = np.argsort(keys, axis=1, kind="stable")  # dead cards first, in random order
        n = isdead.sum(axis=1)
        s.deck[g, :NUM_CARDS] = order[:, ::-1]  # so the dead cards are deck[52 - n:52]
        s.top[g] = NUM_CARDS - n
        s.dead[g] = 0
