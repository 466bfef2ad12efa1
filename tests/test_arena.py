"""The arena, the tournament, the demo job and the eval/rules/bench CLI."""

import json

import numpy as np
import pytest
from deckgym.registration import GAMES as REGISTERED  # every game: a new one joins these tests by registering

from deckgym.cli import main as cli
from deckgym.evaluation.arena import evaluate, save_chart
from deckgym.evaluation.ratings import bradley_terry_elo, wilson_interval
from deckgym.evaluation.demo import lineup
from deckgym.evaluation.tournament import short_name, tournament


def test_wilson_interval_contains_the_rate_and_narrows():
    lo, hi = wilson_interval(60, 100)
    assert lo < 0.6 < hi
    lo2, hi2 = wilson_interval(600, 1000)
    assert lo < lo2 < 0.6 < hi2 < hi
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_bradley_terry_orders_by_strength_and_centres_on_1500():
    # a beats b 80%, b beats c 80%
    pair = np.array([[0, 80, 90], [20, 0, 80], [10, 20, 0]], dtype=float)
    r = bradley_terry_elo(pair)
    assert r[0] > r[1] > r[2]
    assert abs(r.mean() - 1500) < 1e-6
    # an unbeaten agent still gets a finite rating (virtual draws)
    assert np.isfinite(bradley_terry_elo(np.array([[0, 10.0], [0, 0]]))).all()


def test_duplicate_deals_rotate_seats_and_count_every_game():
    rep = evaluate("racko", ["random", "racko:bucket"], deals=30, seed=1, rules_kwargs={"max_turns": 40})
    by = {a.name: a for a in rep.agents}
    assert by["random"].games == by["racko:bucket"].games == 60  # 30 deals x 2 seatings
    # every game has at least one winner share, and shares add up to the games played
    assert by["random"].wins + by["racko:bucket"].wins == pytest.approx(60)
    assert rep.lineup == ["random", "racko:bucket"]


def test_same_seed_same_table_bit_for_bit_and_other_seed_differs():
    kw = dict(deals=40, players=4, rules_kwargs={"max_turns": 30})
    a = evaluate("leastscore", ["leastscore:greedy", "random"], seed=5, **kw).to_json()
    b = evaluate("leastscore", ["leastscore:greedy", "random"], seed=5, **kw).to_json()
    c = evaluate("leastscore", ["leastscore:greedy", "random"], seed=6, **kw).to_json()
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a) != json.dumps(c)


def _by_name(report):
    return {a["name"]: a for a in report.to_json()["agents"]}


@pytest.mark.parametrize("game, first, second, players", [
    ("racko", ["racko:sequence", "racko:ranges"], ["racko:ranges", "racko:sequence"], 2),
    ("leastscore", ["leastscore:greedy", "random"], ["random", "leastscore:greedy"], 2),
    # 4 seats: any rotation of the lineup seats the same deals alike, a spec appearing twice included
    ("racko", ["racko:sequence", "random", "racko:ranges", "random"],
     ["racko:ranges", "random", "racko:sequence", "random"], 4),
    ("leastscore", ["random", "leastscore:greedy", "leastscore:greedy", "leastscore:greedy"],
     ["leastscore:greedy", "leastscore:greedy", "random", "leastscore:greedy"], 4),
])
def test_the_order_agents_are_listed_in_does_not_change_the_table(game, first, second, players):
    # agents with random tie-breaks on many shared deals: a seeding by lineup position shows here
    kw = dict(deals=60, seed=3, players=players, batch=64)
    a = evaluate(game, first, **kw)
    b = evaluate(game, second, **kw)
    assert _by_name(a) == _by_name(b)  # every figure, bit for bit (floats compared exactly)
    assert [r.name for r in a.agents] == list(dict.fromkeys(first))  # reported in the order given
    assert [r.name for r in b.agents] == list(dict.fromkeys(second))


def test_last_spec_fills_the_table_and_stats_are_per_seat():
    rep = evaluate("racko", ["racko:sequence", "random"], deals=10, seed=0, players=4)
    by = {a.name: a for a in rep.agents}
    assert rep.lineup == ["racko:sequence", "random", "random", "random"]
    assert by["racko:sequence"].games == 40 and by["random"].games == 120


def test_matches_score_whole_matches():
    rep = evaluate("racko", ["racko:sequence", "racko:bucket"], deals=4, seed=0, matches=True,
                   rules_kwargs={"target_score": 150})
    assert rep.matches and sum(a.games for a in rep.agents) == 16  # 4 deals x 2 seatings x 2 seats
    # a match is several rounds: mean points per round are round points, not match totals
    assert all(0 < a.mean_points <= 75 for a in rep.agents)


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="valid agents: .*racko:sequence"):
        evaluate("racko", ["racko:nope", "random"], deals=2)
    with pytest.raises(ValueError, match="leastscore:counting"):
        evaluate("racko", ["leastscore:counting", "random"], deals=2)  # another game's agent
    with pytest.raises(ValueError, match="valid games"):
        evaluate("chess", ["random"], deals=2)
    with pytest.raises(ValueError, match="at most one agent per seat"):
        evaluate("racko", ["random"] * 3, deals=2, players=2)
    with pytest.raises(ValueError, match="deals"):
        evaluate("racko", ["random", "random"], deals=0)


def test_json_and_chart_are_written(tmp_path):
    rep = evaluate("racko", ["racko:ranges", "random"], deals=8, seed=0, rules_kwargs={"max_turns": 60})
    path = tmp_path / "chart.png"
    save_chart(rep, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    d = rep.to_json()
    for row in d["agents"]:
        assert {"name", "games", "win_rate", "ci_low", "ci_high", "mean_points", "rating"} <= set(row)
        assert row["ci_low"] <= row["win_rate"] <= row["ci_high"]


def test_arena_and_tournament_json_share_one_schema_with_the_rules_as_fields(tmp_path):
    from deckgym.registration import game
    from deckgym.evaluation.arena import save_json

    kw = dict(deals=4, seed=0, rules_kwargs={"max_turns": 40})
    arena = evaluate("leastscore", ["leastscore:greedy", "random"], players=4, **kw)
    cup = tournament("leastscore", ["leastscore:greedy", "random", "leastscore:counting"], players=4, **kw)
    for report, name in ((arena, "a.json"), (cup, "t.json")):
        save_json(report, str(tmp_path / name))
    a, t = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "t.json"))
    assert set(t) - set(a) == {"pairs"} and set(a) <= set(t)
    assert set(a["agents"][0]) == set(t["agents"][0])
    for d in (a, t):
        assert isinstance(d["rules"], dict) and d["rules"]["max_turns"] == 40 and d["players"] == 4
        # the fields rebuild the very rules that were played
        assert game("leastscore").make_rules(**d["rules"]) == game("leastscore").make_rules(num_players=4, max_turns=40)
    by = {r["name"]: r for r in t["agents"]}
    assert by["random"]["games"] == 2 * 4 * 4 * 2  # two pairs, 4 deals, 4 seatings, 2 seats of 4
    # each game's win shares add up to one, so the agents' wins are the pairs' games
    assert sum(r["wins"] for r in t["agents"]) == pytest.approx(sum(p["games"] for p in t["pairs"]))
    assert cup.ratings == {r["name"]: r["rating"] for r in t["agents"]}


def test_rating_chart_bars_start_at_the_mean_and_carry_their_values(tmp_path, monkeypatch):
    import matplotlib.figure

    from deckgym.evaluation.tournament import save_tournament_chart

    seen = []
    real = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: (seen.append(fig), real(fig, *a, **k)))
    rep = tournament("racko", ["random", "racko:bucket", "racko:ranges"], deals=6, seed=0, rules_kwargs={"max_turns": 60})
    save_tournament_chart(rep, str(tmp_path / "t.png"))
    bars_ax = next(ax for ax in seen[0].axes if ax.get_title().startswith("rating"))
    lefts = {round(b.get_x(), 6) for b in bars_ax.patches}
    assert lefts == {1500.0}  # every bar grows from the mean rating, not from the axis' edge
    texts = {t.get_text().strip() for t in bars_ax.texts}
    assert {f"{r:.0f}" for r in rep.ratings.values()} <= texts
    lo, hi = bars_ax.get_xlim()
    assert lo < min(rep.ratings.values()) and hi > max(rep.ratings.values())


def test_tournament_cross_table_is_consistent():
    rep = tournament("racko", ["random", "racko:bucket", "racko:ranges"], deals=10, seed=0,
                     rules_kwargs={"max_turns": 60})
    assert len(rep.pairs) == 3
    for p in rep.pairs:
        assert 0.0 <= p.ci_low <= p.share_a <= p.ci_high <= 1.0
    assert rep.ratings["racko:ranges"] > rep.ratings["random"]
    text = rep.table()
    assert "racko:ranges" in text and "rating" in text


@pytest.mark.parametrize("spec, short", [
    ("ppo:models/racko_2p.safetensors", "ppo:racko_2p"),
    ("ppo:models/racko_2p_rllib.safetensors?deterministic=false", "ppo:racko_2p_rllib"),
    ("rllib:runs/x/model/?allow_pickle=true", "rllib:model"),
    ("ppo:old/racko_2p.zip?allow_pickle=true", "ppo:racko_2p"),
    ("racko:lookahead", "racko:lookahead"),
])
def test_short_names_of_models_fit_the_column_headers(spec, short):
    assert short_name(spec) == short


def _columns(line: str) -> list[int]:
    """Where each space-separated field of a table line ends."""
    ends, inside = [], False
    for i, ch in enumerate(line + " "):
        if ch == " " and inside:
            ends.append(i)
        inside = ch != " "
    return ends


def test_arena_table_stays_aligned_past_30_character_names():
    rep = evaluate("racko", ["random", "ppo:models/../models/racko_2p.safetensors"], deals=2, seed=0)
    rows = rep.table().splitlines()[1:]
    assert len({len(r) for r in rows}) == 1  # every row as wide as the header
    assert len({tuple(_columns(r)[-6:]) for r in rows[1:]}) == 1  # each number ends where the others do


def test_tournament_labels_rows_and_columns_alike_and_stays_aligned():
    rep = tournament("racko", ["random", "ppo:models/racko_2p.safetensors", "racko:bucket"], deals=2, seed=0)
    head, *rows = rep.table().splitlines()[2:]
    assert len({len(r) for r in [head, *rows]}) == 1
    labels = head.split()[:-1]
    assert sorted(labels) == sorted(r.split()[0] for r in rows) == ["ppo:racko_2p", "racko:bucket", "random"]
    ends = _columns(head)
    for r in rows:  # each cell ends under its column label
        assert set(ends) <= set(_columns(r))


def test_demo_lineup_finds_shipped_models(tmp_path):
    (tmp_path / "racko_2p_v1.safetensors").write_bytes(b"")
    (tmp_path / "racko_2p_v0.zip").write_bytes(b"")  # a pickled model is not taken
    (tmp_path / "racko_4p.safetensors").write_bytes(b"")
    specs = lineup("racko", 2, str(tmp_path))
    assert specs[0] == "random" and "racko:sequence" in specs and "racko:search" not in specs
    assert specs[-1] == f"ppo:{tmp_path / 'racko_2p_v1.safetensors'}" and not any(".zip" in s for s in specs)
    assert not any("4p" in s for s in specs)


def test_cli_eval_writes_json_and_chart(tmp_path, capsys):
    out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
    rc = cli(["eval", "racko", "racko:bucket", "random", "--games", "6", "--seed", "2", "--quiet",
              "--rule", "max_turns=50", "--json", str(out_json), "--chart", str(out_png)])
    assert rc == 0
    assert "racko:bucket" in capsys.readouterr().out
    assert {a["name"] for a in json.loads(out_json.read_text())["agents"]} == {"racko:bucket", "random"}
    assert out_png.exists()


def test_cli_errors_are_one_line(capsys):
    assert cli(["eval", "racko", "racko:nope", "--games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "valid agents" in err
    assert cli(["rules", "racko", "--rule", "partners=true"]) == 2  # partners needs 4 players
    assert "partners" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli(["eval", "racko", "random", "--games", "lots"])  # argparse: bad flag value
    with pytest.raises(ValueError):
        cli(["--debug", "eval", "racko", "racko:nope", "--games", "2"])  # --debug re-raises


def test_cli_rules_prints_every_field(capsys):
    assert cli(["rules", "leastscore", "--rule", "elimination_score=50"]) == 0
    out = capsys.readouterr().out
    assert "elimination_score" in out and "= 50" in out and "sequence_lengths" in out


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_cli_rules_describes_every_field_and_the_bounds_are_the_checked_ones(capsys, name):
    from deckgym.registration import game
    from deckgym.rules import rule_docs

    cls = game(name).rules_class()
    docs = rule_docs(cls)
    assert cli(["rules", name]) == 0
    lines = capsys.readouterr().out.splitlines()
    for field, doc in docs.items():
        assert len(doc) > 10
        assert any(line.split()[:1] == [field] and line.endswith(doc) for line in lines), field
    # the cap the description gives is the one the rules enforce, at both ends
    low, high = (int(x) for x in docs["max_turns"].rsplit(" ", 1)[1].split(".."))
    cls(max_turns=low), cls(max_turns=high)
    for bad in (low - 1, high + 1):
        with pytest.raises(ValueError, match="max_turns"):
            cls(max_turns=bad)


def test_cli_bench_runs_and_writes_json(tmp_path, capsys):
    path = tmp_path / "b.json"
    assert cli(["bench", "racko", "--seconds", "0.05", "--batches", "8", "--no-baselines", "--json", str(path)]) == 0
    d = json.loads(path.read_text())
    assert d["agent_steps_per_second"]["core B=8"] > 0 and d["state_bytes_per_game"] <= 256
    assert "features v1 B=128" not in d["agent_steps_per_second"]  # only with --features


@pytest.mark.parametrize("game", sorted(n for n, e in REGISTERED.items() if e.spec.features is not None))
def test_cli_bench_features_times_every_supported_version(tmp_path, game):
    from deckgym.registration import game as game_entry

    path = tmp_path / "f.json"
    assert cli(["bench", game, "--seconds", "0.02", "--batches", "8", "--no-baselines", "--features", "--json", str(path)]) == 0
    figures = json.loads(path.read_text())["agent_steps_per_second"]
    versions = game_entry(game).features().SUPPORTED_VERSIONS
    assert [k for k in figures if k.startswith("features")] == [f"features v{v} B=128" for v in versions]
    assert all(figures[f"features v{v} B=128"] > 0 for v in versions)


def test_progress_advances_while_the_games_are_played():
    calls = []
    evaluate("racko", ["racko:bucket", "random"], deals=30, seed=0, progress=calls.append,
             rules_kwargs={"max_turns": 60})  # one chunk: a bar fed per chunk would jump from 0 to 100%
    assert sum(calls) == 60 and len(calls) > 3
