"""The MkDocs hook of the documentation site (``mkdocs.yml``: ``hooks``).

- **Generated pages** (``on_files``): the measured records (``EVALUATION.md``,
  ``BENCHMARKS.md``), ``SECURITY.md`` and the model cards from the repository root, the
  notebooks with their committed outputs, and each game's animation drawn from a replay.
  Nothing generated is written into the repository.
- **Generated tables** (``on_page_markdown``): a line ``<!-- gen:NAME ARGS -->`` in a page is
  replaced by what the code says (the header, observation layouts, action ids, rules fields
  and versions of a game, a front end's defaults, a section of a module docstring, a section
  of another Markdown file such as ``docs/RULES.md``). An unknown name or a failing generator
  stops the build.
- **Links** between the repository's files are rewritten to the site's pages; a link to a
  repository file that is not a page (a module, a script) becomes its path in code type.
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
import shlex
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import docgen_api  # noqa: E402
import docgen_assets  # noqa: E402
import docgen_games  # noqa: E402

#: repository file -> site page, for the pages made from files outside docs/
ROOT_PAGES = {"EVALUATION.md": "evaluation.md", "BENCHMARKS.md": "benchmarks.md", "SECURITY.md": "security.md",
              "README.md": "index.md"}
GAMES = ("racko", "leastscore")
MACRO = re.compile(r"^<!-- gen:([\w-]+)(.*?)-->[ \t]*$", re.M)
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)

#: site page (src_uri) -> the repository file it is made of
_sources: dict[str, str] = {}


def _repo_pages() -> dict[str, str]:
    pages = dict(ROOT_PAGES)
    for path in sorted(glob.glob(os.path.join(ROOT, "models", "*.md"))):
        name = os.path.basename(path)
        pages[f"models/{name}"] = f"models/{name}"
    for path in sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))):
        stem = os.path.splitext(os.path.basename(path))[0]
        pages[f"notebooks/{stem}.ipynb"] = f"notebooks/{stem}.md"
    return pages


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    docs_dir = config["docs_dir"]
    for f in files:
        _sources[f.src_uri] = posixpath.join(os.path.relpath(docs_dir, ROOT).replace(os.sep, "/"), f.src_uri)
    for repo_path, uri in _repo_pages().items():
        if uri == "index.md":
            continue  # the site's home page is docs/index.md; the README links there
        full = os.path.join(ROOT, repo_path)
        if repo_path.endswith(".ipynb"):
            content = docgen_assets.notebook_markdown(full, repo_path)
        else:
            with open(full, encoding="utf-8") as fh:
                content = fh.read()
        files.append(File.generated(config, uri, content=content))
        _sources[uri] = repo_path
    for name in GAMES:
        files.append(File.generated(config, f"assets/generated/{name}.gif", content=docgen_assets.game_animation(name)))
    return files


def _site_of(repo_path: str) -> str | None:
    if repo_path == "README.md":
        return "index.md"
    for uri, src in _sources.items():
        if src == repo_path:
            return uri
    return None


def rebase(text: str, from_file: str, to_file: str) -> str:
    """Make the relative links of ``text`` (written in repository file ``from_file``) point
    at the same targets from ``to_file``; a bare ``#anchor`` keeps pointing into ``from_file``."""
    def fix(m: re.Match) -> str:
        bang, label, target = m.groups()
        if re.match(r"[a-z]+:", target) or target.startswith("/"):
            return m.group(0)
        path, _, anchor = target.partition("#")
        repo = posixpath.normpath(posixpath.join(posixpath.dirname(from_file), path)) if path else from_file
        if repo == to_file and anchor:
            return f"{bang}[{label}](#{anchor})"
        rel = posixpath.relpath(repo, posixpath.dirname(to_file) or ".")
        return f"{bang}[{label}]({rel}{'#' + anchor if anchor else ''})"
    return _outside_fences(text, lambda t: LINK.sub(fix, t))


def _outside_fences(text: str, fn: Any) -> str:
    out, last = [], 0
    for m in FENCE.finditer(text):
        out += [fn(text[last:m.start()]), m.group(0)]
        last = m.end()
    return "".join(out + [fn(text[last:])])


def to_site_links(text: str, page_uri: str) -> str:
    """Links written between repository files -> links between the site's pages."""
    source = _sources.get(page_uri, posixpath.join("docs", page_uri))

    def fix(m: re.Match) -> str:
        bang, label, target = m.groups()
        if re.match(r"[a-z]+:", target) or target.startswith("/") or target.startswith("#"):
            return m.group(0)
        path, _, anchor = target.partition("#")
        repo = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
        uri = _site_of(repo)
        if uri is not None:
            rel = posixpath.relpath(uri, posixpath.dirname(page_uri) or ".")
            return f"{bang}[{label}]({rel}{'#' + anchor if anchor else ''})"
        if os.path.exists(os.path.join(ROOT, repo)):  # a module or script: named, not linked
            return label if f"`{repo}`" in label or label.strip("`") == repo else f"{label} (`{repo}`)"
        return m.group(0)  # a dead link: left for the strict build to report
    return _outside_fences(text, lambda t: LINK.sub(fix, t))


def section(text: str, title: str, where: str) -> str:
    """The body of the Markdown section whose heading is ``title`` (``"## Title"`` or ``"Title"``)."""
    title = title.lstrip("#").strip()
    m = re.search(rf"^(#+) {re.escape(title)}[ \t]*$", text, flags=re.M)
    if not m:
        raise ValueError(f"{where} has no heading {title!r}")
    end = re.compile(rf"^#{{1,{len(m.group(1))}}} ", flags=re.M).search(text, m.end())
    return text[m.end(): end.start() if end else len(text)].strip("\n").rstrip("-\n ")


def shift_headings(text: str, by: int) -> str:
    if not by:
        return text
    return _outside_fences(text, lambda t: re.sub(r"^(#+) ", lambda m: "#" * max(1, len(m.group(1)) + by) + " ", t,
                                                   flags=re.M))


def _picture(name: str, page_uri: str) -> str:
    from deckgym.registration import game as game_entry

    spec = game_entry(name).descriptor
    players = spec.demo_players or spec.rules().num_players
    seats = list(spec.eval_against)[:players]
    rel = posixpath.relpath(f"assets/generated/{name}.gif", posixpath.dirname(page_uri) or ".")
    who = ", ".join(f"<code>{s}</code>" for s in seats)
    return (f'<figure class="game-picture" markdown>\n![A game of {spec.title}, move by move]({rel})\n'
            f"<figcaption>Deal 0 of seed 0, {players} players, played in the arena by {who}; drawn from its replay "
            f"by <code>{spec.render.__name__}.rgb_array</code> when this site was built.</figcaption>\n</figure>")


def expand(name: str, args: list[str], page_uri: str) -> str:
    source = _sources.get(page_uri, posixpath.join("docs", page_uri))
    if name == "header":
        return docgen_games.header(*args)
    if name == "picture":
        return _picture(args[0], page_uri)
    if name == "obs":
        return docgen_games.obs_table(*args)
    if name == "actions":
        return docgen_games.action_table(*args)
    if name == "rules-fields":
        return docgen_games.rules_fields(*args)
    if name == "versions":
        return docgen_games.versions(*args)
    if name == "defaults":
        return docgen_api.defaults_table(*args)
    if name == "openspiel-params":
        return docgen_api.openspiel_params(*args)
    if name == "docstring":  # MODULE "SECTION" [SHIFT]
        import importlib

        module = importlib.import_module(args[0])
        body = docgen_games.docstring_section(module, args[1])
        return shift_headings(docgen_api.rst_to_md(body), int(args[2]) if len(args) > 2 else 0)
    if name == "include":  # FILE "HEADING" [SHIFT]: a section of a repository Markdown file
        with open(os.path.join(ROOT, args[0]), encoding="utf-8") as fh:
            body = section(fh.read(), args[1], args[0])
        body = rebase(body, args[0], source)
        return shift_headings(body, int(args[2]) if len(args) > 2 else 0)
    if name == "code":  # FILE: a repository source file, shown as it is
        with open(os.path.join(ROOT, args[0]), encoding="utf-8") as fh:
            code = fh.read().rstrip()
        return f'```{{.python title="{args[0]}"}}\n{code}\n```'
    raise ValueError(f"{page_uri}: unknown generator {name!r}")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    uri = page.file.src_uri

    def run(m: re.Match) -> str:
        try:
            return expand(m.group(1), shlex.split(m.group(2)), uri)
        except Exception as exc:
            from mkdocs.exceptions import PluginError

            raise PluginError(f"{uri}: <!-- gen:{m.group(1)}{m.group(2)}--> failed: {type(exc).__name__}: {exc}") from exc
    markdown = MACRO.sub(run, markdown)
    return to_site_links(markdown, uri)
