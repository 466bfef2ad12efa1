// Play against agents: the page shows your seat's view and your legal moves only (named as in
// the terminal); a click sends the move, the server plays the agents and answers the new table.
"use strict";

const P = {snap: null, busy: false};
const TOKEN = new URLSearchParams(location.search).get("token") || "";  // the server's, from the printed URL

async function call(method, url, body) {
  const r = await fetch(url, {method, headers: {"Content-Type": "application/json", "X-Deckgym-Token": TOKEN},
                              body: body === undefined ? undefined : JSON.stringify(body)});
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function render(s) {
  P.snap = s;
  document.getElementById("title").textContent = s.title + ", seed " + s.seed + ", you are player_" + s.seat;
  drawTable(document.getElementById("table"), s.table);
  const moves = document.getElementById("moves");
  moves.innerHTML = "";
  s.moves.forEach(m => {
    const b = el("button", "move", m.name);
    b.dataset.action = m.action;
    b.onclick = () => send(m.action);
    moves.appendChild(b);
  });
  const prompt = document.getElementById("prompt");
  prompt.textContent = s.result ? "The game is over." : (s.moves.length ? "Your move (move " + (s.decision + 1) + "):" : "Waiting...");
  const log = document.getElementById("log");
  log.innerHTML = "";
  s.log.forEach(line => log.appendChild(el("div", "line", line)));
  const res = document.getElementById("result");
  res.innerHTML = "";
  if (s.result) {
    const e = s.result;
    res.appendChild(el("div", "verdict", (e.you_won ? "You win! " : "You lose. ") + "The round ended: " +
      (REASONS[e.reason] || e.reason) + ". Every rack or hand is shown below."));
    res.appendChild(pointsTable(s.labels, e));
    if (s.replay) res.appendChild(el("div", "saved", "Saved as " + s.replay + " (deckgym view " + s.replay + ")"));
    const again = el("button", null, "new game");
    again.id = "new-game";
    again.onclick = async () => { try { render(await call("POST", "/api/new", {})); } catch (e) { showError(e.message); } };
    res.appendChild(again);
  }
  document.body.dataset.decision = s.decision;
  document.body.dataset.over = s.result ? "1" : "0";
}

function showError(msg) { document.getElementById("error").textContent = msg || ""; }

async function send(action) {
  if (P.busy) return;
  P.busy = true;
  try {
    render(await call("POST", "/api/move", {action: action, decision: P.snap.decision}));
    showError("");
  } catch (e) {
    showError(e.message);
  } finally {
    P.busy = false;
  }
}

(async () => {
  try { render(await call("GET", "/api/state")); } catch (e) { showError(e.message); }
  document.body.dataset.ready = "1";
})();
