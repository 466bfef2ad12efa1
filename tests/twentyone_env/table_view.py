"""A Twenty-One table for the browser viewer: every hand from the state, totals from a seat's observation."""

from __future__ import annotations

from typing import Any, Sequence


def phase_text(phase: str) -> str:
    """The decision in words, for the viewer's move list."""
    return "draw or stand"


def _card(c: int) -> dict[str, Any]:
    return {"t": str(int(c)), "known": True}


def god_table(state: dict[str, Any], labels: Sequence[str]) -> dict[str, Any]:
    seats = [{"seat": p, "label": labels[p], "to_move": p == state["player"], "row": "hand",
              "cards": [_card(c) for c in hand], "note": f"total {state['totals'][p]}, wins {state['wins'][p]}"}
             for p, hand in enumerate(state["hands"])]
    piles = [{"name": "deck", "count": len(state["deck"]), "cards": [_card(c) for c in state["deck"]]}]
    return {"seats": seats, "piles": piles, "hand": None, "info": f"turn {state['turn'] + 1}"}


def seat_table(view: dict[str, Any], seat: int, labels: Sequence[str]) -> dict[str, Any]:
    P = len(labels)
    seats = sorted(({"seat": (seat + i) % P, "label": labels[(seat + i) % P], "to_move": i == int(view["to_move"]),
                     "row": "total", "cards": [_card(view["totals"][i])], "note": f"wins {int(view['wins'][i])}"}
                    for i in range(P)), key=lambda d: d["seat"])
    piles = [{"name": "deck", "count": int(view["deck_left"]), "cards": [{"hidden": True}] * int(view["deck_left"])}]
    return {"seats": seats, "piles": piles, "hand": None, "info": f"turn {int(view['turn']) + 1}"}
