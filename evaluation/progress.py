"""The arena's progress bar (``deckgym eval``, ``make demo``), fed by decisions as well as finished games.

An arena plays its deals in batches whose games all start together and end near the same
step, so a bar that only counted finished games would sit at 0% and then jump (80 games of
``racko:search`` sat at 0/80 for a minute; 2,000 deals would for hours). :class:`ArenaProgress`
is also told the decisions made at every batched step (``evaluate(..., decisions=bar.decisions)``),
and estimates the share done as decisions made over decisions expected:

- a game is expected to take as many decisions as the finished ones did on average, and
  ``decisions_per_seat × players`` (the game's descriptor) before any has finished (measured with the
  heuristics: Rack-O about 40 decisions a 2-player round, Least Score about 18 a 4-player one);
- a game still running is expected to need at least one more decision, so the estimate never
  reaches 100% before the last game ends.

Without decision counts (the arena on Ray reports whole chunks) it counts finished games.

A round robin (``make demo``) plays its pairs one after another, and their costs differ by
orders of magnitude (two random players against two planners): a pace measured on the cheap
first pairs would promise far too little time. Given ``stage_weights`` (one per pair, each
``total_games / len(stage_weights)`` games: the pair's measured cost per deal), the share done
is the weighted work done: whole pairs at their weight, the pair being played at its weight
times its own decision-counted share.
On a terminal the line is redrawn in place; elsewhere a line is written every tenth.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from deckgym.registration import game as game_entry




class ArenaProgress:
    """Progress of ``total_games`` arena games of ``game`` at ``players`` seats, shown on ``out``
    (stderr by default) as ``label [####....] 34%, 27/80 games, 3,120 decisions, 0:50, about 1:37 left``.

    Feed it with ``games(n)`` (games just finished; also callable as ``bar(n)``) and
    ``decisions(n, finished_decisions)`` (decisions just made, and the decisions the games that
    just finished took in all). ``start_clock()`` restarts the timing (after a warm-up)."""

    def __init__(self, label: str, total_games: int, game: str = "racko", players: int = 2,
                 out: TextIO | None = None, tty: bool | None = None,
                 stage_weights: list[float] | None = None) -> None:
        self.label, self.total = label, max(int(total_games), 1)
        weights = [max(float(w), 1e-9) for w in (stage_weights or [1.0])]
        self.weights, self.stage_games = weights, self.total / len(weights)
        self.stage = 0  # the stage being played; its counters start at stage_start
        self.stage_start = (0, 0, 0)
        # about how many decisions a seat makes in a game, as the game's descriptor says
        self.prior = game_entry(game).descriptor.decisions_per_seat * players
        self.out = out or sys.stderr
        self.tty = (hasattr(self.out, "isatty") and self.out.isatty()) if tty is None else tty
        self.finished = self.made = self.finished_made = 0
        self._shown, self._last_draw = -1, 0.0
        self.start_clock()
        self.draw()

    def start_clock(self) -> None:
        """Time (and estimate the time left) from now."""
        self.t0 = time.perf_counter()

    # -- the estimate --------------------------------------------------------------------------
    def fraction(self) -> float:
        """The share of the work done, in [0, 1]; 1 only when every game has finished."""
        if self.finished >= self.total:
            return 1.0
        if len(self.weights) == 1:
            return self._share(self.finished, self.made, self.finished_made, self.total)
        f0, m0, fm0 = self.stage_start
        inside = self._share(self.finished - f0, self.made - m0, self.finished_made - fm0, self.stage_games)
        done = sum(self.weights[:self.stage]) + self.weights[self.stage] * inside
        return min(done / sum(self.weights), 1.0)

    def _share(self, finished: int, made: int, finished_made: int, total: float) -> float:
        """The decision-counted share done of ``total`` games (module docstring)."""
        if finished >= total:
            return 1.0
        if not made:
            return finished / total
        per_game = finished_made / finished if finished else self.prior
        active = total - finished
        running = made - finished_made  # decisions of the games not finished yet
        expected = finished_made + max(active * per_game, running + active)
        return min(made / expected, 1.0)

    def seconds_left(self) -> float | None:
        """The time left at the pace so far (None before any progress)."""
        frac, spent = self.fraction(), time.perf_counter() - self.t0
        return None if frac <= 0 else spent / frac - spent

    # -- the feed ------------------------------------------------------------------------------
    def games(self, n: int) -> None:
        """``n`` more games finished."""
        self.finished += int(n)
        while self.stage + 1 < len(self.weights) and self.finished >= round((self.stage + 1) * self.stage_games):
            self.stage += 1
            self.stage_start = (round(self.stage * self.stage_games), self.made, self.finished_made)
        self.draw()

    __call__ = games

    def decisions(self, n: int, finished_decisions: int = 0) -> None:
        """``n`` decisions made; the games that just finished took ``finished_decisions`` in all."""
        self.made += int(n)
        self.finished_made += int(finished_decisions)
        if time.perf_counter() - self._last_draw > 0.5:  # a turn can take microseconds: redraw at most twice a second
            self.draw()

    # -- the display ---------------------------------------------------------------------------
    def line(self) -> str:
        """The bar as one line of text."""
        frac = self.fraction()
        bar = "#" * int(24 * frac) + "." * (24 - int(24 * frac))
        spent = time.perf_counter() - self.t0
        left = self.seconds_left()
        eta = f"about {duration(left)} left" if left is not None and frac > 0 else "time left: after the first moves"
        made = f", {self.made:,} decisions" if self.made else ""
        return (f"{self.label} [{bar}] {100 * frac:.0f}%, {self.finished:,}/{self.total:,} games{made}, "
                f"{duration(spent)}, {eta}")

    def draw(self) -> None:
        """Redraw in place on a terminal; elsewhere write a line when another tenth is done."""
        self._last_draw = time.perf_counter()
        tenth = int(10 * self.fraction())
        if self.tty:
            self.out.write("\r" + self.line().ljust(110))
        elif tenth != self._shown:
            self.out.write(self.line() + "\n")
        self._shown = tenth
        self.out.flush()

    def close(self) -> None:
        """Clear the bar's line on a terminal (the results follow)."""
        if self.tty:
            self.out.write("\r" + " " * 110 + "\r")
            self.out.flush()


def duration(seconds: float | None) -> str:
    """``42 s``, ``7:05`` or ``1:02:05``."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m}:{s % 60:02d}"
