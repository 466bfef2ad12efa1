"""The viewer and the play page in a real browser: headless Chromium driven by Selenium.

Needs Debian's ``chromium`` and ``chromium-driver`` (``make test`` installs them where it can:
root and apt). Without them these tests fail, saying how to install them; they are never skipped.
Screenshots go to the test's folder, or to ``$DECKGYM_SCREENSHOTS`` (how ``docs/img/`` is made).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

from deckgym.agents.registry import make_agent
from deckgym.replay import load, resimulate
from deckgym.viewer import ReplayLibrary, ViewerApp, make_server
from deckgym.evaluation.webplay import WebPlayApp
from leastscore_env.cards import card_str, parse_card
from tests.conftest import make_core
from tests.test_replay import record

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "install them with: apt-get install -y chromium chromium-driver (make test does it when run as root)"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1100,760"]


def _find(*names):
    for n in names:
        path = shutil.which(n) or (f"/usr/bin/{n}" if os.path.exists(f"/usr/bin/{n}") else None)
        if path:
            return path
    return None


def browser_driver():
    """A headless Chromium driven by Selenium and its clean-up (quit, profile removed)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("selenium is not installed: pip install -e '.[dev]' (it is in the dev extra)")
    chromium, driver_path = _find("chromium", "chromium-browser"), _find("chromedriver")
    if chromium is None or driver_path is None:
        pytest.fail(f"Chromium or its driver is missing (chromium: {chromium}, chromedriver: {driver_path}); {INSTALL}")
    opts = webdriver.ChromeOptions()
    profile = tempfile.mkdtemp(prefix="deckgym-chromium-")
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    opts.binary_location = chromium
    try:
        drv = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
        drv.set_page_load_timeout(30)
    except BaseException:
        shutil.rmtree(profile, ignore_errors=True)  # Selenium stops a browser it could not finish starting
        raise

    def cleanup():
        try:
            drv.quit()  # Chromium and its driver stop first: they write in the profile until then
        finally:
            shutil.rmtree(profile, ignore_errors=True)

    return drv, cleanup


@pytest.fixture(scope="module")
def browser():
    drv, cleanup = browser_driver()
    try:
        yield drv
    finally:
        cleanup()


def shot(drv, tmp_path, name):
    """A screenshot, made small (a palette PNG); returns its path."""
    folder = Path(os.environ.get("DECKGYM_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    drv.save_screenshot(str(path))
    from PIL import Image

    with Image.open(path) as im:
        im.convert("RGB").quantize(colors=64).save(path, optimize=True)
    assert path.stat().st_size > 2000
    return path


def serve(app):
    """The app on a free port; the page's URL with the server's token, as deckgym prints it."""
    srv = make_server(app, 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_port}/?token={srv.token}"


def wait(drv, script, timeout=20):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(drv, timeout, poll_frequency=0.05).until(lambda d: d.execute_script(script))


def seat_cards(drv, seat):
    """``[(text or None for a face-down card), ...]`` of the rack or hand drawn for ``seat``."""
    return drv.execute_script(
        "return [...document.querySelectorAll('#table .seat[data-seat=\"' + arguments[0] + '\"] .cards .card')]"
        ".map(c => c.classList.contains('hidden') ? null : c.dataset.card);", seat)


def pile_cards(drv, name):
    return drv.execute_script(
        "return [...document.querySelectorAll('#table .pile[data-pile=\"' + arguments[0] + '\"] .card')]"
        ".map(c => c.classList.contains('hidden') ? null : c.dataset.card);", name)


# -- the viewer ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    d = tmp_path_factory.mktemp("replays")
    core = make_core("racko", 2)
    ppo = make_agent(f"ppo:{ROOT / 'models' / 'racko_2p.safetensors'}", core, game="racko")
    record("racko", core, [ppo, make_agent("racko:sequence", core, seed=1, game="racko")], 2, [0], 1, d,
           specs=["ppo:models/racko_2p.safetensors", "racko:sequence"])
    core4 = make_core("leastscore", 4)
    record("leastscore", core4, [make_agent("leastscore:greedy", core4, seed=i, game="leastscore") for i in range(4)],
           3, [0], 1, d)
    srv, url = serve(ViewerApp(ReplayLibrary(str(d))))
    yield url, {"leastscore": load(d / "leastscore_0.jsonl"), "racko": load(d / "racko_0.jsonl"), "dir": d}
    srv.shutdown()
    srv.server_close()


def test_viewer_steps_to_move_k_and_shows_its_cards(browser, viewer, tmp_path):
    url, reps = viewer
    rep = reps["racko"]  # the list is sorted by file name: leastscore_0 (0), racko_0 (1)
    browser.get(url + "&replay=1&k=0&view=god")
    wait(browser, "return document.body.dataset.ready === '1'")
    k = min(7, len(rep.decisions) - 1)
    for _ in range(k):
        browser.find_element("id", "step").click()
    assert browser.find_element("id", "position").get_attribute("data-k") == str(k)
    state = rep.decisions[k]["state"]
    for s in range(2):
        assert seat_cards(browser, s) == [str(c) for c in state["racks"][s]]
    assert pile_cards(browser, "draw pile") == [str(c) for c in state["draw_pile"]]
    assert browser.find_element("id", "move-name").text == rep.decisions[k]["move"]
    bars = browser.find_elements("css selector", "#policy .bar")
    if rep.decisions[k]["seat"] == 0:  # the PPO seat: one bar per legal move, the chosen one marked
        assert len(bars) == len(rep.decisions[k]["legal"])
        assert len(browser.find_elements("css selector", "#policy .bar.chosen")) == 1
    else:
        assert bars == []
    shot(browser, tmp_path, "viewer.png")
    browser.find_element("id", "back").click()  # back one move, then scrub to the end
    assert seat_cards(browser, 0) == [str(c) for c in rep.decisions[k - 1]["state"]["racks"][0]]
    browser.execute_script("const s = document.getElementById('scrub'); s.value = s.max;"
                           "s.dispatchEvent(new Event('input'));")
    points = browser.execute_script("return [...document.querySelectorAll('#result .round-points')].map(e => e.textContent)")
    assert points == [str(p) for p in rep.end["round_points"]]
    # play from move k at 20 moves a second: it runs to the end by itself and stops there
    browser.execute_script(f"go({k});")
    browser.execute_script("document.getElementById('speed').value = '20';")
    browser.find_element("id", "play").click()
    last = str(len(rep.decisions))
    wait(browser, f"return document.getElementById('position').dataset.k === '{last}'", timeout=30)
    wait(browser, "return document.getElementById('play').textContent === 'play'")


def test_seat_view_hides_every_hidden_card(browser, viewer):
    url, reps = viewer
    rep = reps["racko"]
    for k in (0, len(rep.decisions) // 2, len(rep.decisions) - 1):
        state = rep.decisions[k]["state"]
        for seat in (0, 1):
            browser.get(url + f"&replay=1&k={k}&view={seat}")
            wait(browser, "return document.body.dataset.ready === '1'")
            assert seat_cards(browser, seat) == [str(c) for c in state["racks"][seat]]
            other = 1 - seat
            shown = seat_cards(browser, other)
            assert shown == [str(c) if slot in state["known_slots"][other] else None
                             for slot, c in enumerate(state["racks"][other], 1)]
            assert all(c is None for c in pile_cards(browser, "draw pile"))
            # every discard is face up and in the seat's observation: the top, then the rest in number order
            pile = state["discard_pile"]
            assert pile_cards(browser, "discard pile") == [str(c) for c in pile[-1:] + sorted(pile[:-1])]
    rep = reps["leastscore"]
    sym = lambda t: card_str(parse_card(t), symbols=True)  # noqa: E731
    k = len(rep.decisions) // 2
    state = rep.decisions[k]["state"]
    browser.get(url + f"&replay=0&k={k}&view=2")
    wait(browser, "return document.body.dataset.ready === '1'")
    for s in range(4):
        shown = seat_cards(browser, s)
        if s == 2:
            assert shown == [sym(c) for c in state["hands"][s]]
        else:
            assert sorted(c for c in shown if c) == sorted(sym(c) for c in state["known"][s])
            assert len(shown) == len(state["hands"][s])
    assert all(c is None for c in pile_cards(browser, "deck"))


# -- playing -------------------------------------------------------------------------------------
def play_round(browser, url, choose, max_moves=400):
    """Click legal moves (``choose(names, actions) -> index``) until the round ends; what was offered and clicked."""
    browser.get(url)
    wait(browser, "return document.body.dataset.ready === '1'")
    offered, clicked = [], []
    for _ in range(max_moves):
        if browser.execute_script("return document.body.dataset.over") == "1":
            return offered, clicked
        buttons = browser.find_elements("css selector", "#moves button.move")
        names = [b.text for b in buttons]
        actions = [int(b.get_attribute("data-action")) for b in buttons]
        assert names, "no move offered before the end"
        i = choose(names, actions)
        offered.append((actions, names))
        clicked.append(actions[i])
        before = browser.execute_script("return document.body.dataset.decision")
        buttons[i].click()
        wait(browser, f"return document.body.dataset.decision !== '{before}' || document.body.dataset.over === '1'")
    raise AssertionError("the round did not end")


def check_saved(app, offered, clicked):
    g = app.game
    rep = load(g.replay_path)
    assert resimulate(rep) == len(rep.decisions)
    mine = [d for d in rep.decisions if d["seat"] == g.seat]
    assert [d["action"] for d in mine] == clicked
    # the buttons were the legal moves, by their terminal names (in the terminal's order)
    assert [sorted(zip(d["legal"], d["legal_moves"])) for d in mine] == [sorted(zip(a, n)) for a, n in offered]
    assert rep.header["seats"][g.seat] == "human"
    return rep


def test_play_a_whole_racko_round_in_the_browser(browser, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # saved as replays/... as a person sees it (and as the screenshot shows)
    app = WebPlayApp(game="racko", vs=["racko:bucket"], seed=12, replays="replays")
    srv, url = serve(app)
    rng = np.random.default_rng(0)
    try:
        def choose(names, actions):  # draw, then put the card in a random slot: a round ends (a Rack-O or the cap)
            return int(rng.integers(len(names)))
        offered, clicked = play_round(browser, url, choose)
        rep = check_saved(app, offered, clicked)
        # the end reveals every rack and the scoring
        for s in range(2):
            assert seat_cards(browser, s) == [str(c) for c in rep.end["state"]["racks"][s]]
        points = browser.execute_script("return [...document.querySelectorAll('#result .round-points')].map(e => e.textContent)")
        assert points == [str(p) for p in rep.end["round_points"]]
        shot(browser, tmp_path, "play_end.png")
    finally:
        srv.shutdown()
        srv.server_close()


def test_play_a_whole_leastscore_round_and_bad_clicks_change_nothing(browser, tmp_path):
    app = WebPlayApp(game="leastscore", vs=["leastscore:greedy"], players=3, seed=5, replays=str(tmp_path / "games"))
    srv, url = serve(app)
    try:
        browser.get(url)
        wait(browser, "return document.body.dataset.ready === '1'")
        before = browser.execute_script("return document.body.dataset.decision")
        hand = seat_cards(browser, 0)
        assert len(hand) == 5 and None not in hand
        for s in (1, 2):  # nothing known of the others' hands at the start
            assert all(c is None for c in seat_cards(browser, s))
        shot(browser, tmp_path, "play.png")
        browser.execute_script("send(99)")  # an illegal move from the page
        wait(browser, "return document.getElementById('error').textContent !== ''")
        assert "illegal move 99" in browser.find_element("id", "error").text
        assert browser.execute_script("return document.body.dataset.decision") == before
        assert seat_cards(browser, 0) == hand

        def choose(names, actions):  # declare when allowed, else the first move offered (the largest discard)
            return next((i for i, n in enumerate(names) if n.startswith("declare")), 0)
        offered, clicked = play_round(browser, url, choose)
        rep = check_saved(app, offered, clicked)
        assert rep.end["reason"] in ("declare", "cap")
        for s in range(3):
            sym = [card_str(parse_card(t), symbols=True) for t in rep.end["state"]["hands"][s]]
            assert seat_cards(browser, s) == sym
    finally:
        srv.shutdown()
        srv.server_close()


# -- reading the viewer --------------------------------------------------------------------------
def test_viewer_lists_one_line_per_game(browser, viewer, tmp_path):
    """30 Least Score games: each entry one line (the whole description in its tooltip), 25+ on one screen."""
    url, reps = viewer
    d = tmp_path / "many"
    d.mkdir()
    text = (reps["dir"] / "leastscore_0.jsonl").read_text()
    for i in range(30):
        (d / f"leastscore_{i:02d}.jsonl").write_text(text)
    srv, many = serve(ViewerApp(ReplayLibrary(str(d))))
    try:
        browser.get(many)
        wait(browser, "return document.body.dataset.ready === '1'")
        boxes = browser.execute_script("return [...document.querySelectorAll('#games button')].map(b => "
                                       "[b.getBoundingClientRect().height, b.getBoundingClientRect().bottom, b.title])")
        assert len(boxes) == 30 and max(h for h, _, _ in boxes) <= 22
        assert sum(bottom <= browser.execute_script("return window.innerHeight") for _, bottom, _ in boxes) >= 25
        assert boxes[0][2].startswith("leastscore_00.jsonl: leastscore, player_0 leastscore:greedy, player_1")
    finally:
        srv.shutdown()
        srv.server_close()


def test_viewer_shows_no_code_names(browser, viewer):
    """A move is told in words: no ``place_drawn``, no ``[slot_5]``, no ``turn 19, choose``."""
    url, reps = viewer
    for i, game in ((1, "racko"), (0, "leastscore")):
        rep = reps[game]
        code = [n for n in rep.header["action_names"] + rep.header["phase_names"] if "_" in n] + ["choose"]
        for k in range(0, len(rep.decisions), max(1, len(rep.decisions) // 12)):
            browser.get(url + f"&replay={i}&k={k}&view=god")
            wait(browser, "return document.body.dataset.ready === '1'")
            shown = browser.execute_script("return document.getElementById('move').innerText + ' | ' + "
                                           "document.querySelector('#table .info').innerText")
            assert not [n for n in code if re.search(rf"\b{re.escape(n)}\b", shown)] and "[" not in shown, shown
            assert browser.find_element("id", "move-name").text == rep.decisions[k]["move"]


# -- playing by clicking the table ---------------------------------------------------------------
def decided(browser, before):
    wait(browser, f"return document.body.dataset.decision !== '{before}'")


def test_play_racko_by_clicking_the_piles_and_the_slots(browser, tmp_path):
    """Hand-built deal: slots 1-6 rise (5 9 13 24 25 26) and two runs (24-26, 35-37) are marked; a click on
    the draw pile draws, a click on slot 7 puts the card there."""
    rack = [5, 9, 13, 24, 25, 26, 4, 35, 36, 37]
    app = WebPlayApp(game="racko", vs=["racko:sequence"], seed=12, replays=None,
                     deal={"racks": [rack, [40, 2, 3, 6, 7, 8, 10, 11, 12, 1]], "first_player": 0})
    srv, url = serve(app)
    try:
        browser.get(url)
        wait(browser, "return document.body.dataset.ready === '1'")
        mine = '#table .seat[data-seat="0"] '
        assert browser.execute_script(f"return [...document.querySelectorAll('{mine}.slot-no')].map(e => e.textContent)") \
            == [str(k) for k in range(1, 11)]
        assert browser.execute_script(f"return [...document.querySelectorAll('{mine}.slot.ord')].map(e => e.dataset.slot)") \
            == [str(k) for k in range(1, 7)]
        assert seat_cards_marked(browser, 0, "run") == ["24", "25", "26", "35", "36", "37"]
        assert "Goal: the 10 cards of your rack increasing" in browser.find_element("id", "rules").text
        prompt = browser.find_element("id", "prompt").text
        assert prompt.startswith("Your turn: click the draw pile") and "(move" not in prompt
        before = browser.execute_script("return document.body.dataset.decision")
        browser.find_element("css selector", '#table .pile[data-pile="draw pile"]').click()
        decided(browser, before)
        assert browser.find_element("id", "prompt").text.startswith("You drew ")
        shot(browser, tmp_path, "play_racko.png")
        before = browser.execute_script("return document.body.dataset.decision")
        browser.find_element("css selector", mine + '.slot[data-slot="7"]').click()
        decided(browser, before)
        mine_moves = [d["action"] for d in app.game.record.lines[1:] if d.get("seat") == 0]
        assert mine_moves == [0, 1 + 7]  # draw, then slot_7
        assert seat_cards(browser, 0)[:6] == [str(c) for c in rack[:6]] and seat_cards(browser, 0)[6] != "4"
    finally:
        srv.shutdown()
        srv.server_close()


def seat_cards_marked(drv, seat, cls):
    return drv.execute_script(
        "return [...document.querySelectorAll('#table .seat[data-seat=\"' + arguments[0] + '\"] .card.' + arguments[1])]"
        ".map(c => c.dataset.card);", seat, cls)


def test_play_leastscore_by_picking_a_group_and_a_floor_card(browser, tmp_path):
    deal = {"hands": [["3C", "3D", "5H", "9S", "KC"], ["4C", "6D", "8H", "JS", "QS"]], "floor": ["2S"],
            "deck": ["7D"], "first_player": 0}
    app = WebPlayApp(game="leastscore", vs=["leastscore:greedy"], players=2, seed=3, replays=None, deal=deal)
    srv, url = serve(app)
    sym = {t: card_str(parse_card(t), symbols=True) for t in ("3C", "3D", "5H", "2S")}
    try:
        browser.get(url)
        wait(browser, "return document.body.dataset.ready === '1'")
        button = browser.find_element("id", "discard-picked")
        assert not button.is_enabled()

        def pick(t):
            next(c for c in browser.find_elements("css selector", '#table .seat[data-seat="0"] .card')
                 if c.get_attribute("data-card") == sym[t]).click()
        pick("3C")
        assert button.is_enabled() and button.text == f"discard {sym['3C']}"
        pick("3D")
        assert button.text == f"discard {sym['3C']} {sym['3D']}"
        pick("5H")  # three cards that are no group (L5)
        assert not button.is_enabled() and "not a group" in button.text
        pick("5H")
        shot(browser, tmp_path, "play.png")
        before = browser.execute_script("return document.body.dataset.decision")
        button.click()
        decided(browser, before)
        assert browser.find_element("id", "prompt").text.startswith("Now take a card")
        before = browser.execute_script("return document.body.dataset.decision")
        from selenium.webdriver.common.keys import Keys  # the floor card by the keyboard: focus it, press Enter

        next(c for c in browser.find_elements("css selector", '#table .pile[data-pile="floor"] .card')
             if c.get_attribute("data-card") == sym["2S"]).send_keys(Keys.ENTER)
        decided(browser, before)
        core = app.game.core
        mine = [core.action_names[d["action"]] for d in app.game.record.lines[1:] if d.get("seat") == 0]
        assert mine[:2] == ["discard_s0+s1", "take_floor_0"]  # the two threes (the hand's first cards), then 2S
        assert sorted(seat_cards(browser, 0)) == sorted(card_str(parse_card(t), symbols=True)
                                                        for t in ("2S", "5H", "9S", "KC"))
    finally:
        srv.shutdown()
        srv.server_close()
