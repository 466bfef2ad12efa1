"""A Rack-O table as the browser viewer draws it: seats with their racks, the piles, the card in hand.

Two builders, one per view: :func:`god_table` from the full state (``core.state_dict``: every
card face up) and :func:`seat_table` from one seat's decoded observation (``core.obs_view``:
a card that seat cannot see is a face-down ``{"hidden": True}``, so nothing hidden can be
drawn, and every card the observation holds is drawn: the whole discard pile, R5). Cards are
``{"t": text, "known": bool}``; ``known`` marks a card every player has seen (taken from the
discard pile, R5). A rack's cards carry their ``slot`` (1 = front); on a rack whose every card is
shown, ``ord`` marks the increasing stretch from slot 1 that scores (R8) and ``run`` the runs of
three or more consecutive numbers (R7, R10).
"""

from __future__ import annotations

from typing import Any, Sequence

HIDDEN = {"hidden": True}
MIN_RUN = 3  # the shortest run any rule counts (R7's two-player run, R10's bonus)
PHASES = {"choose": "chooses a pile", "place_discard": "puts the card taken from the discard in a slot",
          "place_drawn": "puts the drawn card in a slot or discards it"}


# what the marks mean: a bar under a slot ("ord") or a card's look ("run", "known"), with an example card
LEGEND = [{"mark": "ord", "text": "in order from slot 1: these cards score, 5 points each (R8)"},
          {"mark": "run", "example": "24", "text": f"a run of {MIN_RUN} or more consecutive numbers (R7)"},
          {"mark": "known", "example": "17", "text": "known to every player (taken from the discard pile, R5)"}]


def phase_text(phase: str) -> str:
    """A decision in words (``core.phase_names`` are for code)."""
    return PHASES.get(phase, phase)


def _card(c: int, known: bool = False) -> dict[str, Any]:
    return {"t": str(int(c)), "known": bool(known)}


def ordered_length(rack: Sequence[int]) -> int:
    """How many cards increase from slot 1 (the stretch R8 scores)."""
    n = 1
    while n < len(rack) and rack[n] > rack[n - 1]:
        n += 1
    return n


def runs(rack: Sequence[int]) -> list[tuple[int, int]]:
    """``(first slot, last slot)`` of each run of ``MIN_RUN`` or more consecutive numbers in adjacent slots."""
    out, start = [], 0
    for k in range(1, len(rack) + 1):
        if k == len(rack) or rack[k] != rack[k - 1] + 1:
            if k - start >= MIN_RUN:
                out.append((start + 1, k))
            start = k
    return out


def _rack(cards: list[dict[str, Any]], rack: Sequence[int] | None) -> tuple[list[dict[str, Any]], str]:
    """The rack's cards with their slots and, when every card is shown (``rack``), the marks and their words."""
    for k, c in enumerate(cards, 1):
        c["slot"] = k
    if rack is None:
        return cards, ""
    n = ordered_length(rack)
    found = runs(rack)
    in_run = [False] * (len(cards) + 2)  # linear in the cards (a replay's rack can be any length)
    for a, b in found:
        in_run[a:b + 1] = [True] * (b - a + 1)
    for k, c in enumerate(cards, 1):
        c["ord"] = k <= n
        c["run"] = in_run[k]
    words = "all 10 in order" if n == 10 else f"slots 1-{n} in order" if n > 1 else "only slot 1 in order"
    if found:
        words += "; run " + ", ".join(f"{rack[a - 1]}-{rack[b - 1]}" for a, b in found)
    return cards, words


def _seat(s: int, label: str, to_move: bool, cards: list[dict[str, Any]], rack: Sequence[int] | None,
          score: int) -> dict[str, Any]:
    cards, marks = _rack(cards, rack)
    return {"seat": s, "label": label, "to_move": to_move, "row": "rack (slot 1 first)", "cards": cards,
            "note": f"score {score}" + (f"; {marks}" if marks else "")}


def god_table(state: dict[str, Any], labels: Sequence[str]) -> dict[str, Any]:
    """Every rack, both piles in order and the card in hand, from ``core.state_dict``."""
    P = len(state["racks"])
    cur = int(state["player"])
    known = [set(state["known_slots"][s]) for s in range(P)]  # a set: linear in the cards, whatever the rack's length
    seats = [_seat(s, labels[s], s == cur, [_card(c, k + 1 in known[s]) for k, c in enumerate(state["racks"][s])],
                   state["racks"][s], state["totals"][s])
             for s in range(P)]
    discard = list(reversed(state["discard_pile"]))  # top first
    piles = [{"name": "draw pile", "count": len(state["draw_pile"]), "cards": [_card(c) for c in state["draw_pile"]]},
             {"name": "discard pile", "count": len(discard), "cards": [_card(c) for c in discard], "note": "top first"}]
    hand = {"seat": cur, "card": _card(state["hand"])} if state["hand"] else None
    return {"seats": seats, "piles": piles, "hand": hand, "legend": LEGEND,
            "info": f"{_turns(state['turn'])}; {labels[cur]} {phase_text(state['phase'])}"}


def _turns(n: int) -> str:
    return f"{int(n)} turn{'' if int(n) == 1 else 's'} played this round"


def seat_table(view: dict[str, Any], seat: int, labels: Sequence[str]) -> dict[str, Any]:
    """What ``seat`` sees, from its own observation only (ego-centric: opponent i is seat ``seat+1+i``)."""
    P = len(labels)
    mover = (seat + int(view["to_move"])) % P if "to_move" in view else seat
    seats = []
    for i in range(P):
        s = (seat + i) % P
        if i == 0:
            rack = [int(c) for c in view["rack"]]
            cards = [_card(c) for c in rack]
        else:
            rack = None  # partly hidden: no marks, they would hint at nothing but the known cards
            cards = [_card(c, True) if int(c) > 0 else dict(HIDDEN) for c in view["opp_known"][i - 1]]
        seats.append(_seat(s, labels[s], s == mover, cards, rack, int(view["scores"][i])))
    seats.sort(key=lambda d: d["seat"])
    top = int(view["discard_top"])
    # every discard is face up (R5): the observation holds the pile's cards, not their order beneath the top
    under = [c for c in range(1, len(view["in_discard"])) if view["in_discard"][c] and c != top]
    piles = [{"name": "draw pile", "count": int(view["draw_size"]), "cards": [dict(HIDDEN)] * int(view["draw_size"])},
             {"name": "discard pile", "count": int(view["discard_size"]),
              "cards": ([_card(top)] if top else []) + [_card(c) for c in under],
              "note": "top first, then the cards under it in number order" if under else ""}]
    if int(view["hand"]):
        hand = {"seat": seat, "card": _card(view["hand"])}
    elif int(view["phase"]) and mover != seat:
        hand = {"seat": mover, "card": dict(HIDDEN)}
    else:
        hand = None
    return {"seats": seats, "piles": piles, "hand": hand, "legend": LEGEND, "info": _turns(view["turn"])}
