// Every request the pages make to their server goes through api(): what the server asks of a
// request (headers, the address's parameters) is added here and nowhere else.
"use strict";

// The server's token, from the printed URL (?token=T): every /api/ call presents it (SECURITY.md).
const TOKEN = new URLSearchParams(location.search).get("token") || "";

async function api(path, body) {
  const init = body === undefined ? {method: "GET", headers: {"X-Deckgym-Token": TOKEN}}
    : {method: "POST", headers: {"Content-Type": "application/json", "X-Deckgym-Token": TOKEN},
       body: JSON.stringify(body)};
  const r = await fetch(path, init);
  let data;
  try { data = await r.json(); } catch (e) { throw new Error("the server answered " + r.status + " " + r.statusText); }
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}
