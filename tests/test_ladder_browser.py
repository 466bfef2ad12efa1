"""The ladder page (``deckgym ladder view``, ``deckgym ladder export``) in headless Chromium, and its
server's token, Host and Origin rules (the viewer's own: tests/test_browser.py's pattern)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from deckgym.evaluation import ladder as lad
from deckgym.evaluation.ladder.web import LadderApp
from tests.test_browser import browser_driver, serve, shot, wait

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def browser():
    drv, cleanup = browser_driver()
    yield drv
    cleanup()


@pytest.fixture(scope="module")
def ladder_site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ladder")
    path = str(folder / "lab.ladder")
    ladder = lad.init(path, "racko", players=2, seed=7)
    for name, spec in (("random", "random"), ("bucket", "racko:bucket"), ("seq", "racko:sequence"),
                       ("ppo", f"ppo:{ROOT / 'models' / 'racko_2p.safetensors'}")):
        lad.add(ladder, name, spec)
    lad.run(ladder, matches=48, block=8, replays=True)
    data = lad.ladder_json(ladder)
    lad.export(ladder, str(folder / "pub"))
    ladder.close()
    app = LadderApp(path)
    srv, url = serve(app)
    yield url, srv, data, folder
    srv.shutdown()
    srv.server_close()


def _get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_api_keeps_the_viewers_rules(ladder_site):
    url, srv, data, _ = ladder_site
    base = f"http://127.0.0.1:{srv.server_port}"
    assert _get(f"{base}/api/ladder")[0] == 403  # no token
    assert _get(f"{base}/api/ladder?token=wrong")[0] == 403
    code, got = _get(f"{base}/api/ladder?token={srv.token}")
    assert code == 200 and got["ladder"]["matches"] == 48
    assert _get(f"{base}/api/ladder?token={srv.token}", {"Host": "evil.example:80"})[0] == 403
    assert _get(f"{base}/api/ladder?token={srv.token}", {"Origin": "http://evil.example"})[0] == 403
    assert _get(f"{base}/api/replays/abc?token={srv.token}")[0] == 400
    assert _get(f"{base}/api/replays/999999?token={srv.token}")[0] == 404


def test_the_ladder_page_shows_table_heatmap_history_and_matches(browser, ladder_site, tmp_path):
    url, srv, data, _ = ladder_site
    browser.get(url)
    wait(browser, "return document.body.dataset.ready === '1'")
    assert browser.find_element("id", "error").text == ""
    names = browser.execute_script(
        "return [...document.querySelectorAll('#standings tr')].slice(1).map(r => r.cells[1].textContent)")
    assert names == [r["name"] for r in data["ladder"]["rows"]]
    cells = browser.execute_script("return [...document.querySelectorAll('#heat td')].filter(td => td.title).length")
    met = sum(1 for row in data["ladder"]["win_rate"] for w in row if w is not None)
    assert cells == met > 0
    assert len(browser.find_elements("css selector", "#history-chart polyline")) == 4
    browser.execute_script("const s = document.getElementById('entry'); s.value = 'ppo'; s.onchange();")
    rows = browser.find_elements("css selector", "#matches tr.match")
    assert len(rows) == sum(1 for m in data["matches"] if "ppo" in m["entries"]) > 0
    shot(browser, tmp_path, "ladder.png")
    # a match's replay opens in the viewer, under the same token
    link = browser.find_element("css selector", "#matches a.replay")
    rid = int(link.get_attribute("href").split("replay=")[1])
    link.click()
    wait(browser, "return document.body.dataset.ready === '1'")
    assert browser.find_element("id", "error").text == ""
    assert f"deal {rid // 4}" in browser.find_element("id", "title").text
    assert int(browser.find_element("id", "position").get_attribute("data-k")) == 0


def test_the_export_opens_from_a_file(browser, ladder_site):
    _, _, data, folder = ladder_site
    browser.get((folder / "pub" / "ladder.html").as_uri())
    wait(browser, "return document.body.dataset.ready === '1'")
    assert browser.find_element("id", "error").text == ""
    names = browser.execute_script(
        "return [...document.querySelectorAll('#standings tr')].slice(1).map(r => r.cells[1].textContent)")
    assert names == [r["name"] for r in data["ladder"]["rows"]]
    assert json.loads((folder / "pub" / "ladder.json").read_text())["ladder"]["rows"] == data["ladder"]["rows"]
