// Every request the pages make to their server goes through api(): what the server asks of a
// request (headers, the address's parameters) is added here and nowhere else.
"use strict";

async function api(path, body) {
  const init = body === undefined ? {method: "GET"}
    : {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
  const r = await fetch(path, init);
  let data;
  try { data = await r.json(); } catch (e) { throw new Error("the server answered " + r.status + " " + r.statusText); }
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}
