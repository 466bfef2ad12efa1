"""The optional extras (``pip install 'deckgym[EXTRA]'``) and a check that names a missing one.

A feature that needs an extra calls :func:`require_extra` before any work: if a module of the
extra cannot be found, :class:`MissingExtraError` says which feature needs which extra and the
command that installs it, in one line (``deckgym eval racko ppo:m.zip ...`` before the first
game, ``--chart`` before the evaluation). The check only looks the modules up
(``importlib.util.find_spec``): nothing heavy is imported.
"""

from __future__ import annotations

import importlib.util

#: the modules each extra brings, as imported (pyproject.toml's optional-dependencies)
EXTRAS = {
    "train": ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tqdm"),
    "charts": ("matplotlib",),
    "rllib": ("ray", "torch"),
    "bench": ("pygame", "rlcard"),
    "openspiel": ("pyspiel",),
    "torchrl": ("torchrl", "tensordict", "torch"),
    "ladder": ("psycopg", "openskill"),
    "docs": ("mkdocs", "material", "mkdocstrings"),
}


class MissingExtraError(ImportError):
    """An optional extra is not installed; the message names it and how to install it."""


def install_hint(extra: str) -> str:
    """``pip install 'deckgym[EXTRA]'``."""
    return f"pip install 'deckgym[{extra}]'"


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module without a spec
        return False


def missing_modules(extra: str, modules: tuple[str, ...] | None = None) -> list[str]:
    """The modules of ``extra`` (or just ``modules``) that cannot be imported here."""
    return [m for m in (modules or EXTRAS[extra]) if not _found(m)]


def require_extra(extra: str, feature: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise :class:`MissingExtraError` if ``feature`` cannot run for want of ``extra``'s modules
    (all of them, or only ``modules``)."""
    missing = missing_modules(extra, modules)
    if missing:
        raise MissingExtraError(f"{feature} needs the '{extra}' extra, which is not installed (no module "
                                f"{', '.join(repr(m) for m in missing)}): {install_hint(extra)}")
