"""The code stays readable: every module of every installed package under 600 lines and
documented, the game cores one module per concept, and the names other modules import from
``<game>_env.core`` keep working."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE_MODULES = {
    "racko_env": ["core", "state", "tables", "dealing", "turn", "scoring", "observation"],
    "leastscore_env": ["core", "state", "tables", "legality", "dealing", "turn", "scoring", "observation", "sampling"],
}


#: the folders whose modules the wheel installs (pyproject's package list and package-dir)
INSTALLED = ("deckgym", "racko_env", "leastscore_env", "agents", "evaluation", "training")


def installed_modules() -> list[Path]:
    """Every module of the packages the wheel installs (pyproject's package list)."""
    text = (ROOT / "pyproject.toml").read_text()
    assert all(f'"{p}"' in text for p in INSTALLED), "pyproject's package list and INSTALLED differ"
    return sorted(p for pkg in INSTALLED for p in (ROOT / pkg).rglob("*.py"))


@pytest.mark.parametrize("path", installed_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_is_short_and_documented(path):
    n = len(path.read_text().splitlines())
    assert n < 600, f"{path.relative_to(ROOT)}: {n} lines"
    if path.name != "__init__.py" or n:
        assert ast.get_docstring(ast.parse(path.read_text())), f"{path.relative_to(ROOT)} has no docstring"


@pytest.mark.parametrize("package,module", [(p, m) for p, ms in CORE_MODULES.items() for m in ms])
def test_core_module_exists(package, module):
    assert importlib.import_module(f"{package}.{module}").__file__


@pytest.mark.parametrize("package", list(CORE_MODULES))
def test_core_reexports_its_public_names(package):
    core = importlib.import_module(f"{package}.core")
    for name in core.__all__:
        assert hasattr(core, name), name


def test_names_imported_elsewhere_still_come_from_core():
    from leastscore_env.core import LeastScoreCore
    from leastscore_env.legality import legal_discard_table
    from leastscore_env.state import DECLARE, DRAW_DECK, NUM_ACTIONS, TAKE_FLOOR, LeastScoreState
    from leastscore_env.tables import hand_word_bits
    from racko_env.core import RackoCore
    from racko_env.state import PHASE_NAMES, RackoState
    from racko_env.tables import LONGEST_RUN, PREFIX_LEN, r8_points, rack_codes

    assert (DECLARE, DRAW_DECK, TAKE_FLOOR, NUM_ACTIONS) == (31, 32, 33, 38)
    assert LeastScoreCore().num_actions == NUM_ACTIONS and RackoCore().phase_names == PHASE_NAMES
    assert LeastScoreState.__name__ == "LeastScoreState" and RackoState.__name__ == "RackoState"
    assert callable(hand_word_bits) and len(legal_discard_table()) == 3
    assert PREFIX_LEN.shape == LONGEST_RUN.shape == (3**9,)
    rack = np.arange(1, 11)[None]
    assert int(r8_points(rack)[0]) == 50 and rack_codes(rack).shape == (1,)


def test_no_core_module_points_outside_the_repository():
    for package, modules in CORE_MODULES.items():
        for m in modules:
            text = (ROOT / package / f"{m}.py").read_text()
            assert "/" "work/" not in text and ".." "/shared" not in text, f"{package}/{m}.py"
