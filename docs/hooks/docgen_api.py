"""Defaults tables of the front ends, read from the code: a constructor's signature, or the
fields of an options dataclass (a parameter annotated with a dataclass, or the class itself
when it is one), and OpenSpiel's game parameters."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import textwrap
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


def attribute_docs(cls: type) -> dict[str, str]:
    """``field -> docstring`` of a class whose fields are documented by a string right after
    them (PEP 257's attribute docstrings, as ``LearnerOptions`` writes them), one line each."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):  # a builtin, or a class made at run time
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, body[1:]):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                out[node.target.id] = " ".join(after.value.value.split())
    return out


def _hints(obj: Any) -> dict[str, Any]:
    """``obj``'s resolved annotations; none where one names what its module does not import at run time."""
    try:
        return typing.get_type_hints(obj)
    except Exception:
        return {}


def _dataclass_rows(cls: type, prefix: str = "") -> list[list[str]]:
    rows = []
    written = attribute_docs(cls)
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
        rows.append([f"`{prefix}{f.name}`", _type_name(hints.get(f.name, f.type)), _fmt_default(default),
                     rst_to_md(f.metadata.get("doc") or f.metadata.get("help") or written.get(f.name, ""))])
    return rows


#: the packages whose constructors are documented (not the base classes of TorchRL or Gymnasium)
OURS = ("deckgym", "racko_env", "leastscore_env")


def _forwards(init: Any, var_kw: str) -> bool:
    """Whether ``init`` hands its ``**var_kw`` to a base's ``__init__`` itself (``super().__init__``
    or ``Base.__init__``; not to the rules, nor inside another argument)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    except (OSError, TypeError, SyntaxError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__":
            if any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == var_kw for k in node.keywords):
                return True
    return False


def _inits(obj: Any) -> list[Any]:
    """The callables whose signatures name the parameters: a function itself; for a class, its
    ``__init__`` and, while one forwards its ``**kwargs`` to a base's ``__init__``, the next
    ``__init__`` up the MRO."""
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
        var_kw = [p.name for p in params if p.kind is p.VAR_KEYWORD]
        if not var_kw or not _forwards(init, var_kw[0]):
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


def _inherited_docs(obj: Any) -> dict[str, str]:
    """What our base classes say of a parameter name: their ``Args:``, and the fields of the
    options dataclass their constructors take; the nearest base first."""
    out: dict[str, str] = {}
    for klass in (obj.__mro__[1:] if isinstance(obj, type) else ()):
        init = klass.__dict__.get("__init__")
        if init is None or klass.__module__.split(".")[0] not in OURS:
            continue
        for name, text in {**arg_docs(klass), **arg_docs(init)}.items():
            out.setdefault(name, text)
        hints = _hints(init)
        for p in inspect.signature(init).parameters.values():
            options = _options_class(hints.get(p.name, p.annotation), p.default)
            if options is not None:
                for row in _dataclass_rows(options):
                    out.setdefault(row[0].strip("`"), row[3])
    return {k: v for k, v in out.items() if v}


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
    for name, text in _inherited_docs(obj).items():  # "the other arguments are the base's"
        docs.setdefault(name, text)
    for _owner, source in inits:
        hints = _hints(source)
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
