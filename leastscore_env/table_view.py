"""A Least Score table as the browser viewer draws it: seats with their hands, the floor, the
discards of the turn, the deck and the dead pile.

:func:`god_table` draws the full state (``core.state_dict``: every hand face up);
:func:`seat_table` draws one seat's decoded observation only (``core.obs_view``): an
opponent's card that seat cannot know is a face-down ``{"hidden": True}``. Cards are
``{"t": "7♦", "red": bool, "known": bool}``; ``known`` marks a card taken from the floor
(public until discarded, L6). A seat's note gives its hand value (the sum of its cards, L1) and
its score (the sum of its round points, L9).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from leastscore_env.cards import card_str, card_value, parse_card

HIDDEN = {"hidden": True}
LEGEND = [{"mark": "known", "example": "7\u2666", "red": True, "text": "known to every player (taken from the floor, L4)"}]
PHASES = {"discard": "discards a group or declares", "draw": "takes a card from the deck or the floor"}


def phase_text(phase: str) -> str:
    """A decision in words (``core.phase_names`` are for code)."""
    return PHASES.get(phase, phase)


def _turns(n: int) -> str:
    return f"{int(n)} turn{'' if int(n) == 1 else 's'} played this round"


def _card(c: int, known: bool = False) -> dict[str, Any]:
    c = int(c)
    return {"t": card_str(c, symbols=True), "red": (c & 3) in (1, 2), "known": bool(known)}


def _ids(texts: Sequence[str]) -> list[int]:
    return [parse_card(t) for t in texts]


def god_table(state: dict[str, Any], labels: Sequence[str]) -> dict[str, Any]:
    """Every hand, the floor, the deck in order and the dead pile, from ``core.state_dict``."""
    P = len(state["hands"])
    cur = int(state["current_player"])
    seats: list[dict[str, Any]] = []
    for s in range(P):
        known = set(_ids(state["known"][s]))
        note = f"hand value {state['hand_totals'][s]}, score {state['scores'][s]}" if state["alive"][s] else "eliminated"
        seats.append({"seat": s, "label": labels[s], "to_move": s == cur and not state["over"], "row": "hand",
                      "cards": [_card(c, c in known) for c in _ids(state["hands"][s])], "note": note})
    piles = [{"name": "floor", "count": len(state["floor"]), "cards": [_card(c) for c in _ids(state["floor"])]},
             {"name": "discarded this turn", "count": len(state["discard"]),
              "cards": [_card(c) for c in _ids(state["discard"])]},
             {"name": "deck", "count": len(state["deck"]), "cards": [_card(c) for c in _ids(state["deck"])]},
             {"name": "dead pile", "count": len(state["dead"]), "cards": [_card(c) for c in _ids(state["dead"])]}]
    who = "" if state["over"] else f"; {labels[cur]} {phase_text(state['phase'])}"
    return {"seats": seats, "piles": piles, "hand": None, "legend": LEGEND,
            "info": f"round {state['round']}, {_turns(state['turn'])}{who}"}


def seat_table(view: dict[str, Any], seat: int, labels: Sequence[str]) -> dict[str, Any]:
    """What ``seat`` sees, from its own observation only (ego-centric: opponent i is seat ``seat+1+i``)."""
    P = len(labels)
    to_move = np.flatnonzero(np.asarray(view["to_move"]))
    mover = (seat + int(to_move[0])) % P if len(to_move) else -1
    alive = np.asarray(view["alive"])
    seats: list[dict[str, Any]] = []
    for i in range(P):
        s = (seat + i) % P
        if i == 0:
            hand = [int(c) for c in view["hand"] if int(c) >= 0]
            cards = [_card(c) for c in hand]
            note = f"hand value {sum(card_value(c) for c in hand)}, score {int(view['scores'][0])}"
        else:
            known = [int(c) for c in np.flatnonzero(np.asarray(view["opp_known"][i - 1]))]
            size = int(view["opp_hand_size"][i - 1])
            cards = [_card(c, True) for c in known] + [dict(HIDDEN)] * (size - len(known))
            note = f"score {int(view['scores'][i])}"
        if not alive[i]:
            cards, note = [], "eliminated"
        seats.append({"seat": s, "label": labels[s], "to_move": s == mover, "row": "hand", "cards": cards, "note": note})
    seats.sort(key=lambda d: d["seat"])
    floor = [int(c) for c in view["floor"] if int(c) >= 0]
    pending = [int(c) for c in np.flatnonzero(np.asarray(view["discard"]))]
    dead = [int(c) for c in np.flatnonzero(np.asarray(view["dead"]))]
    piles = [{"name": "floor", "count": len(floor), "cards": [_card(c) for c in floor]},
             {"name": "discarded this turn", "count": len(pending), "cards": [_card(c) for c in pending]},
             {"name": "deck", "count": int(view["deck_size"]), "cards": [dict(HIDDEN)] * int(view["deck_size"])},
             {"name": "dead pile", "count": len(dead), "cards": [_card(c) for c in dead]}]
    return {"seats": seats, "piles": piles, "hand": None, "legend": LEGEND, "info": _turns(view["turn"])}
