"""Illegal actions in every view: the two policies, the one-line message, and the log that
warns once and counts the rest.

``illegal_action="raise"`` refuses the action with a ``ValueError`` naming it, the phase and
the legal actions. ``"terminate"`` ends the episode: the offender gets −1 and the others 0
(PettingZoo classic's ``TerminateIllegalWrapper`` convention); the first illegal action in
each phase of the game is logged as a Gymnasium warning, later ones are only counted, so a
mask-less learner's thousands of illegal actions do not flood the log
(``info["illegal_actions"]``). The PettingZoo env raises by default; the Gymnasium views
terminate by default.
"""

from __future__ import annotations

from typing import Any, Callable

import gymnasium
import numpy as np

__all__ = ["ILLEGAL_ACTION_MODES", "IllegalActionError", "IllegalActionLog", "check_illegal_action_mode",
           "illegal_action_message"]

ILLEGAL_ACTION_MODES = ("raise", "terminate")


class IllegalActionError(ValueError):
    """An action that is not legal in the current phase (a ``ValueError``)."""


def check_illegal_action_mode(mode: Any) -> str:
    """``mode`` if it is one of :data:`ILLEGAL_ACTION_MODES`; a ``ValueError`` naming them otherwise."""
    if mode not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {mode!r}")
    return mode


def illegal_action_message(core: Any, state: Any, action: int, mask: np.ndarray, who: str = "",
                           learner: bool = False, game: int | None = None) -> str:
    """One line naming the action, the phase and the legal actions (game 0 of ``state``):
    ``illegal action 5 (slot_4) for player_1 in phase 'choose'; legal: ...`` (``who``), or
    ``illegal learner action 5 (slot_4) in game 3 in phase ...`` (a Gymnasium view's learner)."""
    phase = core.phase_names[int(core.phase(state)[0])]
    legal = ", ".join(f"{i} ({core.action_names[i]})" for i in np.flatnonzero(mask))
    what = f"{action} ({core.action_names[action]})" if 0 <= action < core.num_actions else f"{action} (out of range)"
    where = (f" for {who}" if who else "") + (f" in game {game}" if game is not None else "")
    return f"illegal {'learner ' if learner else ''}action {what}{where} in phase {phase!r}; legal: {legal}"


class IllegalActionLog:
    """Counts of illegal actions per game row (``counts``; the env zeroes them at a seeded
    reset, so that the reset replays exactly) and a warning the first time each phase sees one
    in the env's lifetime."""

    def __init__(self, rows: int) -> None:
        self.counts = np.zeros(rows, np.int64)
        self.warned: set[int] = set()

    def record(self, phase_names: tuple[str, ...], games: np.ndarray, phases: np.ndarray,
               message: Callable[[int], str]) -> None:
        """Count one illegal action in each of ``games`` (phases aligned); warn with
        ``message(game)`` for the first game of a phase not warned about yet."""
        self.counts[games] += 1
        for ph in np.unique(phases).tolist():  # one pass per phase present, never per game
            if ph in self.warned:
                continue
            self.warned.add(ph)
            g = int(games[np.flatnonzero(phases == ph)[0]])
            gymnasium.logger.warn(f"{message(g)}; the episode ends with reward -1 (illegal_action='terminate'); "
                                  f"later illegal actions in phase {phase_names[ph]!r} are not logged, "
                                  "info['illegal_actions'] counts them")
