"""Agent specs → agents: ``random``, ``racko:bucket``, ``leastscore:counting``, ``ppo:PATH``, ``rllib:PATH``.

``ppo:PATH.safetensors`` plays a policy file (``deckgym.agents.policy_file``), whichever engine
trained it. A pickled model (an SB3 ``.zip``, an RLlib checkpoint folder, for which ``rllib:PATH``
is the usual spelling) is refused in one line unless the spec ends in ``?allow_pickle=true``,
the user's word that the file is trusted (see ``SECURITY.md``).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from deckgym.agents.base import Agent
from deckgym.agents.params import check_params
from deckgym.registration import GAMES

# spec → "module:Class": the agents that play every game; the others are listed in each game's
# descriptor (``GameSpec.agent_targets``: its own, ``racko:bucket``, and OpenSpiel's bots where it
# has an OpenSpiel form) and joined in by :func:`agent_table`, so an agent is listed only for the
# games it can play.
AGENTS: dict[str, str] = {
    "random": "deckgym.agents.random_agent:RandomAgent",
}


def register_agent(spec: str, target: str) -> None:
    """Add an agent that plays every game (``spec`` → ``"module:Class"``)."""
    AGENTS[spec] = target


def agent_table(game: str | None = None) -> dict[str, str]:
    """Agent spec → ``"module:Class"``: the shared ones, then the agents of ``game`` (of every
    registered game if None; a game's descriptor is imported only when its agents are asked for)."""
    table = dict(AGENTS)
    for name, entry in GAMES.items():
        if game is None or name == game:
            for spec, target in entry.descriptor.agent_targets().items():
                table.setdefault(spec, target)
    return table


def _table_for(name: str, game: str | None = None) -> dict[str, str]:
    """The table that can hold ``name``: ``game``'s, else that of the game the name starts with
    (``racko:bucket``: only Rack-O's descriptor is imported), else every game's."""
    prefix = name.split(":", 1)[0] if ":" in name else None
    return agent_table(game if game is not None else prefix if prefix in GAMES else None)


def agent_specs(game: str | None = None) -> list[str]:
    """The valid specs (for ``game`` only, if given), plus the ``ppo:PATH`` form."""
    return list(agent_table(game)) + ["ppo:PATH", "rllib:PATH"]


def acts_on_infostates(spec: str) -> bool:
    """Whether the agent ``spec`` names acts on information states (its class's ``observation``),
    known before any core is built: a vector env must then record the public history."""
    from deckgym.playout import wants_infostate

    name = spec.partition("?")[0]
    if spec.startswith(("ppo:", "rllib:")):
        return _policy_reads_infostates(_split_model_spec(spec)[1])
    # unknown specs (make_agent names the error) read the default
    return name in _table_for(name) and wants_infostate(_agent_class(name))


def _policy_reads_infostates(path: str) -> bool:
    """Whether the policy file ``path`` was trained on information states (False if it cannot be read:
    building the agent names the problem)."""
    from deckgym.agents.policy_file import SUFFIX, read_meta

    if not path.endswith(SUFFIX):
        return False
    try:
        return read_meta(path).get("obs") == "infostate"
    except (ValueError, OSError):
        return False


def _agent_class(name: str) -> type:
    """The class a registered agent name stands for (:func:`agent_table`), imported on first use."""
    module, cls = _table_for(name)[name].split(":")
    return getattr(importlib.import_module(module), cls)


def _tuning(agent: Agent) -> dict[str, Any]:
    """The parameters a spec may override: the agent's ``params`` dict (the one way agents are tuned)."""
    params = getattr(agent, "params", None)
    return dict(params) if isinstance(params, dict) else {}


def _apply_overrides(agent: Agent, spec: str, text: str) -> None:
    """``name?key=value&key=value``: set tuning parameters of a heuristic (experiments, sweeps)."""
    tuning = _tuning(agent)
    if not tuning:
        raise ValueError(f"agent {spec!r}: {type(agent).__name__} has no parameters to set")
    for item in text.split("&"):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"agent {spec!r}: parameters are key=value pairs joined by '&', got {item!r}")
        if key not in tuning:
            raise ValueError(f"agent {spec!r}: unknown parameter {key!r}; valid: {', '.join(sorted(tuning))}")
        old = tuning[key]
        try:
            tuning[key] = type(old)(value) if not isinstance(old, str) else value
        except ValueError:
            raise ValueError(f"agent {spec!r}: {key}={value!r} is not a valid {type(old).__name__} value") from None
    check_params(spec, getattr(agent, "param_ranges", {}), tuning)
    agent.params = tuning


def _split_model_spec(spec: str) -> tuple[str, str, str]:
    """``ppo:PATH?opts`` → (prefix, PATH, opts); a ``?`` that is part of an existing path stays in it."""
    prefix, _, path = spec.partition(":")
    options = ""
    if "?" in path and not os.path.exists(path):
        path, _, options = path.rpartition("?")
    return prefix + ":", path, options


def _model_options(spec: str, prefix: str, text: str) -> dict[str, Any]:
    """``deterministic=true|false`` and ``allow_pickle=true|false`` after ``PATH?``; anything else is refused."""
    out: dict[str, Any] = {}
    for item in filter(None, text.split("&")):
        key, eq, value = item.partition("=")
        if key not in ("deterministic", "allow_pickle") or not eq:
            raise ValueError(f"agent {spec!r}: {prefix[:-1]} takes only deterministic=true|false and "
                             f"allow_pickle=true|false, got {item!r}")
        low = value.strip().lower()
        if low not in ("true", "false", "1", "0"):
            raise ValueError(f"agent {spec!r}: {key} must be true or false, got {value!r}")
        out[key] = low in ("true", "1")
    return out


def _model_agent(spec: str, core: Any, seed: int, game: str | None) -> Agent:
    """``ppo:PATH`` / ``rllib:PATH``: a policy file, or a pickled model the spec accepts (see the module doc)."""
    from deckgym.agents.policy_file import SUFFIX, ModelMismatchError, PolicyAgent, pickled_kind, refuse_pickle
    from deckgym.extras import require_extra

    prefix, path, options = _split_model_spec(spec)
    kwargs = _model_options(spec, prefix, options)
    allow_pickle = kwargs.pop("allow_pickle", False)
    if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "class_and_ctor_args.pkl")):
        raise ValueError(_folder_not_model(spec, path))
    require_extra("train", f"the agent {spec}", ("torch",))
    kind = None if path.endswith(SUFFIX) or not os.path.exists(path) else pickled_kind(path)
    if kind is None:
        try:
            agent = PolicyAgent(core, path=path, seed=seed, game=game, **kwargs)
        except ModelMismatchError as exc:
            raise ModelMismatchError(f"{exc}{_players_hint(path, core)}") from None
    elif not allow_pickle:
        raise refuse_pickle(path, kind, f"load it as {prefix}{path}?allow_pickle=true, or convert it once: "
                                        f"deckgym convert {path} --allow-pickle (see SECURITY.md)")
    else:
        from deckgym.agents.policy_convert import read_trusted
        from deckgym.agents.policy_file import game_of_core

        tensors, meta = read_trusted(path, core, game or game_of_core(core))
        agent = PolicyAgent(core, seed=seed, game=game, tensors=tensors, meta=meta, **kwargs)
    agent.spec = spec
    return agent


MODEL_SUFFIXES = (".safetensors", ".zip")  # the model files a ppo: spec can name (a zip with allow_pickle)


def _folder_not_model(spec: str, path: str) -> str:
    """``ppo:runs/<run>``: the error names the model file the folder holds (a run's ``best.safetensors``)."""
    models = sorted(f for f in os.listdir(path) if f.endswith(MODEL_SUFFIXES))
    best = [f for f in models if f.startswith("best.")]
    if best:  # a run folder: its best model
        hint = f" (did you mean ppo:{os.path.join(path, best[0])}?)"
    elif models:
        hint = f" (give one of its model files: {', '.join(models[:3])}{', ...' if len(models) > 3 else ''})"
    else:
        hint = " (a model is a file, such as a run's best model)"
    return f"agent {spec!r}: {path} is a folder, not a model file{hint}"


def _players_hint(path: str, core: Any) -> str:
    """`` (the model plays 4 players: --players 4)`` when a model meets a table of another size."""
    from deckgym.agents.policy_file import read_meta

    try:
        players = int(read_meta(path)["rules"]["num_players"])
    except (ValueError, KeyError, TypeError):
        return ""
    return f" (the model plays {players} players: --players {players})" if players != core.rules.num_players else ""


def make_agent(spec: str, core: Any, seed: int = 0, game: str | None = None) -> Agent:
    """Build the agent named by ``spec`` for ``core``; a clear error listing valid specs otherwise.

    A heuristic's tuning parameters can follow its name, ``racko:lookahead?outlook_samples=8``
    or ``leastscore:counting?min_success=0.5&gamma=0.9`` (each agent's ``param_ranges`` gives
    them and their valid ranges; a value outside is a ``ValueError`` naming both). A policy
    takes ``ppo:PATH?deterministic=false`` (sample its actions instead of the argmax) and, for a
    pickled model the user trusts, ``?allow_pickle=true``.
    """
    for prefix, example in (("ppo:", "ppo:models/racko_2p.safetensors"), ("rllib:", "rllib:runs/RUN/model?allow_pickle=true")):
        if spec.startswith(prefix) and not spec[len(prefix):].partition("?")[0].strip():
            raise ValueError(f"agent {spec!r}: no model path after {prefix!r} (write {prefix}PATH, e.g. {example})")
    if spec.startswith(("ppo:", "rllib:")):
        return _model_agent(spec, core, seed, game)
    name, _, overrides = spec.partition("?")
    if name not in _table_for(name, game):
        raise ValueError(f"unknown agent {spec!r} for game {game!r}; valid agents: {', '.join(agent_specs(game))}")
    agent = _agent_class(name)(core, seed=seed)
    if overrides:
        _apply_overrides(agent, spec, overrides)
    elif getattr(agent, "param_ranges", None):
        check_params(spec, agent.param_ranges, _tuning(agent))
    agent.spec = spec
    return agent
