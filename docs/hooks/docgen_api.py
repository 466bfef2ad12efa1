"""Defaults tables of the front ends, read from the code: a constructor's signature, or the
fields of an options dataclass (a parameter annotated with a dataclass, or the class itself
when it is one), and OpenSpiel's game parameters."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import typing
from typing import Any

from docgen_games import md_table


def resolve(target: str) -> Any:
    """``"module:attr.attr"`` -> the object."""
    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


def _fmt_default(value: Any) -> str:
    if value is inspect.Parameter.empty or value is dataclasses.MISSING:
        return "*required*"
    return f"`{value!r}`"


def _type_name(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, str):
        return f"`{annotation}`"
    if isinstance(annotation, type):
        return f"`{annotation.__name__}`"
    return f"`{str(annotation).replace('typing.', '')}`"


def _options_class(annotation: Any, default: Any) -> type | None:
    """The options dataclass a parameter takes: its annotation (``Options`` or ``Options | None``)
    or its default's class."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and dataclasses.is_dataclass(candidate):
            return candidate
    if dataclasses.is_dataclass(default) and not isinstance(default, type):
        return type(default)
    return None


def _dataclass_rows(cls: type, prefix: str = "") -> list[list[str]]:
    rows = []
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # a forward reference the module does not import at run time
        hints = {}
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
        rows.append([f"`{prefix}{f.name}`", _type_name(hints.get(f.name, f.type)), _fmt_default(default),
                     rst_to_md(f.metadata.get("doc") or f.metadata.get("help") or "")])
    return rows


#: the packages whose constructors are documented (not the base classes of TorchRL or Gymnasium)
OURS = ("deckgym", "racko_env", "leastscore_env")


def _inits(obj: Any) -> list[Any]:
    """The callables whose signatures name the parameters: a function itself; for a class, its
    ``__init__`` and, while one forwards ``**kwargs``, the next ``__init__`` up the MRO."""
    if not isinstance(obj, type):
        return [(obj, obj)]
    out: list[tuple[Any, Any]] = []
    for klass in obj.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass.__module__.split(".")[0] not in OURS:
            continue
        params = list(inspect.signature(init).parameters.values())
        if not any(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self" for p in params):
            continue
        out.append((klass, init))
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return out or [(obj, obj)]


def arg_docs(obj: Any) -> dict[str, str]:
    """``name -> text`` from the ``Args:`` section of a Google-style docstring."""
    doc = inspect.getdoc(obj) or ""
    out: dict[str, str] = {}
    inside, last = False, None
    for line in doc.splitlines():
        if line.strip() in ("Args:", "Arguments:", "Parameters:"):
            inside = True
            continue
        if inside:
            m = re.match(r"^    (\*{0,2}\w+(?:, \w+)*)(?: \([^)]*\))?: (.*)$", line)
            if m:
                last = [n.lstrip("*") for n in m.group(1).split(", ")]
                for n in last:
                    out[n] = m.group(2).strip()
            elif line.startswith("        ") and last:
                for n in last:
                    out[n] += " " + line.strip()
            elif line.strip() and not line.startswith(" "):
                inside = False
    return {k: rst_to_md(v) for k, v in out.items()}


def rst_to_md(text: str) -> str:
    """Docstring markup to Markdown: ``code`` and :role:`target` become `code`."""
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text.replace("``", "`"))


def defaults_table(target: str, extra_doc: str = "") -> str:
    """One row per parameter (name, type, default, the docstring's words); a parameter annotated
    with a dataclass (an options object) is expanded into that dataclass's fields."""
    obj = resolve(target)
    if dataclasses.is_dataclass(obj) and isinstance(obj, type):
        return md_table(["field", "type", "default", "meaning"], _dataclass_rows(obj))
    rows, seen, var_kw = [], set(), None
    inits = _inits(obj)
    docs: dict[str, str] = {}
    for owner, source in reversed(inits):
        docs.update({**arg_docs(owner), **arg_docs(source)})
    docs.update(arg_docs(obj))
    for _owner, source in inits:
        try:
            hints = typing.get_type_hints(source)
        except Exception:  # a forward reference the module does not import at run time
            hints = {}
        for p in inspect.signature(source).parameters.values():
            if p.name in ("self", "cls") or p.name in seen or p.kind is p.VAR_POSITIONAL:
                continue
            seen.add(p.name)
            ann = hints.get(p.name, p.annotation)
            options = _options_class(ann, p.default)
            if options is not None:
                rows += _dataclass_rows(options, prefix=f"{p.name}.")
            elif p.kind is p.VAR_KEYWORD:
                var_kw = p.name
            else:
                shown = p.annotation if isinstance(p.annotation, str) else ann  # as written in the code
                rows.append([f"`{p.name}`", _type_name(shown), _fmt_default(p.default), docs.get(p.name, "")])
    if var_kw:
        rows.append([f"`**{var_kw}`", "", "", extra_doc or docs.get(var_kw, "further keywords")])
    name = getattr(obj, "__qualname__", str(obj))
    return f"`{obj.__module__}.{name}`\n\n" + md_table(["parameter", "type", "default", "meaning"], rows)


def openspiel_params(short: str) -> str:
    """The game parameters of ``python_<short>`` as OpenSpiel registers them, with defaults."""
    import pyspiel

    import deckgym.openspiel  # noqa: F401  (registers the games)

    game = pyspiel.load_game(f"python_{short}")
    params = game.get_type().parameter_specification
    rows = [[f"`{k}`", f"`{v!r}`"] for k, v in params.items()]
    return f"`pyspiel.load_game(\"python_{short}\")`\n\n" + md_table(["parameter", "default"], rows)
