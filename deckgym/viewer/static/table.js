// Draws one table (seats, piles, the card in hand) as the server describes it; shared by the
// viewer and the play page. A hidden card has no text: the page never receives what a seat cannot see.
"use strict";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function cardEl(c) {
  if (c.hidden) return el("span", "card hidden");
  const e = el("span", "card" + (c.red ? " red" : "") + (c.known ? " known" : "") + (c.run ? " run" : ""), c.t);
  e.dataset.card = c.t;
  return e;
}

// A rack slot: its number above the card, and a bar under it when the card is in the scoring order.
function slotEl(c) {
  const box = el("span", "slot" + (c.ord ? " ord" : ""));
  box.dataset.slot = c.slot;
  box.appendChild(el("span", "slot-no", c.slot));
  box.appendChild(cardEl(c));
  box.appendChild(el("span", "bar-mark"));
  return box;
}

function cardsEl(cards, maxHidden) {
  const row = el("div", "cards");
  const hidden = cards.filter(c => c.hidden).length;
  if (hidden === cards.length && hidden > (maxHidden || 10)) {  // a face-down pile: one back and its count
    row.appendChild(cardEl({hidden: true}));
    row.appendChild(el("span", "count", "\u00d7 " + hidden));
    return row;
  }
  cards.forEach(c => row.appendChild(c.slot ? slotEl(c) : cardEl(c)));
  return row;
}

function drawTable(root, table) {
  root.innerHTML = "";
  const seats = el("div", "seats");
  table.seats.forEach(s => {
    const box = el("div", "seat" + (s.to_move ? " to-move" : ""));
    box.dataset.seat = s.seat;
    const label = el("div", "label", s.label + (s.to_move ? "  \u25c0 to move" : ""));
    label.appendChild(el("span", "note", s.note));
    box.appendChild(label);
    const row = cardsEl(s.cards, 99);
    row.dataset.row = s.row;
    box.appendChild(row);
    if (table.hand && table.hand.seat === s.seat) {
      const h = el("div", "hand", "holding ");
      h.appendChild(cardEl(table.hand.card));
      box.appendChild(h);
    }
    seats.appendChild(box);
  });
  root.appendChild(seats);
  const piles = el("div", "piles");
  table.piles.forEach(p => {
    const box = el("div", "pile");
    box.dataset.pile = p.name;
    box.dataset.count = p.count;
    const label = el("div", "label", p.name + " (" + p.count + ")");
    if (p.note) label.appendChild(el("span", "note", p.note));
    box.appendChild(label);
    box.appendChild(cardsEl(p.cards, 0));
    piles.appendChild(box);
  });
  root.appendChild(piles);
  if (table.info) root.appendChild(el("div", "info", table.info));
  if (table.legend) {  // what the marks on the cards mean, in the game's words
    const legend = el("div", "legend");
    table.legend.forEach(m => {
      let sample;
      if (m.mark === "ord") {
        sample = el("span", "slot ord");
        sample.appendChild(el("span", "bar-mark"));
      } else {
        sample = el("span", "card " + m.mark + (m.red ? " red" : ""), m.example);
      }
      legend.appendChild(sample);
      legend.appendChild(el("span", null, m.text));
    });
    root.appendChild(legend);
  }
}

function pointsTable(labels, end) {
  const t = el("table", "points");
  const head = el("tr");
  ["seat", "round points", "score"].forEach(h => head.appendChild(el("th", null, h)));
  t.appendChild(head);
  labels.forEach((lab, s) => {
    const tr = el("tr");
    tr.dataset.seat = s;
    tr.appendChild(el("td", null, lab + (end.winners.includes(s) ? " \u2605" : "")));
    tr.appendChild(el("td", "round-points", end.round_points[s]));
    tr.appendChild(el("td", null, end.total_points[s]));
    t.appendChild(tr);
  });
  return t;
}

const REASONS = {
  "rack-o": "a player went out: Rack-O! (R7)",
  "cap": "the turn cap was reached (R9 / L10)",
  "declare": "a player declared (L7, L8)",
};
