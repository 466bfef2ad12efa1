"""The command line in a user's first hour: missing extras named before any work, progress that
moves with slow agents, and the small texts (rules, replay counts, model hints)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from deckgym.registration import GAMES as REGISTERED  # every game: a new one joins these tests by registering

from deckgym.cli import main as cli
from deckgym.evaluation.arena import evaluate
from deckgym.evaluation.progress import ArenaProgress

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# A fresh interpreter in which the named top-level modules cannot be found, as on a machine
# without the extra; each command runs in it with those modules blocked.
BLOCKED_RUN = """
import sys
class Block:
    names = set()
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
from deckgym.cli import main
for blocked, argv in CASES:
    Block.names = {blocked}
    print("RESULT", blocked, main(argv), flush=True)
"""


def test_a_missing_extra_is_named_before_any_work(tmp_path):
    cases = [
        ("torch", ["eval", "racko", f"ppo:{ROOT / 'models' / 'racko_2p.safetensors'}", "random", "--games", "2"]),
        ("torch", ["train", "racko", "--runs", str(tmp_path / "runs")]),
        ("pygame", ["bench", "racko", "--seconds", "0.1"]),
        ("matplotlib", ["eval", "racko", "racko:lookahead", "racko:sequence", "--games", "2000",
                        "--chart", str(tmp_path / "c.png")]),
    ]
    code = f"CASES = {cases!r}\n" + BLOCKED_RUN
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, cwd=tmp_path,
                         timeout=300)
    results = [line.split() for line in res.stdout.splitlines() if line.startswith("RESULT")]
    assert [r[1:3] for r in results] == [[m, "2"] for m, _ in cases], res.stdout + res.stderr
    errors = [line for line in res.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 4, res.stderr
    for (module, _), line, extra in zip(cases, errors, ("train", "train", "bench", "charts")):
        assert f"pip install 'deckgym[{extra}]'" in line and repr(module) in line, line
    assert "--no-baselines" in errors[2]
    assert not (tmp_path / "runs").exists()  # train refused before creating its folder
    assert "duplicate deals" not in res.stdout  # --chart refused before the evaluation (it printed its table first)


def test_the_arena_reports_decisions_between_finished_games():
    calls, finished = [], []
    evaluate("racko", ["racko:sequence", "racko:ranges"], deals=8, seed=0, progress=finished.append,
             decisions=lambda n, f: calls.append((n, f, sum(finished))))
    # every game is played at once: before the first one ends, many decisions were reported
    assert sum(1 for n, f, games in calls if games == 0) > 10
    assert sum(f for _, f, _ in calls) == sum(n for n, _, _ in calls)  # every decision belongs to a finished game
    assert sum(finished) == 16


def test_the_progress_estimate_moves_with_decisions_and_ends_at_one():
    out = io.StringIO()
    bar = ArenaProgress("racko", 4, game="racko", players=2, out=out, tty=False)  # a game: about 40 decisions
    assert bar.fraction() == 0.0
    bar.decisions(80)  # 4 games, none finished: 80 of about 160 decisions
    assert bar.fraction() == pytest.approx(0.5)
    bar.decisions(200)  # longer than expected: close to, never at, 100% while games run
    assert 0.9 < bar.fraction() < 1.0
    bar.games(2)
    bar.decisions(0, 200)  # two games finished after 100 decisions each: the rest should take as many
    assert bar.fraction() == pytest.approx(280 / 400)
    bar.games(2)
    assert bar.fraction() == 1.0
    games_only = ArenaProgress("ray", 10, out=io.StringIO(), tty=False)  # chunks on Ray: finished games only
    games_only.games(5)
    assert games_only.fraction() == 0.5


def test_a_round_robin_bar_weighs_its_pairs_by_their_cost():
    """make demo: a cheap first pair (weight 1) and a costly second one (weight 9). When the cheap
    pair is done, 10% of the work is done, not half of it: the time left is then about nine times
    the time spent, where a bar counting games would promise as much again."""
    from deckgym.evaluation.demo import pair_weights

    assert pair_weights([1.0, 3.0, 5.0]) == [2.0, 3.0, 4.0]  # (0,1), (0,2), (1,2), as the tournament plays them
    bar = ArenaProgress("demo", 8, game="racko", players=2, out=io.StringIO(), tty=False, stage_weights=[1.0, 9.0])
    bar.decisions(80)  # half of the cheap pair's expected decisions (4 games of about 40)
    assert bar.fraction() == pytest.approx(0.5 * 0.1, rel=0.01)
    bar.decisions(80, 160)  # the arena reports the finished games' decisions, then the games
    bar.games(4)
    assert bar.fraction() == pytest.approx(0.1)
    bar.decisions(80)  # half of the costly pair
    assert bar.fraction() == pytest.approx(0.1 + 0.9 * 0.5, rel=0.01)
    bar.games(4)
    assert bar.fraction() == 1.0


def test_the_eval_bar_moves_before_the_first_game_ends(capsys, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    assert cli(["eval", "racko", "racko:lookahead", "racko:sequence", "--games", "20"]) == 0
    shown = [part.strip() for part in err.getvalue().split("\r") if part.strip()]
    # the bar counts decisions (the estimate itself: the tests above); a games-only bar had none
    moving = [s for s in shown if " decisions, " in s]
    assert moving and not moving[0].split("] ")[1].startswith("0%"), shown


def test_rules_print_plain_text_without_pointing_at_themselves(capsys):
    for game in REGISTERED:
        assert cli(["rules", game]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "``" not in out and ":class:" not in out and "deckgym rules" not in out
        assert "ValueError naming the field" in out


def test_replay_games_help_and_message_say_what_is_written(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli(["eval", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(default: 5, or --games if fewer)" in help_text and "(default 5) (default: None)" not in help_text
    assert "K x players files" in help_text
    folder = tmp_path / "replays"
    assert cli(["eval", "racko", "racko:bucket", "random", "--games", "4", "--replays", str(folder),
                "--replay-games", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert len(list(folder.iterdir())) == 6
    assert f"wrote 6 replays to {folder}: 3 deals x 2 seatings (every deal is played once per seating)" in out
    assert cli(["eval", "racko", "random", "--games", "2", "--replay-games", "1"]) == 2  # still needs --replays


def test_the_text_view_counts_one_card():
    from racko_env import env

    e = env(render_mode="ansi")
    e.reset(seed=0)  # R3: one card turned up
    text = e.render()
    assert "discard pile: 1 card (top" in text and "1 cards" not in text


def test_model_hints_name_the_file_and_the_table_size(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    import shutil

    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    shutil.copy(ROOT / "models" / "racko_2p.safetensors", run / "best.safetensors")
    assert cli(["eval", "racko", f"ppo:{run}", "random", "--games", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "is a folder, not a model file" in err and f"did you mean ppo:{run / 'best.safetensors'}?" in err
    assert cli(["eval", "racko", f"ppo:{ROOT / 'models' / 'racko_4p.safetensors'}", "random", "--games", "1", "--quiet"]) == 2
    assert "(the model plays 4 players: --players 4)" in capsys.readouterr().err


def test_the_demo_names_a_model_cloned_from_a_heuristic():
    pytest.importorskip("sb3_contrib")
    from deckgym.evaluation.arena import AgentResult
    from deckgym.evaluation.demo import model_notes

    spec = f"ppo:{ROOT / 'models' / 'leastscore_4p.safetensors'}"

    class Report:
        agents = [AgentResult("leastscore:dp", 100, 30.0, 0.3, 0.2, 0.4, 7.0, 1500.0),
                  AgentResult(spec, 100, 30.0, 0.3, 0.2, 0.4, 7.0, 1500.0)]

    notes = model_notes(["leastscore:dp", spec], Report())
    assert notes == [f"{spec} is a behaviour clone of leastscore:dp, then PPO: here it plays as its teacher "
                     "(the same row as leastscore:dp)"]
    Report.agents[1] = AgentResult(spec, 100, 40.0, 0.4, 0.3, 0.5, 6.0, 1550.0)
    assert model_notes(["leastscore:dp", spec], Report()) == [f"{spec} is a behaviour clone of leastscore:dp, then PPO"]
    assert model_notes(["leastscore:dp", "random"], Report()) == []
