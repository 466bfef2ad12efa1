"""Rack-O round ends: scoring (R8), the run bonus (R10), partners (R11), the turn cap's
winners (R9) and the match (R12, the next deal passes to the left, R3)."""

from __future__ import annotations

import numpy as np

from deckgym.core import StepResult, zero_sum_win_rewards
from racko_env.dealing import RackoDealing
from racko_env.rules import RackoRules
from racko_env.tables import LONGEST_RUN, PREFIX_LEN, rack_codes
from racko_env.state import RackoState


class RackoScoring:
    """Round and match ends of a :class:`racko_env.core.RackoCore`, a part it holds as
    ``core.scoring``: ``episode`` and ``reward`` as the core's; ``dealing`` deals a match's
    next round."""

    def __init__(self, rules: RackoRules, episode: str, reward: str, dealing: RackoDealing) -> None:
        self.rules, self.episode, self.reward, self.dealing = rules, episode, reward, dealing
        self.num_players = rules.num_players
        # R10: the run bonus by the length of the longest run (zeros without the variant)
        bonus = np.array([rules.run_bonus(r) for r in range(11)], dtype=np.int64)
        self._bonus_by_run = bonus if rules.run_bonus_active else np.zeros(11, dtype=np.int64)

    def end_rounds(self, st: RackoState, e: np.ndarray, p: np.ndarray, went: np.ndarray, res: StepResult) -> None:
        """R8–R12 for the games ``e`` whose round just ended (``p``: who played)."""
        P, n = self.num_players, len(e)
        racks = np.abs(st.racks[e].astype(np.int16))
        codes = rack_codes(racks)  # (n, P)
        went_e = went[e]
        went_p = np.zeros((n, P), bool)
        went_p[np.arange(n), p[e]] = went_e
        bonus = np.where(went_p, self._bonus_by_run[LONGEST_RUN[codes]], 0)  # R10 / R11
        own = np.where(went_p, 75, 5 * PREFIX_LEN[codes].astype(np.int64)) + bonus  # R8
        if self.rules.partners:  # R11: team score = sum, both members carry it
            pts = own[:, [0, 1, 0, 1]] + own[:, [2, 3, 2, 3]]
            round_win = went_p | went_p[:, [2, 3, 0, 1]]
        else:
            pts = own
            round_win = went_p
        # R9: no Rack-O: the most round points win (ties share).
        round_win = np.where(went_e[:, None], round_win, pts == pts.max(axis=1, keepdims=True))
        totals = st.scores[e].astype(np.int64) + pts
        st.scores[e] = totals
        res.round_points[e] = pts
        res.total_points[e] = totals
        res.extra["own_points"][e] = own
        res.extra["went_out"][e] = went_p
        res.extra["run_bonus"][e] = bonus
        if self.episode == "round":
            res.terminated[e] = went_e
            res.truncated[e] = ~went_e
            winners = round_win
            ended = e
        else:  # R12: the match ends once a player (team) reaches the target
            over = (totals >= self.rules.target_score).any(axis=1)
            res.terminated[e] = over
            winners = (totals == totals.max(axis=1, keepdims=True))[over]
            ended = e[over]
            nxt = e[~over]
            if len(nxt):  # next round, the deal passes to the left (R3)
                self.dealing.deal_rows(st, nxt, (st.dealer[nxt].astype(np.int64) + 1) % P)
        res.winners[ended] = winners
        if self.reward == "win":
            res.rewards[ended] = zero_sum_win_rewards(winners)
        else:
            res.rewards[e] = pts
