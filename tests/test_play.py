"""Human play in the terminal (``deckgym.evaluation.play``, ``deckgym play``): scripted games against
every heuristic run to their end, moves are taken by number and by name, invalid input is
re-asked, end of input leaves cleanly, and nothing hidden is ever printed (checked against
the game state at every write). Hand-built deals check what a first-time player reads: the card
the deck gave, one word per meaning (hand value, score), lines folded at spaces, the card range,
the person's own turn count and the dead pile."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

from deckgym.cli import main as cli_main
from leastscore_env.cards import NUM_CARDS, card_str, parse_card
from racko_env.terminal import RackoText
from deckgym.evaluation.play import PlaySession
from deckgym.terminal import normalize

LS_CARD = re.compile(r"(?:10|[2-9AJQK])[\u2663\u2666\u2665\u2660]")
RACKO_CARD = re.compile(r"<(\d+)>")


class Leak(AssertionError):
    pass


class CheckedOutput(io.StringIO):
    """Records the output; at every write checks that each card it names is public or the
    human's own, against ``session.state`` at that moment."""

    def __init__(self) -> None:
        super().__init__()
        self.session: PlaySession | None = None
        self.cards_checked = 0
        self.known_lines_checked = 0
        self.ever_public: set[int] = set()  # cards that were public to the human at some point
        self.revealing = False  # inside the hands shown at the end of a round (public then, R8 / L7)
        self.revealed_lines = 0

    def watch(self, session: PlaySession) -> None:
        """Track what is public before and after every step (in a match the round's last step
        already deals the next round, so the end-of-round text is checked against the past)."""
        self.session = session
        step = session.core.step

        def watched(state, actions):
            if state is session.state:
                self.ever_public |= allowed_cards(session)
            res = step(state, actions)
            if state is session.state and not res.round_over[0]:
                self.ever_public |= allowed_cards(session)
            return res

        session.core.step = watched

    def write(self, written: str) -> int:
        text = unwrap(written)  # the checks read a folded line as one
        if text.startswith(("Racks shown:", "Hands shown:")):
            self.revealing = True
        elif self.revealing and text.startswith("  "):
            self.revealed_lines += 1
            if self.session is not None and not self.session.match:  # the round's last state is the state
                check_revealed(self.session, text)
        else:
            self.revealing = False
            if self.session is not None and self.session.state is not None:
                check_public(self.session, text, self)
        return super().write(written)


def unwrap(text: str) -> str:
    """A line as written, its folds (a new line and the continuation indent) undone."""
    return re.sub(r"\n +", " ", text)


def allowed_cards(s: PlaySession) -> set[int]:
    """Cards the human may see now: its own, and every card that was face up this round
    (read from ``core.state_dict``, the full state)."""
    d, me = s.core.state_dict(s.state, 0), s.seat
    if s.game == "racko":
        own = set(d["racks"][me])
        if d["hand"] and d["player"] == me:
            own.add(d["hand"])
        return own | set(d["seen"])
    return {parse_card(c) for c in d["hands"][me] + d["seen"]}


def check_revealed(s: PlaySession, line: str) -> None:
    """A line of the hands shown at the end of a round holds that player's cards as the round ended."""
    seat = int(re.search(r"player_(\d+)", line).group(1))
    d = s.core.state_dict(s.state, 0)
    if s.game == "racko":
        assert [int(x) for x in RACKO_CARD.findall(line)] == d["racks"][seat], line
    else:
        assert sorted(parse_card(x) for x in LS_CARD.findall(line)) == sorted(parse_card(c) for c in d["hands"][seat]), line


def hidden_cards(s: PlaySession) -> set[int]:
    """Cards no player but their holder has seen: opponents' unknown cards and the draw pile."""
    st, core = s.state, s.core
    if s.game == "racko":
        everything = set(range(1, core.deck_size + 1))
    else:
        everything = set(range(NUM_CARDS))
    return everything - allowed_cards(s)


def check_public(s: PlaySession, text: str, out: CheckedOutput) -> None:
    st, core, P = s.state, s.core, s.core.num_players
    if s.game == "racko":
        cards = [int(x) for x in RACKO_CARD.findall(text)]
    else:
        cards = [parse_card(x) for x in LS_CARD.findall(text)]
    bad = set(cards) & hidden_cards(s) - out.ever_public
    if bad:
        raise Leak(f"hidden card(s) {sorted(bad)} printed in {text!r}")
    out.cards_checked += len(cards)
    # "what is known" lines: exactly the publicly known cards of that opponent
    for line in text.splitlines():
        m = re.match(r"\s+player_(\d+) \([^)]*\): (.*)$", line)
        if not m or "round points" in line:
            continue
        opp, rest = int(m.group(1)), m.group(2)
        d = core.state_dict(st, 0)
        if s.game == "racko":
            listed = {int(k): int(c) for k, c in re.findall(r"slot (\d+) = <(\d+)>", rest)}
            truth = {k: d["racks"][opp][k - 1] for k in d["known_slots"][opp]}
        else:
            if "eliminated" in rest:
                continue
            listed = sorted(parse_card(x) for x in LS_CARD.findall(rest.split("known:")[-1])) \
                if "known:" in rest else []
            truth = sorted(parse_card(c) for c in d["known"][opp])
            size = int(re.search(r"(\d+) cards?", rest).group(1))
            assert size == len(d["hands"][opp]), line
        assert listed == truth, f"{line!r}: listed {listed}, publicly known {truth}"
        out.known_lines_checked += 1


@pytest.fixture
def marked_racko_cards(monkeypatch):
    """Rack-O cards printed as ``<37>`` so that the leak check can tell them from slot numbers."""
    monkeypatch.setattr(RackoText, "card", staticmethod(lambda c: f"<{int(c)}>"))


def offered_moves(text: str) -> list[str]:
    block = text[text.rindex("Moves:\n") + len("Moves:\n"):]
    names = []
    for line in block.splitlines():
        m = re.match(r"\s+(\d+)\. (.*)$", line)
        if not m:
            break
        names.append(m.group(2))
    return names


class Scripted:
    """An input function that plays random offered moves, alternately by number and by
    name (Least Score names typed in ASCII, e.g. ``discard 3c 4d``), and now and then types
    something invalid first, checking that it is refused and asked again."""

    def __init__(self, out: CheckedOutput, seed: int, invalid_every: int = 7, limit: int = 5000) -> None:
        self.out, self.rng = out, np.random.default_rng(seed)
        self.n = 0
        self.invalid_every = invalid_every
        self.pending_invalid: str | None = None
        self.refusals = 0
        self.by_number = self.by_name = 0
        self.limit = limit

    def __call__(self, prompt: str = "") -> str:
        text = self.out.getvalue()
        if self.pending_invalid is not None:
            tail = text[text.rindex("Your move> ", 0, len(text) - 1):]
            assert "Not a move:" in tail, f"invalid input {self.pending_invalid!r} was not refused: {tail!r}"
            # one line of reason (maybe folded: its continuations are indented), then the prompt again
            assert len([x for x in tail.strip().splitlines() if not x.startswith(" ")]) == 2, tail
            self.refusals += 1
            self.pending_invalid = None
        self.n += 1
        assert self.n < self.limit, "game did not end"
        if self.n % self.invalid_every == 0:
            self.pending_invalid = ["zzz", "0", "99", "slot 42", "q?", ""][self.n // self.invalid_every % 6]
            return self.pending_invalid
        moves = offered_moves(text)
        k = int(self.rng.integers(len(moves)))
        if self.n % 2:
            self.by_number += 1
            return str(k + 1)
        self.by_name += 1
        name = moves[k]
        return normalize(name) if self.n % 4 == 0 else name


def run_scripted(game, vs, seed, **kw):
    out = CheckedOutput()
    s = PlaySession(game, vs, seed=seed, output=out, input_fn=None, **kw)
    script = Scripted(out, seed)
    s.input_fn = script
    out.watch(s)
    result = s.run()
    return s, out, script, result


@pytest.mark.parametrize("opponent", ["racko:bucket", "racko:ranges", "racko:sequence"])
def test_racko_round_against_each_heuristic(marked_racko_cards, opponent):
    s, out, script, result = run_scripted("racko", [opponent], seed=7, rules_kwargs={"max_turns": 80})
    text = out.getvalue()
    assert not result["quit"] and "=== End of round 1 ===" in text
    assert result["winners"] and len(result["round_points"]) == 2
    assert script.by_number > 5 and script.by_name > 5 and script.refusals >= 3
    assert out.cards_checked > 100 and out.known_lines_checked > 5
    assert "Since your last turn:" in text and f"player_1 ({opponent})" in text
    assert re.search(r"player_1 (took the discard <\d+>|drew from the pile) and (put it in slot \d+|discarded)", text)


def _score_columns(text: str) -> set[tuple[int, int]]:
    return {(line.index("round points"), line.rindex("score")) for line in text.splitlines() if "round points" in line}


def test_racko_end_of_round_shows_every_rack_and_lines_up_the_scores(marked_racko_cards):
    for seed in (7, 8):
        s, out, script, result = run_scripted("racko", ["racko:sequence"], seed=seed, rules_kwargs={"max_turns": 80})
        text = out.getvalue()
        assert "Racks shown:" in text and out.revealed_lines == 2  # checked against the final racks
        assert len(_score_columns(text)) == 1, text[text.rindex("=== End"):]
        assert "up to slot" not in text and re.search(r"slots 1-\d+ increase, slot \d+ breaks the order|"
                                                      r"slot 2 is already lower than slot 1|all 10 cards", text)


@pytest.mark.parametrize("n, words", [(1, "only slot 1 counts"), (4, "slots 1-4 increase, slot 5 breaks"),
                                      (10, "all 10 cards")])
def test_racko_order_line_says_what_counts(n, words):
    assert words in RackoText.order_text(n)


def test_leastscore_end_of_round_shows_the_hands():
    s, out, script, result = run_scripted("leastscore", ["leastscore:counting"], seed=11)
    text = out.getvalue()
    assert "Hands shown:" in text and out.revealed_lines == 4
    assert len(_score_columns(text)) == 1


def test_renders_say_how_a_round_ended():
    import leastscore_env
    import racko_env

    for env, words in ((racko_env.env(num_players=2, render_mode="ansi", max_turns=2), "capped at 2 turns"),
                       (leastscore_env.env(render_mode="ansi", max_turns=3), "capped at 3 turns")):
        env.reset(seed=1)
        for _ in env.agent_iter():
            obs, *_, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        text = env.render()
        assert words in text and "to play" not in text and "choose" not in text
        assert not re.search(r"^>", text, re.M)  # nobody marked to move


def test_leastscore_render_marks_the_declarer():
    import leastscore_env
    from leastscore_env.state import DECLARE

    env = leastscore_env.env(render_mode="ansi")
    env.reset(seed=4)
    for agent in env.agent_iter():
        obs, *_, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(DECLARE if DECLARE in legal else int(legal[0]))
    text = env.render()
    declarer = int(re.search(r"over: player_(\d+) declared", text).group(1))
    assert re.search(rf"^D player_{declarer}:", text, re.M)


@pytest.mark.parametrize("opponent", ["leastscore:greedy", "leastscore:counting"])
def test_leastscore_round_against_each_heuristic(opponent):
    s, out, script, result = run_scripted("leastscore", [opponent], seed=11)
    text = out.getvalue()
    assert s.core.num_players == 4  # the game's default table, the last --vs fills it
    assert not result["quit"] and "=== End of round 1 ===" in text
    assert script.by_number >= 1 and script.by_name >= 1 and script.by_number + script.by_name >= 4
    assert out.cards_checked > 30 and out.known_lines_checked > 5
    assert re.search(r"player_\d discarded (\S+ )+and took (the deck|\S+ from the floor)", text)
    assert "declared" in text or "Nobody declared" in text


def test_racko_match_and_seats(marked_racko_cards):
    s, out, script, result = run_scripted("racko", ["racko:bucket", "racko:sequence"], seed=3, players=3, seat=1,
                                          match=True, rules_kwargs={"target_score": 100, "max_turns": 40})
    assert s.specs == {2: "racko:bucket", 0: "racko:sequence"}
    assert not result["quit"] and max(result["total_points"]) >= 100 and result["rounds"] >= 1
    assert "you (player_1)" in out.getvalue()


def test_leastscore_match_to_the_end():
    s, out, script, result = run_scripted("leastscore", ["leastscore:counting"], seed=2, players=3, match=True,
                                          rules_kwargs={"elimination_score": 25})
    text = out.getvalue()
    assert not result["quit"]
    assert "wins the match" in text or "win the match" in text or "share the win of the match" in text
    assert "eliminated (L9)" in text


def test_leak_check_can_fail(marked_racko_cards):
    """The checker itself: an opponent's unseen card or a wrong 'known' line is caught."""
    s = PlaySession("racko", ["racko:sequence"], seed=1)
    s.state = s.core.init(1, 1)
    out = CheckedOutput()
    hidden = sorted(hidden_cards(s))
    opp_card = s.core.state_dict(s.state)["racks"][1][0]
    assert opp_card in hidden
    with pytest.raises(Leak):
        check_public(s, f"player_1 drew <{opp_card}>", out)
    with pytest.raises(AssertionError):
        check_public(s, f"  player_1 (racko:sequence): slot 1 = <{opp_card}>; other slots unknown", out)
    check_public(s, f"your card <{s.core.state_dict(s.state)['racks'][0][0]}>", out)  # own cards are fine
    ls = PlaySession("leastscore", ["leastscore:counting"], seed=1)
    ls.state = ls.core.init(1, 1)
    opp = parse_card(ls.core.state_dict(ls.state)["hands"][2][0])
    with pytest.raises(Leak):
        check_public(ls, "floor: " + card_str(opp, symbols=True), out)


def test_invalid_input_reasons():
    out = io.StringIO()
    answers = iter(["", "0", "42", "hello", "take", "?", "1", "q"])
    s = PlaySession("racko", ["racko:sequence"], seed=5, output=out, input_fn=lambda p="": next(answers))
    result = s.run()
    text = out.getvalue()
    assert result["quit"] and "You quit: leaving the game" in text
    reasons = [line for line in text.splitlines() if "Not a move:" in line]
    assert len(reasons) == 4 and "You: take discard" in text  # 'take' is a unique start of a name
    assert "empty input" in reasons[0]
    assert "there is no move 0" in reasons[1] and "there is no move 42" in reasons[2]
    assert "'hello' is not a legal move now" in reasons[3]
    assert text.count("Moves:") >= 3  # '?' listed the moves again


def test_names_prefixes_and_ascii_cards():
    s = PlaySession("leastscore", ["leastscore:counting"], seed=4)
    s.state = s.core.init(1, 4)
    while int(s.core.current_player(s.state)[0]) != 0:  # let the others play up to the human's turn
        cur = int(s.core.current_player(s.state)[0])
        a = s.agents[cur].act(s.core.observe(s.state, cur), s.core.legal_action_mask(s.state))
        s.core.step(s.state, a)
    v = s.my_view()
    moves = s.text.moves(v, s.core.legal_action_mask(s.state)[0])
    hand = [card_str(int(c), symbols=True) for c in v["hand"] if c >= 0]
    single = next(m for m in moves if m.name == f"discard {hand[0]}")
    ascii_name = hand[0].replace("\u2663", "c").replace("\u2666", "d").replace("\u2665", "h").replace("\u2660", "s")
    assert s.choose(normalize(f"discard {ascii_name.upper()}"), moves, v) is single
    assert s.choose(normalize(ascii_name), moves, v) is single
    assert "not in your hand" in s.choose("discard " + next(
        c for c in ["as", "2c", "3d", "4h", "5s", "6c", "7d"]
        if card_str(parse_card(c), symbols=True) not in hand), moves, v)
    assert isinstance(s.choose("discard", moves, v), str)  # ambiguous: several discards
    r = PlaySession("racko", ["racko:sequence"], seed=4)
    r.state = r.core.init(1, 4)
    while int(r.core.current_player(r.state)[0]) != 0:
        cur = int(r.core.current_player(r.state)[0])
        r.core.step(r.state, r.agents[cur].act(r.core.observe(r.state, cur), r.core.legal_action_mask(r.state)))
    v = r.my_view()
    moves = r.text.moves(v, r.core.legal_action_mask(r.state)[0])
    assert r.choose("draw", moves, v).action == 0 and r.choose("take", moves, v).action == 1
    assert "first choose a pile" in r.choose("slot 4", moves, v)
    assert "no slot 11" in r.choose("put in slot 11", moves, v)


def test_eof_exits_cleanly():
    def eof(prompt=""):
        raise EOFError

    out = io.StringIO()
    result = PlaySession("leastscore", ["leastscore:greedy"], seed=1, output=out, input_fn=eof).run()
    assert result["quit"] and "Input closed: leaving the game (seed 1)." in out.getvalue()


def test_cli_play(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)  # the game is saved in ./replays
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n2\n"))
    assert cli_main(["play", "racko", "--vs", "racko:sequence", "--seed", "9", "--rule", "max_turns=50"]) == 0
    text = capsys.readouterr().out
    assert "Rack-O, 2 players, one round, seed 9." in text and "You: draw from the pile." in text
    assert "Input closed" in text and "Saved the game as replays/racko-play-seed9-" in text
    assert len(list((tmp_path / "replays").glob("racko-play-seed9-*.jsonl"))) == 1
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli_main(["play", "leastscore", "--vs", "leastscore:counting", "--players", "2", "--seat", "1"]) == 0
    assert "you (player_1)" in capsys.readouterr().out
    assert cli_main(["play", "racko", "--vs", "random", "--vs", "random", "--vs", "random", "--players", "2"]) == 2
    assert "only 1 other seats" in capsys.readouterr().err
    assert cli_main(["play", "racko", "--vs", "leastscore:greedy"]) == 2
    assert "unknown agent" in capsys.readouterr().err


def test_play_against_a_ppo_model(tmp_path, marked_racko_cards):
    from sb3_contrib import MaskablePPO

    from deckgym.agents.ppo import model_metadata, save_model, without_log_folder
    from deckgym.training.vec_env import CoreVecEnv

    env = CoreVecEnv("racko", num_envs=4, opponents=["random"], max_turns=30, features=True, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})
    without_log_folder(model).learn(64)
    path = str(tmp_path / "tiny.safetensors")
    save_model(model, path, model_metadata(env.core, "racko", features=True, train_config={"test": True}))
    s, out, script, result = run_scripted("racko", [f"ppo:{path}"], seed=1, rules_kwargs={"max_turns": 30})
    assert not result["quit"] and f"player_1 (ppo:{path})" in unwrap(out.getvalue())


def test_an_information_state_agent_plays_on_its_own_view(marked_racko_cards):
    """racko:search asks for information states: the session plays on the core that records the
    public history, hands the agent that view every turn, and still shows the person the default
    view (so the leak checks above hold)."""
    seen = []
    out = CheckedOutput()
    s = PlaySession("racko", ["racko:search?samples=2&candidates=2"], seed=5, output=out, input_fn=None,
                    rules_kwargs={"max_turns": 30})
    agent = s.agents[1]
    act = agent.act
    agent.act = lambda obs, masks: (seen.append(obs.shape[1]), act(obs, masks))[1]
    s.input_fn = Scripted(out, 5)
    out.watch(s)
    result = s.run()
    assert not result["quit"] and seen
    assert set(seen) == {s.core.obs_size} and s.core.obs_size > s.core.base_obs_size
    assert len(s.my_view()["rack"]) == 10 and "slot_out" not in s.my_view()


# -- what a first-time player reads (hand-built deals, scripted input) ----------------------------
def answers(*lines):
    """An input function typing ``lines`` in order, then closing the input (the session leaves)."""
    it = iter(lines)

    def read(prompt=""):
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None
    return read


LS_DEAL = {"hands": [["AC", "2D", "5H", "9S", "KC"], ["3C", "4C", "6D", "8H", "JS"]],
           "deck": ["7D", "8S"], "floor": ["QS"], "first_player": 0}


def test_leastscore_says_which_card_the_deck_gave_and_shows_the_dead_pile():
    out = io.StringIO()
    PlaySession("leastscore", ["leastscore:greedy"], players=2, seed=1, deal=LS_DEAL, output=out,
                input_fn=answers("discard kc", "deck")).run()
    text = unwrap(out.getvalue())
    after = text[text.index("You: take the deck."):]
    # the deck's top card, 7D, is named at once, with the hand it makes (A 2 5 9 after the king went, + 7)
    assert after.splitlines()[1] == ("You drew 7\u2666 from the deck. Your hand: A\u2663 2\u2666 5\u2665 7\u2666 9\u2660 "
                                     "(hand value 24).")
    # the floor card nobody took (QS) is in the dead pile, shown at the next turn; before, an empty dead pile
    turns = text.split("--- Your turn ")
    assert len(turns) == 3 and turns[2].startswith("2 (player_0) ---")
    first = next(line for line in turns[1].splitlines() if line.startswith("Dead pile"))
    second = next(line for line in turns[2].splitlines() if line.startswith("Dead pile"))
    assert first.endswith("(empty)") and "Q\u2660" in second


def test_taking_a_floor_card_tells_no_draw():
    out = io.StringIO()
    PlaySession("leastscore", ["leastscore:greedy"], players=2, seed=1, deal=LS_DEAL, output=out,
                input_fn=answers("discard kc", "take qs")).run()
    text = out.getvalue()
    assert "You: take Q\u2660 from the floor." in text and "You drew" not in text


def test_total_means_one_thing_hand_value_and_score_are_named_apart(marked_racko_cards):
    s, out, script, result = run_scripted("leastscore", ["leastscore:counting"], seed=2, players=3, match=True,
                                          rules_kwargs={"elimination_score": 25})
    text = out.getvalue()
    assert "total" not in text.lower()
    assert "(hand value " in text and "Your score: " in text and re.search(r"round points +\d+ +score +\d+", text)
    r, out, script, result = run_scripted("racko", ["racko:bucket"], seed=3, match=True,
                                          rules_kwargs={"target_score": 100, "max_turns": 40})
    assert "total" not in out.getvalue().lower() and "Your score: " in out.getvalue()


@pytest.mark.parametrize("game, vs", [("racko", "racko:sequence"), ("leastscore", "leastscore:counting")])
def test_lines_fold_at_spaces_to_the_width(game, vs, marked_racko_cards):
    narrow = run_scripted(game, [vs], seed=4, width=44, rules_kwargs={"max_turns": 30})[1].getvalue()
    wide = run_scripted(game, [vs], seed=4, width=1000, rules_kwargs={"max_turns": 30})[1].getvalue()
    assert max(len(line) for line in narrow.replace("Your move> ", "\n").splitlines()) <= 44
    assert max(len(line) for line in wide.splitlines()) > 80  # so the narrow game did fold lines
    assert narrow.split() == wide.split()  # the same game, word for word: no word cut in two


def test_the_width_defaults_to_the_terminal_s(monkeypatch):
    monkeypatch.setenv("COLUMNS", "57")
    assert PlaySession("racko", ["racko:sequence"], seed=1).width == 57
    assert PlaySession("racko", ["racko:sequence"], seed=1, output=io.StringIO()).width == 80
    with pytest.raises(ValueError, match="width must be an int of at least 20 columns"):
        PlaySession("racko", ["racko:sequence"], seed=1, width=5)
    with pytest.raises(ValueError, match="deal must be a dict"):
        PlaySession("racko", ["racko:sequence"], seed=1, deal=[1, 2])


@pytest.mark.parametrize("players, top", [(2, 40), (3, 50), (4, 60)])
def test_racko_intro_gives_the_card_range(players, top):
    s = PlaySession("racko", ["racko:sequence"], players=players, seed=1)
    assert f"the numbers 1 to {top}, one of each (R1)" in " ".join(s.text.intro())
    assert ("run of 3 consecutive numbers" in " ".join(s.text.intro())) == (players == 2)


def test_the_first_turn_is_your_turn_1_and_tells_what_happened_since_the_deal():
    """player_1 moves first (hand-built deal): the person's first turn is their turn 1, not the table's turn 2."""
    racks = [[5, 9, 13, 24, 25, 32, 4, 35, 36, 37], [40, 2, 3, 6, 7, 8, 10, 11, 12, 1]]
    out = io.StringIO()
    PlaySession("racko", ["racko:sequence"], seed=1, output=out, input_fn=answers("draw", "discard"),
                deal={"racks": racks, "first_player": 1}).run()
    text = out.getvalue()
    first, second = text.split("--- Your turn ")[1:3]
    assert first.startswith("1 (player_0) ---\nSince the deal:\n  player_1 ") and "turn 2" not in first
    assert second.startswith("2 (player_0) ---\nSince your last turn:\n  player_1 ")
    assert "Since your last turn" not in text[:text.index("--- Your turn 2")]
