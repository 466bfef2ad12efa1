"""Behaviour cloning, the warm start of ``deckgym train --bc-teacher SPEC`` for both engines.

Two steps, each engine-free:

- :func:`collect_teacher_samples`: the teacher agent plays the learner's seat in a
  :class:`deckgym.vector_env.DeckGymVectorEnv` (``SAME_STEP`` autoreset, the opponents
  inside); every decision is kept with its observation (features included), mask, action
  and discounted return. With ``player=`` another policy (the network, in expert iteration,
  ``deckgym.training.expert_iteration``) plays and the teacher only labels the states it reaches.
- :func:`fit`: Adam on cross-entropy to the teacher's actions plus half the squared error of
  the value to the return, over minibatches of a seeded permutation. The engine supplies
  ``losses(X, M, A, R, V)``, its network's cross-entropy, accuracy and value loss on one
  minibatch (SB3: :func:`sb3_losses`; RLlib: ``deckgym.training.rllib_train``).

:func:`clone_teacher` runs both steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np


@dataclass
class TeacherSamples:
    """``n`` teacher decisions: ``obs (n, D)`` float32, ``masks (n, A)`` bool, ``actions (n,)`` int64,
    ``returns (n,)`` float32 and ``valid (n,)`` bool (the return is known: the game ended before
    the collection did)."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    valid: np.ndarray
    played: np.ndarray | None = None  # (n,) the actions played, when a ``player`` other than the teacher played

    def __len__(self) -> int:
        return len(self.actions)

    def agreement(self) -> float:
        """Share of the decisions where the player's action was the teacher's (1.0 if the teacher played)."""
        return 1.0 if self.played is None or not len(self) else float(np.mean(self.played == self.actions))

    def newest(self, older: "TeacherSamples | None", limit: int) -> "TeacherSamples":
        """``older`` followed by these rows, keeping the newest ``limit`` (a DAgger data set)."""
        parts = [self] if older is None else [older, self]
        cut = lambda a: a[-limit:]  # noqa: E731
        return TeacherSamples(*(cut(np.concatenate([getattr(p, k) for p in parts]))
                                for k in ("obs", "masks", "actions", "returns", "valid")))


def collect_teacher_samples(venv: Any, teacher: Any, samples: int, gamma: float, seed: int,
                            player: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> TeacherSamples:
    """About ``samples`` decisions (``samples // num_envs`` steps of every game, at least one) of
    ``teacher`` in the learner's seat of ``venv``, reset with ``seed``.

    ``player(obs, masks)``, if given, plays instead (on the full observation, features
    included); the teacher labels every state it reaches, and the returns are the player's.
    A teacher that acts on information states (``racko:search``) reads them from ``venv``,
    which must record the history (``history=True``)."""
    from gymnasium.vector import AutoresetMode

    from deckgym.playout import wants_infostate

    if venv.autoreset_mode != AutoresetMode.SAME_STEP:
        raise ValueError("behaviour cloning needs a vector env with autoreset_mode=SAME_STEP (every step a decision)")
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    infostate = wants_infostate(teacher)  # then the venv must record the history (observe_for says so)
    B, n_raw = venv.num_envs, venv.core.obs_size
    T = max(1, samples // B)
    obs_buf = np.zeros((T, B, venv.single_observation_space.shape[0]), np.float32)
    mask_buf = np.zeros((T, B, venv.core.num_actions), bool)
    act_buf = np.zeros((T, B), np.int64)
    rew_buf = np.zeros((T, B), np.float32)
    done_buf = np.zeros((T, B), bool)
    played = None if player is None else np.zeros((T, B), np.int64)
    obs, _ = venv.reset(seed=seed)
    for t in range(T):
        masks = venv.action_masks()
        # the teacher reads what it reads in play: the raw observation, or the information state
        a = teacher.act(venv.observe_for(teacher) if infostate else obs[:, :n_raw], masks)
        obs_buf[t], mask_buf[t], act_buf[t] = obs, masks, a
        if player is not None:
            a = np.asarray(player(obs, masks), np.int64)
            if not masks[np.arange(B), a].all():
                raise ValueError("the playing policy chose an illegal action")
            played[t] = a
        obs, rew, term, trunc, _ = venv.step(a)
        rew_buf[t], done_buf[t] = rew, term | trunc
    # discounted returns; samples after a game's last finished episode have none (invalid)
    ret = np.zeros((T, B), np.float32)
    valid = np.zeros((T, B), bool)
    g = np.zeros(B, np.float32)
    seen_end = np.zeros(B, bool)
    for t in range(T - 1, -1, -1):
        seen_end |= done_buf[t]
        g = rew_buf[t] + gamma * g * (~done_buf[t])
        ret[t], valid[t] = g, seen_end
    return TeacherSamples(obs_buf.reshape(T * B, -1), mask_buf.reshape(T * B, -1), act_buf.reshape(-1),
                          ret.reshape(-1), valid.reshape(-1), None if played is None else played.reshape(-1))


Losses = Callable[[Any, np.ndarray, Any, Any, Any], tuple[Any, Any, Any]]


def fit(params: Iterable[Any], losses: Losses, data: TeacherSamples, epochs: int, seed: int, quiet: bool = True,
        lr: float = 1e-3, minibatch: int = 1024) -> dict[str, Any]:
    """Fit a policy and value network to ``data``; returns the last epoch's mean cross-entropy,
    accuracy (argmax = teacher) and value MSE.

    ``losses(X, M, A, R, V)`` gets a minibatch (``X``, ``A``, ``R``, ``V`` tensors, ``M`` the
    bool mask as numpy) and returns ``(cross_entropy, accuracy, value_loss)`` tensors; the loss
    minimised is ``cross_entropy + 0.5 * value_loss``, gradients clipped to norm 0.5.
    """
    import torch

    params = list(params)
    X, M = torch.as_tensor(data.obs), data.masks
    A, R, V = torch.as_tensor(data.actions), torch.as_tensor(data.returns), torch.as_tensor(data.valid)
    opt = torch.optim.Adam(params, lr=lr)
    rng = np.random.default_rng(seed)
    n = len(data)
    log: dict[str, Any] = {}
    for epoch in range(epochs):
        order = rng.permutation(n)
        tot_ce = tot_acc = tot_v = 0.0
        for start in range(0, n, minibatch):
            idx = order[start : start + minibatch]
            ce, acc, vloss = losses(X[idx], M[idx], A[idx], R[idx], V[idx])
            loss = ce + 0.5 * vloss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 0.5)
            opt.step()
            k = len(idx)
            tot_ce += float(ce.detach()) * k
            tot_acc += float(acc.detach()) * k
            tot_v += float(vloss.detach()) * k
        log = {"epoch": epoch + 1, "cross_entropy": tot_ce / n, "accuracy": tot_acc / n, "value_mse": tot_v / n}
        if not quiet:
            print(f"bc epoch {epoch + 1}: {log}", flush=True)
    return log


def masked_value_loss(values: Any, returns: Any, valid: Any) -> Any:
    """Mean squared error of ``values`` to ``returns`` over the ``valid`` rows (0 if none)."""
    import torch

    return ((values - returns) ** 2)[valid].mean() if valid.any() else torch.zeros(())


def sb3_losses(policy: Any) -> Losses:
    """``losses(X, M, A, R, V)`` of a MaskablePPO policy for :func:`fit`: cross-entropy to the
    actions ``A``, accuracy, and the value's squared error on the valid returns."""

    def losses(X: Any, M: np.ndarray, A: Any, R: Any, V: Any) -> tuple[Any, Any, Any]:
        dist = policy.get_distribution(X, action_masks=M)
        ce = -dist.log_prob(A).mean()
        acc = (dist.distribution.probs.argmax(dim=1) == A).float().mean()
        return ce, acc, masked_value_loss(policy.predict_values(X).squeeze(-1), R, V)

    return losses


def clone_teacher(venv: Any, teacher_spec: str, params: Iterable[Any], losses: Losses, samples: int, epochs: int,
                  gamma: float, seed: int, quiet: bool = True) -> dict[str, Any]:
    """The warm start both engines run: ``teacher_spec`` plays ``samples`` decisions in ``venv``
    (:func:`collect_teacher_samples`), then the engine's network (``params``, ``losses``) is fitted
    to them (:func:`fit`). Returns what the fit reached, with the teacher and the sample count."""
    from deckgym.agents.registry import make_agent

    teacher = make_agent(teacher_spec, venv.core, seed=seed, game=venv.game)
    data = collect_teacher_samples(venv, teacher, samples, gamma, seed)
    log = fit(params, losses, data, epochs, seed, quiet=quiet)
    return {"teacher": teacher_spec, "samples": len(data), **log}
