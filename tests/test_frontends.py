"""The learner views share one engine and one set of options (docs/frontends/defaults.md).

Each view is built with no keywords and its options compared with ``LearnerOptions()``; the
table of framework differences in docs/frontends/defaults.md is read and checked against the code; the
renamed keywords warn and still work.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from deckgym.gym_env import DeckGymEnv
from deckgym.learner import LearnerEngine
from deckgym.learner_options import LearnerOptions
from deckgym.vector_env import DeckGymVectorEnv

ROOT = Path(__file__).resolve().parent.parent


def frontends_table() -> dict[str, dict[str, str]]:
    """docs/frontends/defaults.md's table of differences: setting -> view -> value."""
    text = (ROOT / "docs" / "frontends" / "defaults.md").read_text()
    body = text.split("<!-- frontends-table -->", 1)[1].split("<!-- /frontends-table -->", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in body.strip().splitlines()]
    head = rows[0]
    return {r[0].strip("`"): dict(zip(head[1:-1], r[1:-1])) for r in rows[2:]}


def views(**kw):
    """Every view of Rack-O built with ``kw`` (the SB3 and TorchRL ones when their extras are there)."""
    out = {"Gymnasium": DeckGymEnv("racko", **kw), "vector": DeckGymVectorEnv("racko", **kw)}
    try:
        from deckgym.training.vec_env import CoreVecEnv
        out["SB3"] = CoreVecEnv("racko", **kw)
    except ImportError:
        pass
    try:
        from deckgym.torchrl import RackoEnv
        out["TorchRL"] = RackoEnv(4, **kw)
    except ImportError:
        pass
    return out


def test_every_view_has_the_shared_defaults_but_the_tabled_ones():
    table = frontends_table()
    defaults = LearnerOptions()
    for view, env in views().items():
        for field in LearnerOptions.fields():
            want = getattr(defaults, field)
            if field in table:
                cell = table[field][view].strip('`"')
                want = None if cell == "None" else int(cell) if cell.isdigit() else cell
            assert getattr(env.options, field) == want, (view, field)


def test_the_table_matches_the_code():
    table = frontends_table()
    assert set(table) == {"num_envs", "seed", "illegal_action", "autoreset"}
    assert DeckGymEnv("racko").engine.num_envs == int(table["num_envs"]["Gymnasium"])
    assert DeckGymVectorEnv("racko").num_envs == int(table["num_envs"]["vector"])
    assert DeckGymVectorEnv("racko").autoreset_mode == AutoresetMode[table["autoreset"]["vector"]]
    sb3 = pytest.importorskip("deckgym.training.vec_env")
    assert sb3.CoreVecEnv("racko").num_envs == int(table["num_envs"]["SB3"])
    assert sb3.CoreVecEnv("racko").venv.autoreset_mode == AutoresetMode[table["autoreset"]["SB3"]]
    torchrl_env = pytest.importorskip("deckgym.torchrl.env")
    assert torchrl_env.DeckGymTorchEnv.DEFAULT_NUM_ENVS == int(table["num_envs"]["TorchRL"])


def test_views_are_thin_adapters_of_one_engine_reaching_no_private_name():
    for view, env in views(opponents=["random"]).items():
        assert isinstance(env.engine, LearnerEngine), view
    for path in ("deckgym/gym_env.py", "deckgym/vector_env.py", "training/vec_env.py", "deckgym/torchrl/env.py"):
        src = (ROOT / path).read_text()
        assert not re.findall(r"\b(?:engine|venv|_venv)\._[a-z]", src), path


def test_options_are_documented_field_by_field():
    import ast
    tree = ast.parse((ROOT / "deckgym" / "learner_options.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "LearnerOptions")
    documented = {a.target.id for a, doc in zip(cls.body, cls.body[1:])
                  if isinstance(a, ast.AnnAssign) and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)}
    assert documented == set(LearnerOptions.fields())


def test_options_object_and_keywords_build_the_same_env():
    a = DeckGymVectorEnv("racko", 4, options=LearnerOptions(opponents=["random"], shaping=0.5, rule_fields={"max_turns": 30}))
    b = DeckGymVectorEnv("racko", 4, opponents=["random"], shaping=0.5, max_turns=30)
    assert a.options == b.options
    np.testing.assert_array_equal(a.reset(seed=1)[0], b.reset(seed=1)[0])
    with pytest.raises(ValueError, match="shaping must be a finite number"):
        LearnerOptions(shaping=float("nan"))
    with pytest.raises(ValueError, match="options must be a LearnerOptions"):
        DeckGymVectorEnv("racko", options={"shaping": 1})


def test_renamed_keywords_warn_and_keep_working():
    sb3 = pytest.importorskip("deckgym.training.vec_env")
    with pytest.warns(DeprecationWarning, match="'players' is deprecated; use 'num_players'"):
        old = sb3.CoreVecEnv("leastscore", 4, players=3, opponents=["random"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = sb3.CoreVecEnv("leastscore", 4, num_players=3, opponents=["random"])
    assert old.num_players == new.num_players == 3
    np.testing.assert_array_equal(old.reset(), new.reset())
    with pytest.warns(DeprecationWarning, match="'rules_kwargs' is deprecated"):
        env = sb3.CoreVecEnv("racko", 4, rules_kwargs={"max_turns": 30}, opponents=["random"])
    assert env.rules.max_turns == 30
    with pytest.raises(ValueError, match="give 'num_players' or its old name 'players', not both"), \
            pytest.warns(DeprecationWarning):
        sb3.CoreVecEnv("racko", 4, players=2, num_players=2)


def test_the_old_torchrl_class_name_warns_and_is_the_new_class():
    pytest.importorskip("torchrl")
    import deckgym.torchrl as dt
    with pytest.warns(DeprecationWarning, match="RackOEnv is deprecated; use RackoEnv"):
        old = dt.RackOEnv
    assert old is dt.RackoEnv
    with pytest.raises(AttributeError):
        dt.NoSuchEnv  # noqa: B018
