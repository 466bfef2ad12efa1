// The replay viewer: a list of games, then step / back / scrub / play through one of them,
// in the god view (every card) or a seat view (what that seat saw: built by the server from
// its observation only). Address parameters: ?replay=I&k=K&view=god|0|1... open a game there.
"use strict";

const V = {list: [], data: null, id: null, k: 0, view: "god", timer: null};

function showError(msg) { document.getElementById("error").textContent = msg || ""; }

// One line per game in the list (the whole description is the entry's tooltip).
function describe(item) {
  if (item.error) return [item.file + ": " + item.error, item.file + ": " + item.error];
  const win = (item.winners || []).map(s => "p" + s).join(" ") || "-";
  const short = item.file.replace(/\.jsonl$/, "") + " \u00b7 " + item.decisions + " moves \u00b7 won by " + win +
    " \u00b7 " + item.seats.join(" / ");
  const long = item.file + ": " + item.game + ", " + item.seats.map((s, i) => "player_" + i + " " + s).join(", ") +
    "; " + item.decisions + " moves; won by " + ((item.winners || []).map(s => "player_" + s).join(", ") || "nobody") +
    " (" + (item.reason || "unfinished") + ")";
  return [short, long];
}

async function loadList() {
  V.list = await api("/api/replays");
  const nav = document.getElementById("games");
  nav.innerHTML = "";
  V.list.forEach(item => {
    const [short, long] = describe(item);
    const b = el("button", item.error ? "err" : "", short);
    b.title = long;
    b.dataset.id = item.id;
    b.onclick = () => openReplay(item.id, 0, V.view);
    nav.appendChild(b);
  });
}

async function openReplay(id, k, view) {
  stop();
  try {
    V.data = await api("/api/replays/" + id);
  } catch (e) { showError(e.message); return; }
  showError("");
  V.id = id;
  document.querySelectorAll("#games button").forEach(b => b.classList.toggle("current", Number(b.dataset.id) === id));
  const sel = document.getElementById("view");
  sel.innerHTML = "";
  sel.appendChild(new Option("god view (every card)", "god"));
  V.data.labels.forEach((lab, s) => sel.appendChild(new Option("seat view: " + lab, String(s))));
  V.view = (view === "god" || (Number(view) >= 0 && Number(view) < V.data.labels.length)) ? String(view) : "god";
  sel.value = V.view;
  const h = V.data.header;
  document.getElementById("title").textContent = h.game + ", " + h.num_players + " players, seed " + h.seed +
    ", deal " + h.deal + " (" + h.episode + ")";
  const scrub = document.getElementById("scrub");
  scrub.max = V.data.frames.length - 1;
  go(k);
}

function go(k) {
  if (!V.data) return;
  const n = V.data.frames.length;
  V.k = Math.max(0, Math.min(n - 1, k));
  const f = V.data.frames[V.k];
  document.getElementById("scrub").value = V.k;
  const pos = document.getElementById("position");
  pos.textContent = (f.phase === "end" ? "end" : "move " + (V.k + 1)) + " / " + (n - 1);
  pos.dataset.k = V.k;
  const table = V.view === "god" ? f.god : f.seats[Number(V.view)];
  const root = document.getElementById("table");
  drawTable(root, table);
  root.dataset.k = V.k;
  root.dataset.view = V.view;
  const mv = document.getElementById("move");
  mv.innerHTML = "";
  if (f.phase !== "end") {
    mv.appendChild(el("b", null, V.data.labels[f.seat]));
    mv.appendChild(document.createTextNode(" " + f.phase_text + ": "));
    const name = el("span", "move-name", f.move);
    name.id = "move-name";
    name.dataset.action = f.action_name;  // the code's name, for tools; not shown
    mv.appendChild(name);
  }
  const pol = document.getElementById("policy");
  pol.innerHTML = "";
  if (f.policy) {
    pol.appendChild(el("div", null, "policy (probability of each legal move):"));
    f.policy.forEach(b => {
      const row = el("div", "bar" + (b.chosen ? " chosen" : ""));
      row.appendChild(el("span", "name", b.move));
      const fill = el("span", "fill");
      fill.style.width = Math.round(300 * b.p) + "px";
      row.appendChild(fill);
      row.appendChild(el("span", null, (100 * b.p).toFixed(1) + "%"));
      pol.appendChild(row);
    });
  }
  const res = document.getElementById("result");
  res.innerHTML = "";
  if (f.round_end) {  // a match: this move ended a round (the next frame is the next round's deal)
    const e = Object.assign({winners: []}, f.round_end);
    res.appendChild(el("div", null, "This move ends the round: " + (REASONS[e.reason] || e.reason) + "."));
    res.appendChild(pointsTable(V.data.labels, e));
  }
  if (f.phase === "end" && V.data.end) {
    const e = V.data.end;
    res.appendChild(el("div", null, "End of the " + (V.data.header.episode === "match" ? "match" : "round") + ": " +
      (REASONS[e.reason] || e.reason) + ". Winner: " + e.winners.map(s => V.data.labels[s]).join(", ") + "."));
    res.appendChild(pointsTable(V.data.labels, e));
  }
  const q = new URLSearchParams(location.search);  // other parameters of the address are kept
  q.set("replay", V.id);
  q.set("k", V.k);
  q.set("view", V.view);
  history.replaceState(null, "", "?" + q.toString());
}

function stop() {
  if (V.timer) clearInterval(V.timer);
  V.timer = null;
  document.getElementById("play").textContent = "play";
}

function play() {
  if (V.timer) return stop();
  if (!V.data) return;
  if (V.k >= V.data.frames.length - 1) go(0);
  const speed = Number(document.getElementById("speed").value);
  document.getElementById("play").textContent = "pause";
  V.timer = setInterval(() => {
    if (V.k >= V.data.frames.length - 1) return stop();
    go(V.k + 1);
  }, 1000 / speed);
}

document.getElementById("first").onclick = () => { stop(); go(0); };
document.getElementById("back").onclick = () => { stop(); go(V.k - 1); };
document.getElementById("step").onclick = () => { stop(); go(V.k + 1); };
document.getElementById("last").onclick = () => { stop(); go(1e9); };
document.getElementById("play").onclick = play;
document.getElementById("scrub").oninput = e => { stop(); go(Number(e.target.value)); };
document.getElementById("speed").onchange = () => { if (V.timer) { stop(); play(); } };
document.getElementById("view").onchange = e => { V.view = e.target.value; go(V.k); };
document.addEventListener("keydown", e => {
  if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
  if (e.key === "ArrowRight") { stop(); go(V.k + 1); }
  else if (e.key === "ArrowLeft") { stop(); go(V.k - 1); }
  else if (e.key === " ") { e.preventDefault(); play(); }
});

(async () => {
  try { await loadList(); } catch (e) { showError(e.message); return; }
  const q = new URLSearchParams(location.search);
  const first = V.list.find(i => !i.error);
  const id = q.has("replay") ? Number(q.get("replay")) : (first ? first.id : null);
  if (id !== null) await openReplay(id, Number(q.get("k") || 0), q.get("view") || "god");
  document.body.dataset.ready = "1";
})();
