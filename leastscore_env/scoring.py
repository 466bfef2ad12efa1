"""Least Score round ends: the declaration (L8), the turn cap (L10), elimination and the
match (L9), and the episode's winners and rewards."""

from __future__ import annotations

import numpy as np

from deckgym.core import StepResult, zero_sum_win_rewards
from leastscore_env.core_tables import CoreTables
from leastscore_env.dealing import LeastScoreDealing
from leastscore_env.rules import LeastScoreRules
from leastscore_env.state import LeastScoreState
from leastscore_env.tables import INT32_MAX, NEXT_SEAT, PAIR_VALUE

_I64 = np.int64


class LeastScoreScoring:
    """Round and match ends of a :class:`leastscore_env.core.LeastScoreCore`, a part it holds as
    ``core.scoring``: ``episode`` and ``reward`` as the core's; ``dealing`` deals the next round."""

    def __init__(self, rules: LeastScoreRules, tables: CoreTables, episode: str, reward: str,
                 dealing: LeastScoreDealing) -> None:
        self.rules, self.episode, self.reward, self.dealing = rules, episode, reward, dealing
        P = self.num_players = rules.num_players
        self._full_alive = tables.full_alive
        self._flat_rows, self._flat_rows_T = tables.flat_rows, tables.flat_rows_T
        self._arangeP_col, self._alive_weights, self._alive_bool_T = (tables.arange_p_col, tables.alive_weights,
                                                                      tables.alive_bool_T)
        # zero_sum_win_rewards as a table: at 2 k + w, the reward of a winner (w = 1) or a
        # loser (w = 0) in a row with k winners
        zs = np.zeros((P + 1, 2), dtype=np.float32)
        for k in range(P + 1):
            w = np.arange(P) < k
            rew = zero_sum_win_rewards(w[None])[0]
            zs[k, 1] = rew[0] if k else 0.0
            zs[k, 0] = rew[-1] if k < P else 0.0
        self._zero_sum = zs.reshape(-1)

    def end_rounds(self, s: LeastScoreState, g: np.ndarray, declared: bool, res: StepResult) -> None:
        """L8 scoring (or the L10 cap), then L9 elimination / next deal / end of the episode.

        Per-player arrays are (P, n) (seat, game), so that numpy's loops run over games."""
        r, P = self.rules, self.num_players
        n = g.size
        fi = self._flat_rows_T(g)  # (P, n): the flat (B * P) rows
        u = s.hands.reshape(-1).take(fi).view(np.uint16)  # (P, 4 n)
        tot = PAIR_VALUE.take(u[:, 0::4])  # L1 hand totals, by byte pairs
        tot += PAIR_VALUE.take(u[:, 1::4])
        tot += PAIR_VALUE.take(u[:, 2::4])
        alive = s.alive.take(g)
        everybody = alive.min() == self._full_alive  # (always, in round episodes)
        al = self._alive_bool_T.take(alive, axis=1)  # (P, n)
        if declared:  # L8
            cur = s.player.take(g)
            is_cur = self._arangeP_col == cur
            d = np.where(is_cur, tot, 0).sum(axis=0, dtype=np.int32)
            m = np.where(is_cur if everybody else al ^ is_cur, INT32_MAX if everybody else tot, tot if everybody else INT32_MAX).min(axis=0)
            ok = d <= m if r.tie_wins else d < m
            pts = tot - d  # correct: every other player scores total - d (the declarer: 0)
            if not everybody:
                pts *= al
            m -= d
            np.subtract(r.penalty, m, out=m)
            pts = np.where(ok, pts, is_cur * m)  # false: penalty + (d - m), others 0
        else:  # L10: everybody scores 0
            pts = np.zeros((P, n), dtype=np.int32)
        scores = s.scores.reshape(-1).take(fi) + pts
        s.scores.reshape(-1)[fi] = scores.astype(np.int16)
        res.round_over[g] = True
        res.round_points.reshape(-1)[fi] = pts
        res.total_points.reshape(-1)[fi] = scores
        res.extra["hand_total"].reshape(-1)[fi] = tot
        if self.reward == "points":
            res.rewards.reshape(-1)[fi] = -pts  # lower points are better
        if self.episode == "round":
            if declared:  # round winners: fewest round points, ties share
                best = (pts if everybody else np.where(al, pts, INT32_MAX)).min(axis=0)
                winners = pts == best
                if not everybody:
                    winners &= al
                res.terminated[g] = True
                rewards = self._zero_sum.take(winners.sum(axis=0) * 2 + winners) if self.reward == "win" else None
            else:
                winners = np.zeros((P, n), dtype=bool)
                res.truncated[g] = True
                rewards = 0.0
            self._finish(s, g, winners, res, rewards, fi)
            return
        al, scores = al.T, scores.T  # (n, P) for the rarer match paths
        if not declared and r.cap_ends_match:  # L10 in a match: the match is truncated
            res.truncated[g] = True
            # The players eliminated earlier were paid -1/(P-1) each when they left (below):
            # the players still in share that back, so a match's rewards always sum to 0
            # (everybody 0 if nobody was eliminated).
            nal = al.sum(axis=1, keepdims=True)
            self._finish(s, g, np.zeros((n, P), dtype=bool), res, np.where(al, (P - nal) / ((P - 1) * nal), 0.0))
            return
        # L9: elimination (total >= threshold), then the next round or the end of the match
        newly = al & (scores >= r.elimination_score)
        left = al & ~newly
        s.alive[g] = left @ self._alive_weights
        nleft = left.sum(axis=1)
        end = nleft <= 1
        winners = np.zeros((n, P), dtype=bool)
        if end.any():
            lowest = np.where(newly[end], scores[end], INT32_MAX).min(axis=1)
            winners[end] = np.where(
                (nleft[end] == 1)[:, None], left[end], newly[end] & (scores[end] == lowest[:, None])
            )
        if self.reward == "win":
            # A player eliminated before the end leaves the game (the AEC env removes it), so
            # it is paid its loss now: -1/(P-1), a zero-sum loser's value with one winner. At
            # the match end each winner gets +1: a match sums to 0 with one winner (with k > 1
            # tied winners, L9's rare tie, to k - (P-k)/(P-1); see env.py).
            res.rewards[g] = np.where(winners, np.float32(1.0), np.where(newly, np.float32(-1.0 / (P - 1)), 0.0))
        if end.any():
            ge = g[end]
            res.terminated[ge] = True
            self._finish(s, ge, winners[end], res, None)
        go = ~end
        if go.any():
            gg = g[go]
            nxt = NEXT_SEAT[(s.alive[gg].astype(_I64) << 3) | s.first[gg]]  # the start passes left
            self.dealing.deal_rows(s, gg, nxt.astype(_I64))

    def _finish(self, s: LeastScoreState, g: np.ndarray, winners: np.ndarray, res: StepResult, rewards, fi=None) -> None:
        """The episode ends for games ``g``; ``rewards`` (``"win"``) are paid unless None.
        ``winners`` and ``rewards``: (n, P), or (P, n) when ``fi`` (:meth:`_flat_rows_T`)
        is given."""
        if fi is None:
            fi = self._flat_rows(g).reshape(winners.shape)
        res.winners.reshape(-1)[fi] = winners
        if self.reward == "win" and rewards is not None:
            res.rewards.reshape(-1)[fi] = rewards
        s.over[g] = True
        s.mask[g] = 0
