"""The valid ranges of the agents' tuning parameters (``racko:lookahead?outlook_samples=8``).

Every heuristic declares ``param_ranges``: one :class:`Range` or :class:`Choice` per
parameter a spec may set. :func:`check_params` refuses a value outside it with a
``ValueError`` naming the agent, the parameter and the valid range, before any game is
played (never a numpy error deep inside the planner).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Range", "Choice", "check_params"]


@dataclass(frozen=True)
class Range:
    """A number in ``[low, high]`` (``None``: unbounded on that side, still finite); ``integer`` for ints."""

    low: float | None = None
    high: float | None = None
    integer: bool = False
    why: str = ""

    def describe(self) -> str:
        kind = "an int" if self.integer else "a finite number"
        if self.low is None and self.high is None:
            span = ""
        elif self.high is None:
            span = f" >= {self.low:g}"
        elif self.low is None:
            span = f" <= {self.high:g}"
        else:
            span = f" in [{self.low:g}, {self.high:g}]"
        return kind + span + (f" ({self.why})" if self.why else "")

    def ok(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.integer and not float(value).is_integer():
            return False
        if not math.isfinite(value):
            return False
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


@dataclass(frozen=True)
class Choice:
    """One of a few strings."""

    options: tuple[str, ...]

    def describe(self) -> str:
        return "one of " + ", ".join(map(repr, self.options))

    def ok(self, value: Any) -> bool:
        return value in self.options


def check_params(who: str, ranges: dict[str, Range | Choice], values: dict[str, Any]) -> None:
    """Raise ``ValueError`` for the first value outside its declared range (or undeclared)."""
    for key, value in values.items():
        rule = ranges.get(key)
        if rule is None:
            raise ValueError(f"agent {who!r}: parameter {key!r} has no declared range")
        if not rule.ok(value):
            raise ValueError(f"agent {who!r}: {key} must be {rule.describe()}, got {value!r}")
