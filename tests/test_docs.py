"""The documents: docs/RULES.md covers every rule id and rules field, and links resolve."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from leastscore_env.rules import LeastScoreRules
from racko_env.rules import RackoRules

ROOT = Path(__file__).resolve().parent.parent
RULES_MD = ROOT / "docs" / "RULES.md"
RULE_IDS = [f"R{i}" for i in range(1, 13)] + [f"L{i}" for i in range(1, 11)]
RULES_CLASSES = {"Rack-O": RackoRules, "Least Score": LeastScoreRules}


def rules_text() -> str:
    return RULES_MD.read_text(encoding="utf-8")


def section(text: str, title: str) -> str:
    """The body of the markdown section whose heading is ``title`` (up to the next heading
    of the same or a higher level)."""
    m = re.search(rf"^(#+) {re.escape(title)}\s*$", text, flags=re.M)
    assert m, f"docs/RULES.md has no heading {title!r}"
    level = len(m.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", flags=re.M).search(text, m.end())
    return text[m.end(): end.start() if end else len(text)]


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_every_rule_id_has_its_own_heading(rule_id):
    # "R1" must not be satisfied by "R10": the id is followed by a non-digit.
    headings = re.findall(rf"^#+ {rule_id}(?!\d)\b.*$", rules_text(), flags=re.M)
    assert len(headings) == 1, f"{rule_id}: expected one heading in docs/RULES.md, got {headings}"


def test_rule_ids_cited_in_the_code_exist_in_the_rules():
    cited: set[str] = set()
    for folder in ("racko_env", "leastscore_env", "deckgym", "agents", "training", "experiments", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            cited |= set(re.findall(r"\b[RL]\d+\b", path.read_text(encoding="utf-8")))
    unknown = cited - set(RULE_IDS)
    assert not unknown, f"the code cites rule ids that docs/RULES.md does not define: {sorted(unknown)}"


def test_information_rules_are_there():
    body = section(rules_text(), "Information: what each player may observe")
    for needle in ("Never in an observation", "env.state()", "face-down", "own cards"):
        assert needle.lower() in body.lower(), needle


def field_rows(text: str) -> dict[str, str]:
    """``field -> default cell`` from the rows ``| `field` | default | rule | meaning |``."""
    return dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", text, flags=re.M))


@pytest.mark.parametrize("game", list(RULES_CLASSES))
def test_every_rules_field_is_documented_with_its_default(game):
    cls = RULES_CLASSES[game]
    title = {"Rack-O": "Rack-O: `racko_env.RackoRules`", "Least Score": "Least Score: `leastscore_env.LeastScoreRules`"}
    rows = field_rows(section(rules_text(), title[game]))
    names = [f.name for f in dataclasses.fields(cls)]
    assert sorted(rows) == sorted(names), f"{game}: table fields {sorted(rows)} != dataclass fields {sorted(names)}"
    for f in dataclasses.fields(cls):
        documented = re.match(r"`([^`]+)`", rows[f.name].strip())
        assert documented, f"{game}.{f.name}: the default cell must start with the value in backticks"
        assert documented.group(1) == repr(f.default).replace("'", '"'), (
            f"{game}.{f.name}: docs/RULES.md says {documented.group(1)}, the code says {f.default!r}"
        )


@pytest.mark.parametrize("game", list(RULES_CLASSES))
def test_every_rules_field_is_named_in_its_rule_text(game):
    """Each field is explained where its rule is, not only in the summary table."""
    text = rules_text()
    body = section(text, game)
    for f in dataclasses.fields(RULES_CLASSES[game]):
        assert f"`{f.name}`" in body, f"{game}: field {f.name} is not named in the rules of the game"


PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def test_readme_has_python_snippets():
    assert len(PYTHON_BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))) >= 4


@pytest.mark.parametrize("number", range(len(PYTHON_BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8")))))
def test_each_readme_python_snippet_runs_pasted_alone(number):
    """A snippet is pasted into a fresh interpreter on its own: it imports what it uses."""
    import os
    import subprocess
    import sys

    code = PYTHON_BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))[number]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"README python snippet {number + 1} fails:\n{code}\n{run.stderr[-2000:]}"


@pytest.mark.parametrize("doc", ["README.md", "EVALUATION.md", "BENCHMARKS.md"])
def test_user_documents_hold_current_figures_not_lab_notes(doc):
    """History (commits compared, before/after tables) lives in docs/notes/, not in the user documents."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert not re.search(r"`[0-9a-f]{7,40}`|\bcommits? [0-9a-f]{7}\b", text), f"{doc} cites a commit"
    assert not re.search(r"^\| *(code|before|goal|target) *\|", text, re.M | re.I), f"{doc} has a before/after or goal table"
    # a reader can take it in: the front door under 300 lines, the records under 400 (history: docs/notes/)
    assert len(text.splitlines()) < {"README.md": 300, "EVALUATION.md": 400, "BENCHMARKS.md": 400}[doc], doc
    if doc == "BENCHMARKS.md":
        assert len(text.splitlines()) <= 250
    else:  # strength is reported as measured, not against goals that were set for it
        assert not re.search(r"\b(goals?|aim of|not reached|reached in)\b", text, re.I), f"{doc} speaks of goals"


MD_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize(
    "doc", ["README.md", "EVALUATION.md", "BENCHMARKS.md", "SECURITY.md"]
    + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))
    + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "models").glob("*.md"))
    ,
)
def test_relative_links_resolve(doc):
    path = ROOT / doc
    for target in MD_LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        resolved = (path.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{doc} links to {target}, outside the repository"
        assert resolved.exists(), f"{doc} links to {target}, which does not exist"


# -- repository hygiene: the repository speaks only of the product ----------------------------
# The forbidden strings are assembled from pieces so that this file does not match itself.
FORBIDDEN = {
    "a path outside the repository": re.compile(re.escape(".." + "/shared")),
    "a machine path": re.compile("|".join(re.escape(p) for p in ("/" + "work/", "/" + "root/"))),
    "a work-session number": re.compile(r"\bsess" r"ions?[ -]?\d", re.I),
    "a deadline note": re.compile(r"\bst" r"op 1[0-9]", re.I),
    "an issue number": re.compile(r"\biss" r"ues? #?\d", re.I),
    "a role of the team": re.compile(r"\b(?:owned by|the) le" r"ads?\b", re.I),
}
BINARY_SUFFIXES = {".zip", ".png", ".npz", ".npy", ".pkl", ".pt", ".gz", ".jpg", ".pdf"}


def tracked_text_files() -> list[Path]:
    """Every git-tracked file that is text (binaries by suffix or by a NUL byte are skipped)."""
    import subprocess

    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = []
    for name in out.decode().split("\0"):
        path = ROOT / name
        if not name or path.suffix in BINARY_SUFFIXES or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" not in data[:8192]:
            files.append(path)
    return files


def test_hygiene_scans_the_repository():
    names = {p.relative_to(ROOT).as_posix() for p in tracked_text_files()}
    assert {"README.md", "docs/RULES.md", "tests/test_docs.py", "racko_env/rules.py"} <= names


@pytest.mark.parametrize("what", list(FORBIDDEN))
def test_no_tracked_file_speaks_of_the_workshop(what):
    pattern = FORBIDDEN[what]
    hits = []
    for path in tracked_text_files():
        for no, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()[:100]}")
    assert not hits, f"{what} in tracked files:\n" + "\n".join(hits)


@pytest.mark.parametrize("what", list(FORBIDDEN))
def test_the_hygiene_patterns_catch_what_they_are_for(what):
    samples = {
        "a path outside the repository": "see ../" "shared/RULES.md",
        "a machine path": "open('/" "work/shared/RULES.md')",
        "a work-session number": "measured in Sess" "ion 4",
        "a deadline note": "land before st" "op 15",
        "an issue number": "as Iss" "ue 14 asks",
        "a role of the team": "deckgym (shared, owned by the le" "ad)",
    }
    assert FORBIDDEN[what].search(samples[what])
    assert not FORBIDDEN[what].search("PlaySession(game) runs one session of play; see docs/RULES.md")
    assert not FORBIDDEN[what].search("the leading axes lead the shape; the player leads with a card")
