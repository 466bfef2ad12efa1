"""The notebooks run from top to bottom (with ``DECKGYM_FAST=1``: tiny settings), so they
never rot. Executed with nbclient in a kernel built from this interpreter."""

from __future__ import annotations

import json
import pathlib
import sys
import time

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb"]


@pytest.fixture(scope="module")
def kernel_name(tmp_path_factory, monkeypatch_module):
    """A kernel spec running this very interpreter (the venv's), found through JUPYTER_PATH."""
    base = tmp_path_factory.mktemp("jupyter")
    spec = base / "kernels" / "deckgym-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "deckgym tests", "language": "python",
    }))
    monkeypatch_module.setenv("JUPYTER_PATH", str(base))
    monkeypatch_module.setenv("DECKGYM_FAST", "1")
    monkeypatch_module.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    return "deckgym-test"


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, kernel_name, tmp_path):
    path = ROOT / "notebooks" / name
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{name}: commit it with outputs cleared"
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=240, kernel_name=kernel_name, resources={"metadata": {"path": str(ROOT)}}).execute()
    elapsed = time.perf_counter() - t0
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "fast mode" in text
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    if name.startswith("01"):
        assert "Rack-O:" in text and "Least Score:" in text and "obs_size" in text and "random play vs" in text
        assert len(images) >= 1  # the rendered pictures
    else:
        assert "model:" in text and "win rate" in text and "rating" in text
        assert len(images) >= 2  # the learning curve and the arena chart
    assert elapsed < 120, f"{name} took {elapsed:.0f}s in fast mode"
