"""A Rack-O table as the browser viewer draws it: seats with their racks, the piles, the card in hand.

Two builders, one per view: :func:`god_table` from the full state (``core.state_dict``: every
card face up) and :func:`seat_table` from one seat's decoded observation (``core.obs_view``:
a card that seat cannot see is a face-down ``{"hidden": True}``, so nothing hidden can be
drawn). Cards are ``{"t": text, "known": bool}``; ``known`` marks a card every player has seen
(taken from the discard pile, R5).
"""

from __future__ import annotations

from typing import Any, Sequence

HIDDEN = {"hidden": True}


def _card(c: int, known: bool = False) -> dict[str, Any]:
    return {"t": str(int(c)), "known": bool(known)}


def god_table(state: dict[str, Any], labels: Sequence[str]) -> dict[str, Any]:
    """Every rack, both piles in order and the card in hand, from ``core.state_dict``."""
    P = len(state["racks"])
    cur = int(state["player"])
    seats = [{"seat": s, "label": labels[s], "to_move": s == cur, "row": "rack (slot 1 first)",
              "cards": [_card(c, k + 1 in state["known_slots"][s]) for k, c in enumerate(state["racks"][s])],
              "note": f"total {state['totals'][s]}"} for s in range(P)]
    discard = list(reversed(state["discard_pile"]))  # top first
    piles = [{"name": "draw pile", "count": len(state["draw_pile"]), "cards": [_card(c) for c in state["draw_pile"]]},
             {"name": "discard pile", "count": len(discard), "cards": [_card(c) for c in discard]}]
    hand = {"seat": cur, "card": _card(state["hand"])} if state["hand"] else None
    return {"seats": seats, "piles": piles, "hand": hand, "info": f"turn {state['turn'] + 1}, {state['phase']}"}


def seat_table(view: dict[str, Any], seat: int, labels: Sequence[str]) -> dict[str, Any]:
    """What ``seat`` sees, from its own observation only (ego-centric: opponent i is seat ``seat+1+i``)."""
    P = len(labels)
    mover = (seat + int(view["to_move"])) % P if "to_move" in view else seat
    seats = []
    for i in range(P):
        s = (seat + i) % P
        if i == 0:
            cards = [_card(c) for c in view["rack"]]
        else:
            cards = [_card(c, True) if int(c) > 0 else dict(HIDDEN) for c in view["opp_known"][i - 1]]
        seats.append({"seat": s, "label": labels[s], "to_move": s == mover, "row": "rack (slot 1 first)",
                      "cards": cards, "note": f"total {view['scores'][i]}"})
    seats.sort(key=lambda d: d["seat"])
    top = int(view["discard_top"])
    piles = [{"name": "draw pile", "count": int(view["draw_size"]), "cards": [dict(HIDDEN)] * int(view["draw_size"])},
             {"name": "discard pile", "count": int(view["discard_size"]),
              "cards": ([_card(top)] if top else []) + [dict(HIDDEN)] * max(int(view["discard_size"]) - 1, 0)}]
    if int(view["hand"]):
        hand = {"seat": seat, "card": _card(view["hand"])}
    elif int(view["phase"]) and mover != seat:
        hand = {"seat": mover, "card": dict(HIDDEN)}
    else:
        hand = None
    return {"seats": seats, "piles": piles, "hand": hand, "info": f"turn {int(view['turn']) + 1}"}
