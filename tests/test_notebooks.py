"""The notebooks are committed with their outputs (plots, tables: what a reader sees on the
repository's page), and they still run from top to bottom (with ``DECKGYM_FAST=1``: tiny
settings), so they never rot. Executed with nbclient in a kernel built from this interpreter.

The committed outputs are written by ``python -m tests.test_notebooks`` (fast mode, machine
paths scrubbed, small figures).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import sys
import tempfile

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb", "03_torchrl_ppo.ipynb", "04_openspiel.ipynb"]
# committed with the outputs of a full-mode run (its learning curve rises only in full mode);
# written by `python -m tests.test_notebooks --full 02_train_and_evaluate.ipynb`
FULL_MODE = {"02_train_and_evaluate.ipynb", "03_torchrl_ppo.ipynb", "04_openspiel.ipynb"}
MAX_BYTES = 400_000  # a notebook with its outputs stays small enough to read on the repository's page
_PATHS = re.compile(r"(/tmp|/var/folders|/private/var|/home|/root|/work)/[^\s'\"),]*")


def _kernel(base: pathlib.Path) -> str:
    """A kernel spec running this very interpreter (the venv's), found through JUPYTER_PATH."""
    spec = base / "kernels" / "deckgym-test"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "deckgym tests", "language": "python",
    }))
    return "deckgym-test"


def execute(nb: nbformat.NotebookNode, kernel_name: str, timeout: int = 240) -> nbformat.NotebookNode:
    """``nb`` run from a clean slate (outputs cleared first), in the repository's folder."""
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    NotebookClient(nb, timeout=timeout, kernel_name=kernel_name, resources={"metadata": {"path": str(ROOT)}}).execute()
    return nb


def check_outputs(name: str, nb: nbformat.NotebookNode) -> None:
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"], f"{name}: a cell failed"
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "fast mode" in text or (name in FULL_MODE and "full mode" in text)
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    if name.startswith("03"):
        assert "best checkpoint vs racko:ranges: win rate" in text and "deckgym-policy" in text and "win rate" in text
        assert len(images) >= 1  # the learning curve
    elif name.startswith("01"):
        assert "Rack-O:" in text and "Least Score:" in text and "obs_size" in text and "random play vs" in text
        assert "re-simulated bit for bit" in text
        assert len(images) >= 1  # the rendered pictures
    elif name.startswith("04"):
        assert "random_sim_test passed" in text and "NFSP:" in text and "racko:nfsp vs racko:lookahead" in text
    else:
        assert "model:" in text and "win rate" in text and "rating" in text
        assert len(images) >= 2  # the learning curve and the arena chart


@pytest.fixture(scope="module")
def kernel_name(tmp_path_factory, monkeypatch_module):
    base = tmp_path_factory.mktemp("jupyter")
    monkeypatch_module.setenv("JUPYTER_PATH", str(base))
    monkeypatch_module.setenv("DECKGYM_FAST", "1")
    monkeypatch_module.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    return _kernel(base)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_shows_its_outputs(name):
    path = ROOT / "notebooks" / name
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs for c in code if c.source.strip()), f"{name}: commit it with its outputs (python -m tests.test_notebooks)"
    check_outputs(name, nb)
    assert path.stat().st_size < MAX_BYTES, f"{name}: {path.stat().st_size} bytes with outputs, keep it under {MAX_BYTES}"
    texts = json.dumps([o for c in code for o in c.outputs if o.output_type != "display_data"])
    assert not _PATHS.search(texts), f"{name}: an output shows a machine path: {_PATHS.search(texts).group(0)}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, kernel_name):
    nb = execute(nbformat.read(ROOT / "notebooks" / name, as_version=4), kernel_name)
    check_outputs(name, nb)


def _scrub(nb: nbformat.NotebookNode) -> None:
    """Machine paths out of the outputs, no timing metadata."""
    for c in nb.cells:
        c.metadata.pop("execution", None)
        for o in c.get("outputs", []):
            if "text" in o:
                o["text"] = _PATHS.sub("<tmp>", str(o["text"]).replace(str(ROOT) + "/", "").replace(str(ROOT), "."))
            for key, val in o.get("data", {}).items():
                if key.startswith("text/") and isinstance(val, str):
                    o["data"][key] = _PATHS.sub("<tmp>", val.replace(str(ROOT) + "/", "").replace(str(ROOT), "."))


def main(argv: list[str] | None = None) -> None:
    """Run the notebooks in fast mode (``--full NAME``: that one in full mode) and write them back
    with their outputs; the ones in ``FULL_MODE`` are left alone unless named."""
    argv = sys.argv[1:] if argv is None else argv
    full = argv[argv.index("--full") + 1:] if "--full" in argv else []
    os.environ.update(DECKGYM_FAST="0" if full else "1", MPLBACKEND="module://matplotlib_inline.backend_inline")
    with tempfile.TemporaryDirectory() as base:
        os.environ["JUPYTER_PATH"] = base
        kernel = _kernel(pathlib.Path(base))
        for name in full or [n for n in NOTEBOOKS if n not in FULL_MODE]:
            path = ROOT / "notebooks" / name
            nb = execute(nbformat.read(path, as_version=4), kernel, timeout=1800 if full else 240)
            _scrub(nb)
            nb.metadata.pop("widgets", None)
            nbformat.write(nb, path)
            print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
