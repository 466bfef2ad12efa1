"""The conformance kit: ``check_game(name)`` runs a registered game through every front end.

Like Pgx's ``api_test`` and PettingZoo's ``api_test``, for a whole game: its descriptor's parts
against the typed plug-in interfaces (:mod:`deckgym.plugins`), the core contract
(``docs/CONTRACT.md``), PettingZoo's ``api_test`` and ``seed_test``, Gymnasium's and Stable
Baselines3's ``check_env``, TorchRL's ``check_env_specs``, OpenSpiel's ``random_sim_test`` and
the lock-step comparison of the OpenSpiel form with the core (where the descriptor names one),
and a short ``deckgym train`` and ``deckgym eval`` with the descriptor's defaults. A check whose
framework is not installed is skipped and says so; any failure raises :class:`ConformanceError`
naming the check. A new game registered with ``register_game`` is checked the same way::

    from deckgym.testing import check_game
    print(check_game("racko"))

This module sits on top of the house (it drives the training and the arena, like the CLI); no
library module imports it.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from deckgym.core import Core, StepResult, sample_legal
from deckgym.plugins import (FastSampler, ObservationBounds, OpenSpielForm, Renderer, TableView, TerminalText,
                             missing_members)
from deckgym.registration import game as game_entry

__all__ = ["check_game", "CheckReport", "ConformanceError", "CHECKS"]

PASSED, NOT_INSTALLED, NOT_APPLICABLE = "passed", "not installed", "not applicable"


class ConformanceError(AssertionError):
    """A game failed a check: the message names the game, the check and the cause."""


@dataclass
class CheckReport:
    """What :func:`check_game` ran: ``(check, status, detail)`` per check, in order; the status is
    ``"passed"``, ``"not installed"`` (its framework is missing: ``detail`` names the package) or
    ``"not applicable"`` (e.g. no OpenSpiel form in the descriptor)."""

    game: str
    results: list[tuple[str, str, str]] = field(default_factory=list)

    def status(self, check: str) -> str:
        return next(s for c, s, _ in self.results if c == check)

    @property
    def passed(self) -> list[str]:
        return [c for c, s, _ in self.results if s == PASSED]

    @property
    def skipped(self) -> list[str]:
        return [c for c, s, _ in self.results if s != PASSED]

    def __str__(self) -> str:
        width = max(len(c) for c, _, _ in self.results)
        lines = [f"{self.game}: {len(self.passed)} of {len(self.results)} checks passed"]
        lines += [f"  {c:<{width}}  {s}{f' ({d})' if d else ''}" for c, s, d in self.results]
        return "\n".join(lines)


class _Skip(Exception):
    def __init__(self, status: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


def _need(*modules: str) -> None:
    """Skip the check (not installed) unless every module can be imported."""
    missing = [m for m in modules if importlib.util.find_spec(m.split(".")[0]) is None]
    if missing:
        raise _Skip(NOT_INSTALLED, f"pip install {' '.join(missing)}")


def _fail(what: str) -> None:
    raise AssertionError(what)


# -- the descriptor's parts and the core contract ------------------------------------------------
def check_plugins(name: str) -> None:
    """The descriptor's text, render, table view, core (and OpenSpiel form) offer every member of
    their protocols; the core's optional parts have the documented shapes."""
    entry = game_entry(name)
    spec, core = entry.descriptor, entry.make_core()
    bad = missing_members(spec.text(core), TerminalText, f"{name}'s text")
    bad += missing_members(spec.render, Renderer, f"{name}'s render")
    bad += missing_members(spec.table_view, TableView, f"{name}'s table_view")
    bad += missing_members(core, Core, f"{name}'s core")
    if bad:
        _fail("; ".join(bad))
    size = int(core.obs_size)  # read before the isinstance check narrows core to its bounds
    if isinstance(core, ObservationBounds):
        for side in ("obs_low", "obs_high"):
            value = np.asarray(getattr(core, side))
            if value.shape not in ((), (size,)):
                _fail(f"{name}'s core.{side} has shape {value.shape}, not () or ({size},)")
    if spec.openspiel is not None and importlib.util.find_spec("pyspiel") is not None:
        bad = missing_members(spec.openspiel_module(), OpenSpielForm, f"{name}'s OpenSpiel form")
        if bad:
            _fail("; ".join(bad))


def _legal_actions(core: Any, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return core.sample_legal(mask, rng) if isinstance(core, FastSampler) else sample_legal(mask, rng)


def _play(core: Any, seed: int, batch: int, steps: int, check: Callable[..., None] | None = None) -> list[np.ndarray]:
    """Random play of ``batch`` games for ``steps`` steps (ended games dealt anew): the observations."""
    st = core.init(batch, seed)
    rng = np.random.default_rng(seed)
    seen = []
    for _ in range(steps):
        mask = core.legal_action_mask(st)
        stuck = ~mask.any(axis=1)  # an ended episode waits for reset_where
        if stuck.any():
            core.reset_where(st, stuck)
            mask = core.legal_action_mask(st)
        obs = core.observe(st, core.current_player(st))
        seen.append(obs.copy())
        actions = _legal_actions(core, mask, rng)
        res = core.step(st, actions)
        if check is not None:
            check(st, mask, obs, actions, res)
        done = res.terminated | res.truncated
        if done.any():
            core.reset_where(st, done)
    return seen


def check_core_contract(name: str, seed: int = 0, steps: int = 300) -> None:
    """``docs/CONTRACT.md``'s core: shapes and dtypes of every call, legal random play, bounded
    observations, zero-sum ``"win"`` rewards, seeded and batch-size-independent games, illegal
    actions refused before the state is touched, ``state_array``/``state_dict``/``empty_result``,
    and a core that pickles."""
    entry = game_entry(name)
    core = entry.make_core()
    P, A, B = core.num_players, core.num_actions, 6
    if len(core.action_names) != A or not core.phase_names or core.obs_size < 1:
        _fail(f"{name}: action_names must name num_actions={A} actions and phase_names at least one phase")
    low = np.broadcast_to(np.asarray(getattr(core, "obs_low", -1.0), np.float32), (core.obs_size,))
    high = np.broadcast_to(np.asarray(getattr(core, "obs_high", np.inf), np.float32), (core.obs_size,))

    def check(st: Any, mask: np.ndarray, obs: np.ndarray, actions: np.ndarray, res: StepResult) -> None:
        if mask.shape != (B, A) or mask.dtype != bool:
            _fail(f"{name}: legal_action_mask is {mask.dtype} {mask.shape}, not bool {(B, A)}")
        if obs.shape != (B, core.obs_size) or obs.dtype != np.float32 or not np.isfinite(obs).all():
            _fail(f"{name}: observe gave {obs.dtype} {obs.shape}, not finite float32 {(B, core.obs_size)}")
        if ((obs < low) | (obs > high)).any():
            i = np.argwhere((obs < low) | (obs > high))[0]
            _fail(f"{name}: observation value {obs[tuple(i)]} at {tuple(i)} is outside [obs_low, obs_high]")
        if not mask[np.arange(B), actions].all():
            _fail(f"{name}: sample_legal picked an illegal action")
        for what, arr, shape in (("rewards", res.rewards, (B, P)), ("terminated", res.terminated, (B,)),
                                 ("truncated", res.truncated, (B,)), ("round_over", res.round_over, (B,)),
                                 ("winners", res.winners, (B, P))):
            if np.shape(arr) != shape:
                _fail(f"{name}: StepResult.{what} has shape {np.shape(arr)}, not {shape}")
        if core.reward == "win" and not np.allclose(res.rewards.sum(axis=1), 0.0, atol=1e-5):
            _fail(f"{name}: 'win' rewards are not zero-sum: {res.rewards.sum(axis=1)}")
        seats, phases = core.current_player(st), core.phase(st)
        if seats.shape != (B,) or ((seats < 0) | (seats >= P)).any() or ((phases < 0) | (phases >= len(core.phase_names))).any():
            _fail(f"{name}: current_player/phase out of range: {seats}, {phases}")
        if core.alive(st).shape != (B, P):
            _fail(f"{name}: alive has shape {core.alive(st).shape}, not {(B, P)}")

    first = _play(core, seed, B, steps, check)
    again = _play(entry.make_core(), seed, B, steps)
    if not all(np.array_equal(a, b) for a, b in zip(first, again)):
        _fail(f"{name}: the same seed played twice gave different observations")
    one, st = core.init(1, seed, game_ids=np.array([2])), core.init(4, seed)
    if not np.array_equal(core.observe(one, core.current_player(one))[0], core.observe(st, core.current_player(st))[2]):
        _fail(f"{name}: game 2 of seed {seed} differs between a batch of 4 and a batch of 1")
    _check_refusal(name, core, seed)
    arr = core.state_array(st)
    if arr.ndim != 2 or arr.shape[0] != 4 or arr.dtype != np.float32:
        _fail(f"{name}: state_array gave {arr.dtype} {arr.shape}, not float32 (4, state_size)")
    if not isinstance(core.state_dict(st, 0), dict) or not isinstance(core.empty_result(st), StepResult):
        _fail(f"{name}: state_dict must give a dict and empty_result a StepResult")
    twin = pickle.loads(pickle.dumps(core))
    if not np.array_equal(twin.observe(twin.init(2, seed), 0), core.observe(core.init(2, seed), 0)):
        _fail(f"{name}: a core unpickled plays otherwise than the original")


def _check_refusal(name: str, core: Any, seed: int) -> None:
    st = core.init(1, seed)
    mask = core.legal_action_mask(st)[0]
    if mask.all():
        return  # every action legal at the start: nothing to refuse here
    before = st.copy()
    try:
        core.step(st, np.array([int(np.flatnonzero(~mask)[0])]))
    except ValueError:
        pass
    else:
        _fail(f"{name}: step took an illegal action instead of refusing it with a ValueError")
    if not all(np.array_equal(getattr(before, f), getattr(st, f)) for f in vars(before)):
        _fail(f"{name}: a refused step changed the state")


# -- the front ends -----------------------------------------------------------------------------
def check_pettingzoo(name: str) -> None:
    """PettingZoo's ``api_test`` on the AEC env."""
    _need("pettingzoo")
    from pettingzoo.test import api_test

    api_test(game_entry(name).make_env(), num_cycles=100)


def check_pettingzoo_seed(name: str) -> None:
    """PettingZoo's ``seed_test``: two envs reset with one seed play alike."""
    _need("pettingzoo")
    from pettingzoo.test import seed_test

    seed_test(game_entry(name).make_env, num_cycles=50)


def check_gymnasium(name: str) -> None:
    """Gymnasium's ``check_env`` on the single-agent view (``gymnasium.make(<gymnasium id>)``)."""
    _need("gymnasium")
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(game_entry(name).gymnasium_id, disable_env_checker=True)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def check_sb3(name: str) -> None:
    """Stable Baselines3's ``check_env`` on the same view."""
    _need("stable_baselines3", "gymnasium")
    from stable_baselines3.common.env_checker import check_env

    from deckgym.gym_env import DeckGymEnv

    env = DeckGymEnv(game=name)
    try:
        check_env(env, warn=False)
    finally:
        env.close()


def check_torchrl(name: str) -> None:
    """TorchRL's ``check_env_specs`` on the batched TorchRL env, learner and self-play."""
    _need("torchrl", "torch")
    from torchrl.envs.utils import check_env_specs

    from deckgym.torchrl.env import DeckGymTorchEnv

    for self_play in (False, True):
        check_env_specs(DeckGymTorchEnv(4, game=name, self_play=self_play, seed=0), seed=0)


def check_openspiel(name: str) -> None:
    """OpenSpiel's ``random_sim_test`` on the game's OpenSpiel form (its default table, one round;
    without the serialization round trip at every state, which is quadratic in the game's length)."""
    spec = game_entry(name).descriptor
    if spec.openspiel is None:
        raise _Skip(NOT_APPLICABLE, "the descriptor names no OpenSpiel form")
    _need("pyspiel")
    import pyspiel

    form = spec.openspiel_module()
    game = pyspiel.load_game(form.GAME_TYPE.short_name, {**form.params_of(spec.rules()), "episode": "round"})
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)


def check_openspiel_oracle(name: str, games: int = 3, seed: int = 0) -> None:
    """The OpenSpiel form and the core played in lock step (deckgym.openspiel.oracle): the same
    players, legal actions, observations of every seat, rewards and ends at every step."""
    spec = game_entry(name).descriptor
    if spec.openspiel is None:
        raise _Skip(NOT_APPLICABLE, "the descriptor names no OpenSpiel form")
    _need("pyspiel")
    from deckgym.openspiel.oracle import compare_random_play

    compare_random_play(name, games=games, seed=seed)


def check_train_and_eval(name: str, seed: int = 0) -> None:
    """A short ``deckgym train`` with the descriptor's defaults (its opponents, its evaluation
    ladder; without derived features, and so without their shaping potential, when the descriptor
    names none), then
    ``deckgym eval`` of the model against the ladder's first agent at the default table."""
    _need("torch", "stable_baselines3", "sb3_contrib")
    from deckgym.evaluation.arena import evaluate
    from deckgym.training import train

    spec = game_entry(name).descriptor
    with tempfile.TemporaryDirectory(prefix="deckgym-check-") as tmp:
        out = os.path.join(tmp, "model.safetensors")
        train.main([name, "--total-steps", "256", "--num-envs", "8", "--n-steps", "32", "--batch-size", "64",
                    "--epochs", "1", "--net", "16", "--eval-every", "256", "--eval-deals", "2", "--final-deals", "0",
                    "--seed", str(seed), "--quiet", "--runs", os.path.join(tmp, "runs"), "--run-name", "check",
                    "--out", out, *(["--no-features", "--shaping", "0"] if spec.features is None else [])])
        if not os.path.isfile(out):
            _fail(f"{name}: deckgym train wrote no model at {out}")
        report = evaluate(name, [f"ppo:{out}", spec.eval_against[0]], deals=4, seed=seed,
                          players=spec.rules().num_players)
        if sum(a.games for a in report.agents) == 0:
            _fail(f"{name}: deckgym eval played no game")


#: every check, in the order run: (name, function)
CHECKS: tuple[tuple[str, Callable[[str], None]], ...] = (
    ("plug-in interfaces", check_plugins),
    ("core contract", check_core_contract),
    ("pettingzoo api_test", check_pettingzoo),
    ("pettingzoo seed_test", check_pettingzoo_seed),
    ("gymnasium check_env", check_gymnasium),
    ("sb3 check_env", check_sb3),
    ("torchrl check_env_specs", check_torchrl),
    ("openspiel random_sim_test", check_openspiel),
    ("openspiel oracle", check_openspiel_oracle),
    ("deckgym train and eval", check_train_and_eval),
)


def check_game(name: str, skip: tuple[str, ...] = ()) -> CheckReport:
    """Run every check of :data:`CHECKS` on the registered game ``name`` (but those named in
    ``skip``); raise :class:`ConformanceError` at the first failure, else return the report (each
    check passed, not installed or not applicable)."""
    entry = game_entry(name)  # an unknown game: one line listing the valid ones
    unknown = set(skip) - {c for c, _ in CHECKS}
    if unknown:
        raise ValueError(f"skip: unknown checks {sorted(unknown)}; valid: {', '.join(c for c, _ in CHECKS)}")
    report = CheckReport(entry.name)
    for check, run in CHECKS:
        if check in skip:
            report.results.append((check, "skipped", "asked"))
            continue
        try:
            run(name)
        except _Skip as s:
            report.results.append((check, s.status, s.detail))
            continue
        except Exception as exc:  # every failure, whichever framework raised it, named by its check
            raise ConformanceError(f"{name}: {check} failed: {type(exc).__name__}: {exc}") from exc
        report.results.append((check, PASSED, ""))
    return report
