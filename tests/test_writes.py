"""Every write of the product goes through the one writer (``deckgym.outputs``): atomic, never
through a link planted at the name, an existing file's mode kept, the umask never touched.

The first test reads the source of every package and tool and fails on a plain write, so a new
one cannot slip in; the others plant links where each engine and tool writes and run it."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from deckgym.outputs import JsonLines, atomic_file, copy_file, new_folder, write_json, write_text

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("deckgym", "agents", "training", "evaluation", "racko_env", "leastscore_env", "benchmarks", "experiments")
# a write that does not go through deckgym.outputs
PLAIN_WRITE = re.compile(
    r"""(?<!fd)open\([^)]*['"][wax]b?\+?['"]"""  # open(path, "w") and friends
    r"""|\bnp\.save(z|z_compressed)?\((?!f\b)"""  # numpy's writers given a name (a file object f is ours)
    r"""|\.write_(text|bytes)\(|\bjson\.dump\(|\bumask\(|\btorch\.save\(|\bshutil\.(copy|copyfile|copy2|move)\("""
    r"""|\bsave_file\(|\.savefig\((?!f\b)|\.to_csv\(|\bos\.(chmod|rename)\(|exist_ok=True"""
)
# (file, why) the only places allowed a pattern above
ALLOWED = {
    "deckgym/outputs.py": "os.makedirs(exist_ok=True) of the parents of a new run folder",
    "deckgym/replay.py": "os.makedirs(exist_ok=True) of the --replays folder the user named (files go through the writer)",
    "evaluation/arena.py": "os.makedirs(exist_ok=True) of the --replays folder the user named",
    "evaluation/demo.py": "os.makedirs(exist_ok=True) of the --out folder the user named",
    "agents/policy_file.py": "os.makedirs(exist_ok=True) of the folder of --out (the file goes through the writer)",
    "evaluation/ladder/views.py": "os.makedirs(exist_ok=True) of the export folder the user named (files go through the writer)",
    "evaluation/ladder/demo.py": "os.makedirs(exist_ok=True) of the demo's --out folder (the ladders are databases)",
}


def _plain_writes() -> list[str]:
    found = []
    for pkg in SOURCES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for n, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0]
                m = PLAIN_WRITE.search(code)
                if not m:
                    continue
                if rel in ALLOWED and m.group(0) == "exist_ok=True":
                    continue
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


def test_no_plain_write_anywhere_in_the_tree():
    assert _plain_writes() == []


def test_the_grep_sees_a_plain_write(tmp_path, monkeypatch):
    """The check above can fail: each kind of plain write is found."""
    for code in ('with open(p, "w") as f:', "np.savez(p, a=1)", "Path(p).write_text(s)", "json.dump(x, f)",
                 "os.umask(0)", "torch.save(m, p)", "shutil.copy(a, b)", "fig.savefig(p)", "os.chmod(p, 0o644)",
                 'open(p, "ab")'):
        assert PLAIN_WRITE.search(code), code
    for code in ('open(p, "rb")', "np.savez(f, a=1)", "fig.savefig(f, dpi=110)", "json.dumps(x)", "write_json(p, x)"):
        assert not PLAIN_WRITE.search(code), code


def _victim(tmp_path, name="victim"):
    v = tmp_path / name
    v.write_text("secret")
    return v


def test_a_rewritten_file_keeps_its_mode_and_a_new_one_gets_the_ordinary_mode(tmp_path):
    private = tmp_path / "private.json"
    private.write_text("{}")
    os.chmod(private, 0o600)
    write_json(private, {"x": 1})
    assert os.stat(private).st_mode & 0o777 == 0o600 and json.loads(private.read_text()) == {"x": 1}
    os.chmod(private, 0o640)
    with atomic_file(private) as f:
        f.write(b"{}")
    assert os.stat(private).st_mode & 0o777 == 0o640
    with open(tmp_path / "plain", "w") as f:  # what an ordinary open gives under this process's umask
        f.write("x")
    write_text(tmp_path / "new.txt", "x")
    assert os.stat(tmp_path / "new.txt").st_mode == os.stat(tmp_path / "plain").st_mode


def test_the_writer_never_touches_the_umask(tmp_path, monkeypatch):
    def boom(*a):
        raise AssertionError("os.umask called: it changes the mode of every other thread's new files")
    monkeypatch.setattr(os, "umask", boom)
    write_json(tmp_path / "a.json", {})
    copy_file(tmp_path / "a.json", tmp_path / "b.json")
    JsonLines(tmp_path / "log.jsonl").append({"x": 1})


def test_links_are_replaced_never_followed_and_no_temporary_is_left(tmp_path):
    victim = _victim(tmp_path)
    (tmp_path / "out").mkdir()
    for name in ("a.json", "b.npz", "c.jsonl", "d.bin"):
        os.symlink(victim, tmp_path / "out" / name)
    write_json(tmp_path / "out" / "a.json", {"x": 1})
    with atomic_file(tmp_path / "out" / "b.npz") as f:
        np.savez(f, x=np.arange(3))
    JsonLines(tmp_path / "out" / "c.jsonl").append({"x": 1})
    copy_file(tmp_path / "out" / "a.json", tmp_path / "out" / "d.bin")
    assert victim.read_text() == "secret"
    assert not any(p.is_symlink() for p in (tmp_path / "out").iterdir())
    assert sorted(os.listdir(tmp_path / "out")) == ["a.json", "b.npz", "c.jsonl", "d.bin"]


def test_a_run_folder_is_new_or_refused(tmp_path):
    os.symlink(tmp_path, tmp_path / "planted")
    with pytest.raises(ValueError, match="--runs .*planted: already exists"):
        new_folder(tmp_path / "planted", "--runs")
    (tmp_path / "taken").mkdir()
    with pytest.raises(ValueError, match="already exists"):
        new_folder(tmp_path / "taken", "--run-name")
    assert new_folder(tmp_path / "a" / "b") == str(tmp_path / "a" / "b") and (tmp_path / "a" / "b").is_dir()


def test_save_policy_goes_through_the_writer(tmp_path, monkeypatch):
    """A10: no fixed PATH.tmp that a link could sit on, no umask, the file's mode kept."""
    from deckgym.agents.policy_file import load_policy, save_policy
    from tests.test_policy_file import make_core, tiny_policy

    path = tmp_path / "p.safetensors"
    victim = _victim(tmp_path)
    os.symlink(victim, str(path) + ".tmp")  # the former fixed temporary name
    os.symlink(victim, path)
    monkeypatch.setattr(os, "umask", lambda *a: (_ for _ in ()).throw(AssertionError("umask")))
    tensors, meta = tiny_policy(make_core("racko", 2))
    save_policy(str(path), tensors, meta)
    assert victim.read_text() == "secret" and not path.is_symlink()
    os.chmod(path, 0o600)
    save_policy(str(path), tensors, meta)
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert set(load_policy(str(path))[0]) == set(tensors)


def test_expert_iteration_state_refuses_a_planted_data_name(tmp_path):
    """A2: the data set is written through the writer, never through a link at its old fixed temporary name."""
    from deckgym.training import expert_iteration

    victim = _victim(tmp_path)
    os.symlink(victim, tmp_path / "expert_data.tmp.npz")
    os.symlink(victim, tmp_path / expert_iteration.DATA)

    class Data:
        obs = masks = actions = returns = valid = np.zeros(3)

    saved = []
    monkey_model = type("M", (), {})()
    import deckgym.agents.ppo as ppo

    real = ppo.save_model
    ppo.save_model = lambda model, path, meta: saved.append(path)
    try:
        expert_iteration._save_state(str(tmp_path), monkey_model, {}, Data(), {"iteration": 1})
    finally:
        ppo.save_model = real
    assert victim.read_text() == "secret" and saved
    with np.load(tmp_path / expert_iteration.DATA) as z:
        assert z["obs"].shape == (3,)


def test_concurrent_writers_each_leave_a_whole_file(tmp_path):
    path = tmp_path / "r.json"

    def writer(k):
        for _ in range(20):
            write_json(path, {"k": k, "pad": "x" * 10_000})

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert json.loads(path.read_text())["k"] in range(4) and os.listdir(tmp_path) == ["r.json"]



def test_the_learning_curve_chart_replaces_a_link_at_out(tmp_path):
    """A4: ``python -m deckgym.training.curves --out`` through the writer."""
    pytest.importorskip("matplotlib")
    from deckgym.training.curves import main

    evals = [{"minutes": m, "arena": {"random": {"win_rate": w, "ci_low": w - 0.1, "ci_high": w + 0.1}}}
             for m, w in ((1.0, 0.4), (2.0, 0.6))]
    write_json(tmp_path / "evals.json", evals)
    victim = _victim(tmp_path)
    os.symlink(victim, tmp_path / "c.png")
    main([str(tmp_path / "evals.json"), "--out", str(tmp_path / "c.png")])
    assert victim.read_text() == "secret" and (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_the_torchrl_example_refuses_a_run_folder_that_exists(tmp_path):
    """A4: the run folder is made afresh: one planted (or a link to another folder) is refused before any write."""
    pytest.importorskip("torchrl")
    from deckgym.training.torchrl_ppo import Config, train

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(_victim(tmp_path), elsewhere / "config.json")
    os.symlink(elsewhere, tmp_path / "smoke")
    with pytest.raises(ValueError, match="--run-name .*smoke: already exists"):
        train(Config(num_envs=8, n_steps=8, runs=str(tmp_path), run_name="smoke"))
    assert (tmp_path / "victim").read_text() == "secret" and sorted(os.listdir(elsewhere)) == ["config.json"]
