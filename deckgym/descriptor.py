"""A game's descriptor: every fact about one game that the shared code needs, in one object.

Each game package holds ``GAME = GameSpec(...)`` in its own ``descriptor`` module, and the
registration list (:mod:`deckgym.registration`) names the package once. Nothing shared
(``deckgym``, ``deckgym.evaluation``, ``deckgym.training``, the agent registry) knows a game
by its name: it asks the game's descriptor for its rules and core, its default opponents,
its evaluation ladder, its demo table, its terminal text, its renderer, its table view and
why a round ended, and its OpenSpiel form. A new game is a new package with a descriptor, and
one registration line.

``openspiel`` names the module of the game's OpenSpiel form (a ``pyspiel.Game`` in plain
Python, the readable statement of its rules); importing it registers the game with ``pyspiel``
at its last line, as OpenSpiel's own ``kuhn_poker.py`` does, and :mod:`deckgym.openspiel`
imports every game's module that a descriptor names. A game with an OpenSpiel form can be
played by OpenSpiel's bots (:data:`OPENSPIEL_AGENTS`); the module offers what
:class:`deckgym.plugins.OpenSpielForm` lists.

The parts a descriptor hands over are typed by the protocols of :mod:`deckgym.plugins`: the
terminal text class (``text``, what ``deckgym play``, the browser play page and the replays use
to name moves; built as ``text(core)``: :class:`~deckgym.plugins.TerminalText`), the renderer
(:class:`~deckgym.plugins.Renderer`), the table view (:class:`~deckgym.plugins.TableView`) and
the OpenSpiel form (:class:`~deckgym.plugins.OpenSpielForm`); ``deckgym.testing.check_game``
checks them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Mapping

from deckgym.plugins import Renderer, TableView, TerminalText

#: OpenSpiel's bots as agents, for every game whose descriptor names an OpenSpiel form; like a
#: game's own agents they sit above the games, named by string and imported only when one is built
OPENSPIEL_AGENTS: Mapping[str, str] = {
    "openspiel:ismcts": "deckgym.openspiel.agent:ISMCTSAgent",
    "openspiel:random": "deckgym.openspiel.agent:RandomBotAgent",
}


@dataclass(frozen=True)
class GameSpec:
    """One game, as the shared code sees it (see the module docstring)."""

    name: str  # the short name of the CLI and of agent specs ("racko")
    title: str  # how people call it ("Rack-O")
    rules: type  # the rules dataclass; ``rules()`` is the default table
    core: type  # the batched core: ``core(rules, episode=, reward=, obs=)``
    env: Callable[..., Any]  # the PettingZoo AEC env factory (``<game>_env.env``)
    render: Renderer  # the module: ``ansi(core, state, b) -> str``, ``rgb_array(core, state, b) -> array``
    table_view: TableView  # the module: ``god_table(state_dict, labels)``, ``seat_table(view, seat, labels)``, ``phase_text(phase)``
    text: type[TerminalText]  # the terminal text class
    end_reason: Callable[[Any, Any, int, int], str]  # (core, step result, row, last action) -> why the round ended
    agents: Mapping[str, str] = field(default_factory=dict)  # short name -> "module:Class" ("bucket" is "racko:bucket")
    default_opponents: tuple[str, ...] = ("random",)  # the Gymnasium views' pool when none is given
    train_opponents: str = "random"  # ``deckgym train``'s default pool, ``SPEC=WEIGHT,...``
    eval_against: tuple[str, ...] = ("random",)  # ``deckgym train``'s evaluation ladder
    demo_players: int | None = None  # the table size ``make demo`` shows the game at (None: not shown)
    decisions_per_seat: float = 20.0  # a seat's decisions in a game, about: the arena's progress before a game ends
    features: str | None = None  # module of the learners' derived features, imported on first use
    invariants: str | None = None  # module of the soak run's checks (``cards_ok``, ``hidden_shuffle``, ``moves``)
    belief: str | None = None  # "module:Class" of the belief sampler over hidden cards (``Class(core, model=)``)
    openspiel: str | None = None  # module of the game's OpenSpiel form (registers itself with pyspiel on import)

    def agent_targets(self) -> dict[str, str]:
        """Every agent that plays this game, as full specs: its own (``{"racko:bucket": "module:Class",
        ...}``), then OpenSpiel's bots if it has an OpenSpiel form."""
        own = {f"{self.name}:{short}": target for short, target in self.agents.items()}
        return {**own, **(OPENSPIEL_AGENTS if self.openspiel is not None else {})}

    def openspiel_module(self) -> ModuleType:
        """The game's OpenSpiel form (imports ``pyspiel`` and registers the game with it)."""
        if self.openspiel is None:
            raise ValueError(f"game {self.name!r} has no OpenSpiel form (its descriptor's openspiel)")
        return importlib.import_module(self.openspiel)

    def features_module(self) -> ModuleType:
        """The derived features of learners (``FEATURES_VERSION``, ``feature_bounds``, ``shaping_potential``, ...)."""
        if self.features is None:
            raise ValueError(f"game {self.name!r} has no derived features (features=True needs them)")
        return importlib.import_module(self.features)

    def invariants_module(self) -> ModuleType:
        if self.invariants is None:
            raise ValueError(f"game {self.name!r} has no soak checks")
        return importlib.import_module(self.invariants)
