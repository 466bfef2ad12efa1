"""``PPOAgent`` (spec ``ppo:PATH``): a trained MaskablePPO policy as a batched agent.

A model file is the zip that stable-baselines3 writes, with one extra member,
``deckgym_meta.json``: the game, its rules, the observation layout version and size,
whether (and which version of) the derived features were appended, the training config
and the arena results. :func:`save_model` writes it; loading checks it against the core
the agent is built for and refuses a model of another game, other rules, another
observation layout or features version, with an error naming the field. A file that is
not such a zip (or a damaged one) gives a ``ValueError`` saying so.

A MaskablePPO model saved by plain SB3 (``model.save``, e.g. trained on the Gymnasium view
``deckgym/RackO-v0``) has no metadata: it is still loaded when its action count and
observation size fit the game (raw, or with one derived-features version), with a warning
naming the rules it is assumed to be trained for (:func:`assumed_metadata`). To record them,
save through :func:`save_model` instead (see its example).

The agent acts on a batch at once: it recomputes the derived features from its own
observation (as the training env did), runs the policy network once, masks illegal
actions and takes the most probable legal action (``deterministic=True``, the default)
or samples one with its own seeded generator.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import zipfile
from typing import Any

import numpy as np

from deckgym.agents.base import Agent, masked_softmax

META_NAME = "deckgym_meta.json"
FORMAT = "deckgym-ppo"
FORMAT_VERSION = 1


class ModelMismatchError(ValueError):
    """The model was trained for another game, rules, observation or features version."""


def _json_norm(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def rules_dict(rules: Any) -> dict[str, Any]:
    return _json_norm(dataclasses.asdict(rules)) if dataclasses.is_dataclass(rules) else {"repr": repr(rules)}


def game_of_core(core: Any) -> str:
    from deckgym.registration import GAMES

    mod = type(core).__module__.split(".")[0]
    for name, entry in GAMES.items():
        if entry.module == mod:
            return name
    raise ValueError(f"cannot tell the game of core {type(core).__name__}")


def features_module(game: str) -> Any:
    from deckgym.registration import game as game_entry

    return game_entry(game).features()


def model_metadata(core: Any, game: str, features: bool, features_version: int | None = None,
                   **extra: Any) -> dict[str, Any]:
    """What a model records about the game it was trained for (see the module doc)."""
    meta: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": game,
        "rules": rules_dict(core.rules),
        "rules_repr": repr(core.rules),
        "num_players": int(core.num_players),
        "obs_version": int(getattr(core, "obs_version", 0)),
        "obs_size": int(core.obs_size),
        "num_actions": int(core.num_actions),
        "features": bool(features),
        "features_version": None,
        "num_features": 0,
    }
    if features:
        fm = features_module(game)
        version = int(fm.FEATURES_VERSION if features_version is None else features_version)
        meta["features_version"] = version
        meta["num_features"] = int(fm.num_features(core, version=version))
    meta.update(_json_norm(extra))
    return meta


def save_model(model: Any, path: str, meta: dict[str, Any]) -> str:
    """Save a MaskablePPO ``model`` to ``path`` (``.zip``) with ``meta`` inside the zip.

    For a model trained with plain SB3 on a Gymnasium view, attach the metadata so that
    ``ppo:PATH`` knows its game, rules and observation layout::

        env = gymnasium.make("deckgym/RackO-v0", num_players=2)
        model = MaskablePPO("MlpPolicy", env).learn(100_000)
        meta = model_metadata(env.unwrapped.core, "racko", features=False)  # features=True if the view had them
        save_model(model, "racko_mine.zip", meta)
    """
    path = str(path)
    if not path.endswith(".zip"):
        path += ".zip"
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp.zip"
    model.save(tmp)
    with zipfile.ZipFile(tmp, "a") as zf:
        zf.writestr(META_NAME, json.dumps(meta, indent=2, default=str))
    os.replace(tmp, path)  # never leave a half-written model behind
    return path


def slim_model_file(path: str) -> int:
    """Drop the Adam moments from a saved model (a fresh optimizer: same file format, about
    a third of the size; enough to play, and to fine-tune with a fresh optimizer). Returns the new size."""
    from sb3_contrib import MaskablePPO

    meta = read_metadata(path)
    model = MaskablePPO.load(path, device="cpu")
    pol = model.policy
    pol.optimizer = pol.optimizer_class(pol.parameters(), lr=model.lr_schedule(1), **pol.optimizer_kwargs)
    save_model(model, path, {**meta, "optimizer_state": "dropped (shipping size)"})
    return os.path.getsize(path)


def update_metadata(path: str, meta: dict[str, Any]) -> None:
    """Replace the metadata inside an existing model file (rewrites the zip atomically)."""
    tmp = path + ".tmp.zip"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            if item.filename != META_NAME:
                dst.writestr(item, src.read(item.filename))
        dst.writestr(META_NAME, json.dumps(meta, indent=2, default=str))
    os.replace(tmp, path)


def read_metadata(path: str, missing_ok: bool = False) -> dict[str, Any] | None:
    """The ``deckgym_meta.json`` of a model file; ``ValueError`` if it is not a deckgym model.

    ``missing_ok``: a model saved by plain SB3 (its zip has ``data`` and ``policy.pth`` but
    no metadata) gives ``None`` instead of the error."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"model file not found: {path}")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not a deckgym PPO model (not a zip file; corrupt or wrong file?)")
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            if META_NAME not in names:
                if missing_ok and {"data", "policy.pth"} <= set(names):
                    return None
                raise ValueError(f"{path}: not a deckgym PPO model (no {META_NAME} inside; saved by plain SB3?)")
            meta = json.loads(zf.read(META_NAME))
            bad = zf.testzip()
            if bad is not None:
                raise ValueError(f"{path}: corrupt model file (bad CRC in {bad})")
    except (zipfile.BadZipFile, json.JSONDecodeError, OSError, EOFError) as exc:
        raise ValueError(f"{path}: corrupt model file ({exc})") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: not a deckgym PPO model (format {meta.get('format')!r})")
    return meta


def check_metadata(meta: dict[str, Any], core: Any, game: str, where: str = "model") -> None:
    """Raise :class:`ModelMismatchError` naming the first field that does not match ``core``."""
    if meta.get("game") != game:
        raise ModelMismatchError(f"{where} was trained for game {meta.get('game')!r}, not {game!r}")
    want = rules_dict(core.rules)
    have = meta.get("rules", {})
    if have != want:
        diff = [k for k in sorted(set(want) | set(have)) if want.get(k) != have.get(k)]
        detail = ", ".join(f"{k}: model {have.get(k)!r} vs game {want.get(k)!r}" for k in diff)
        raise ModelMismatchError(f"{where} was trained for other {game} rules ({detail})")
    for key, value in (("obs_version", int(getattr(core, "obs_version", 0))), ("obs_size", int(core.obs_size)),
                       ("num_actions", int(core.num_actions))):
        if meta.get(key) != value:
            raise ModelMismatchError(f"{where} has {key} {meta.get(key)!r} but this {game} core has {value!r}"
                                     " (observation layout changed: retrain the model)")
    if meta.get("features"):
        fm = features_module(game)
        supported = tuple(getattr(fm, "SUPPORTED_VERSIONS", (fm.FEATURES_VERSION,)))
        if meta.get("features_version") not in supported:
            raise ModelMismatchError(f"{where} uses derived features version {meta.get('features_version')!r}, "
                                     f"this code computes versions {supported}: retrain the model")


def load_policy(path: str) -> Any:
    """The MaskablePPO policy stored in ``path`` (CPU, eval mode)."""
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(path, device="cpu",
                                 custom_objects={"learning_rate": 0.0, "lr_schedule": lambda _: 0.0, "clip_range": lambda _: 0.0})
    except Exception as exc:  # torch/pickle errors of a damaged member
        raise ValueError(f"{path}: corrupt model file, cannot load the policy ({type(exc).__name__}: {exc})") from None
    policy = model.policy
    policy.set_training_mode(False)
    return policy


def assumed_metadata(policy: Any, core: Any, game: str, path: str) -> dict[str, Any]:
    """Metadata for a MaskablePPO model saved by plain SB3 (no ``deckgym_meta.json``).

    Its action count must be the game's and its observation size the core's observation,
    alone or followed by one version of the derived features (the newest that fits); the
    rules cannot be read from the file, so the core's are assumed, with a warning naming
    them. Otherwise a :class:`ModelMismatchError` gives the sizes."""
    import warnings

    obs_shape = tuple(getattr(policy.observation_space, "shape", None) or ())
    n_act = getattr(policy.action_space, "n", None)
    if len(obs_shape) != 1 or n_act is None:
        raise ModelMismatchError(f"model {path}: observation space {policy.observation_space} and action space "
                                 f"{policy.action_space} are not a flat Box and a Discrete (not a deckgym model)")
    if int(n_act) != int(core.num_actions):
        raise ModelMismatchError(f"model {path} has {int(n_act)} actions but {game} has {core.num_actions}")
    size = obs_shape[0]
    fm = features_module(game)
    versions = sorted(getattr(fm, "SUPPORTED_VERSIONS", (fm.FEATURES_VERSION,)), reverse=True)
    fitting = [v for v in versions if core.obs_size + fm.num_features(core, version=v) == size]
    if size == core.obs_size:
        meta = model_metadata(core, game, features=False)
        layout = f"the raw observation ({size})"
    elif fitting:
        meta = model_metadata(core, game, features=True, features_version=fitting[0])
        layout = f"the observation ({core.obs_size}) and derived features version {fitting[0]}"
    else:
        sizes = [core.obs_size] + [core.obs_size + fm.num_features(core, version=v) for v in versions]
        raise ModelMismatchError(f"model {path} takes observations of size {size}, but {game} with {core.rules!r} "
                                 f"gives {sizes[0]} (raw) or {sizes[1:]} (with derived features versions {versions})")
    warnings.warn(f"model {path} has no {META_NAME} (saved by plain SB3?): assuming it was trained for {game} with "
                  f"{core.rules!r} on {layout}; attach the metadata with deckgym.agents.ppo.save_model", stacklevel=3)
    meta["assumed"] = True
    return meta


class PPOAgent(Agent):
    """A saved MaskablePPO model acting as a batched, masked agent (spec ``ppo:PATH``)."""

    def __init__(self, core: Any, path: str | None = None, seed: int = 0, game: str | None = None,
                 deterministic: bool = True, policy: Any = None, meta: dict[str, Any] | None = None) -> None:
        if not isinstance(deterministic, (bool, np.bool_)):
            raise ValueError(f"PPOAgent: deterministic must be True or False, got {deterministic!r}")
        super().__init__(core, seed=seed)
        self.game = game or game_of_core(core)
        if path is not None:
            meta = read_metadata(path, missing_ok=True)
            if meta is not None:
                check_metadata(meta, core, self.game, where=f"model {path}")
            policy = load_policy(path)
            if meta is None:  # a MaskablePPO model saved by plain SB3 (Gymnasium view): sizes must fit
                meta = assumed_metadata(policy, core, self.game, path)
            self.spec = f"ppo:{path}"
        elif policy is None or meta is None:
            raise ValueError("PPOAgent needs a model path (or a policy and its metadata)")
        else:
            check_metadata(meta, core, self.game, where="policy")
            self.spec = "ppo:<in memory>"
        self.meta = meta
        self.policy = policy
        self.deterministic = deterministic
        self._feat = features_module(self.game) if meta.get("features") else None

    @classmethod
    def snapshot(cls, core: Any, policy: Any, meta: dict[str, Any], seed: int = 0, name: str = "snapshot",
                 deterministic: bool = False) -> "PPOAgent":
        """A frozen copy of a policy being trained (for self-play opponents)."""
        frozen = type(policy)(**policy._get_constructor_parameters())  # a fresh network, same shape
        frozen.load_state_dict(copy.deepcopy(policy.state_dict()))
        frozen.optimizer = None
        frozen.set_training_mode(False)
        agent = cls(core, seed=seed, policy=frozen, meta=meta, deterministic=deterministic)
        agent.spec = name
        return agent

    def inputs(self, observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        if self._feat is not None:
            version = int(self.meta["features_version"])
            obs = np.concatenate([obs, self._feat.derived_features(self.core, obs, version=version)], axis=1)
        return obs

    def logits(self, observations: np.ndarray) -> np.ndarray:
        import torch

        x = torch.as_tensor(self.inputs(observations))
        p = self.policy
        with torch.inference_mode():
            features = p.extract_features(x, p.pi_features_extractor)
            latent = p.mlp_extractor.forward_actor(features)
            return p.action_net(latent).numpy()

    def action_probs(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``(B, A)`` the policy's probabilities over the legal actions (0 for illegal ones),
        what replays show as policy bars; draws no random numbers."""
        return masked_softmax(self.logits(observations), action_masks)

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(action_masks, dtype=bool)
        if len(masks) == 0:
            return np.zeros(0, np.int64)
        logits = np.where(masks, self.logits(observations), -np.inf)
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape)  # Gumbel-max: a sample of softmax(logits)
        return np.argmax(logits, axis=1).astype(np.int64)
