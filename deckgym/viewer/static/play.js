// Play against agents: the page shows your seat's view and plays a move when you click its place
// on the table (a pile, a slot of your rack, a floor card, the cards of a group in your hand); the
// legal moves are also listed by their terminal names. The server plays the agents and answers
// the new table.
"use strict";

const P = {snap: null, busy: false, picked: []};

function render(s) {
  if (!P.snap || P.snap.decision !== s.decision || P.snap.seed !== s.seed) P.picked = [];
  P.snap = s;
  document.getElementById("title").textContent = s.title + ", seed " + s.seed + ", you are player_" + s.seat;
  const rules = document.getElementById("rules-list");
  rules.innerHTML = "";
  s.intro.forEach(line => rules.appendChild(el("li", null, line)));
  const table = document.getElementById("table");
  drawTable(table, s.table);
  const moves = document.getElementById("moves");
  moves.innerHTML = "";
  s.moves.forEach(m => {
    const b = el("button", "move", m.name);
    b.dataset.action = m.action;
    b.onclick = () => send(m.action);
    moves.appendChild(b);
  });
  document.getElementById("by-name").hidden = !s.moves.length;
  // moves that have no place on the table (declare) are buttons next to the prompt
  const pick = document.getElementById("pick");
  pick.innerHTML = "";
  s.moves.filter(m => !m.target).forEach(m => {
    const b = el("button", "direct", m.name);
    b.dataset.action = m.action;
    b.onclick = () => send(m.action);
    pick.appendChild(b);
  });
  hookTargets(table, s);
  const prompt = document.getElementById("prompt");
  prompt.textContent = s.result ? "The game is over." : (s.moves.length ? s.prompt : "The others are playing...");
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
    again.onclick = async () => { try { render(await api("/api/new", {})); } catch (e) { showError(e.message); } };
    res.appendChild(again);
  }
  document.body.dataset.decision = s.decision;
  document.body.dataset.over = s.result ? "1" : "0";
}

// A place on the table that plays a move: by a click, or by Enter / space once focused (Tab).
function activate(node, fn) {
  node.classList.add("target");
  node.tabIndex = 0;
  node.onclick = e => { e.stopPropagation(); fn(); };
  node.onkeydown = e => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); fn(); } };
}

function clickable(node, m) {
  node.title = m.name;
  node.dataset.action = m.action;
  activate(node, () => send(m.action));
}

// The places on the table where a click plays a move (each move's target, named by the server).
function hookTargets(table, s) {
  const mine = table.querySelector('.seat[data-seat="' + s.seat + '"]');
  const groups = [];
  s.moves.forEach(m => {
    const t = m.target;
    if (!t) return;
    if (t.slot !== undefined) {
      const slot = mine && mine.querySelector('.slot[data-slot="' + t.slot + '"]');
      if (slot) clickable(slot, m);
    } else if (t.pile !== undefined) {
      const pile = [...table.querySelectorAll(".pile")].find(p => p.dataset.pile === t.pile);
      if (!pile) return;
      if (t.card === undefined) clickable(pile, m);
      else {
        const card = [...pile.querySelectorAll(".card")].find(c => c.dataset.card === t.card);
        if (card) clickable(card, m);
      }
    } else if (t.cards !== undefined) {
      groups.push(m);
    }
  });
  if (!groups.length || !mine) return;
  // a group of the hand: click its cards (each click selects or unselects one), then the discard button
  const cards = [...mine.querySelectorAll(".card")].filter(c => c.dataset.card);
  const button = el("button", "discard-picked");
  button.id = "discard-picked";
  document.getElementById("pick").prepend(button);
  const key = list => [...list].sort().join(" ");
  const update = () => {
    const m = groups.find(g => key(g.target.cards) === key(P.picked));
    cards.forEach(c => c.classList.toggle("picked", P.picked.includes(c.dataset.card)));
    button.disabled = !m;
    button.textContent = m ? m.name : (P.picked.length ? "not a group that may be thrown away (L5)"
                                                         : "click the cards of a group in your hand");
    button.dataset.action = m ? m.action : "";
    button.onclick = m ? () => send(m.action) : null;
  };
  cards.forEach(c => activate(c, () => {
    const t = c.dataset.card;
    P.picked = P.picked.includes(t) ? P.picked.filter(x => x !== t) : P.picked.concat([t]);
    update();
  }));
  P.picked = P.picked.filter(t => cards.some(c => c.dataset.card === t));
  update();
}

function showError(msg) { document.getElementById("error").textContent = msg || ""; }

async function send(action) {
  if (P.busy) return;
  P.busy = true;
  try {
    render(await api("/api/move", {action: action, decision: P.snap.decision}));
    showError("");
  } catch (e) {
    showError(e.message);
  } finally {
    P.busy = false;
  }
}

(async () => {
  try { render(await api("/api/state")); } catch (e) { showError(e.message); }
  document.body.dataset.ready = "1";
})();
