"use strict";
// The venue board: every table as a card, for a phone (one column) or a TV (a grid).
const R = RB.route();
const BRAND = document.title.replace(/ · venue$/, "");
document.getElementById("title").textContent = R.venue;
document.getElementById("history-link").href = "/v/" + encodeURIComponent(R.venue) + "/history";
document.title = BRAND + " \u00b7 " + R.venue;
const cards = {};

function card(s) {
  let c = cards[s.table];
  if (!c) {
    c = document.createElement("article"); c.className = "card"; c.id = "table-" + s.table;
    const all = document.getElementById("tables");
    const after = Object.keys(cards).sort().find((t) => t > s.table);   // keep tables in order
    all.insertBefore(c, after ? cards[after] : null); cards[s.table] = c;
    all.dataset.n = Object.keys(cards).length;
  }
  const n = RB.names(s), sc = RB.per(s, "scores"), st = s.state || {};
  const abandoned = st.ended === "abandoned";  // REFEREE.md §9: no result, "no match"
  const fouls = RB.per(s, "consecutive_fouls"), over = !!st.match_winner || abandoned;
  const [sensorText, sensorClass] = RB.sensors(s);
  const row = (i) => {
    const up = !over && st.at_table === n[i], won = over && st.match_winner === n[i];
    return `<div class="row p${"ab"[i]}${up ? " up" : ""}${won ? " won" : ""}"><div class="who"><div class="n">${
      up ? "\u25B6 " : ""}${RB.esc(n[i])}${won ? " \u2605" : ""}</div>${
      !over && fouls[i] ? '<div class="f">' + RB.fouls(s.game, fouls[i]) + "</div>" : ""}</div><span class="s">${
      sc[i] == null ? 0 : sc[i]}</span></div>`;
  };
  const chips = [];
  if (abandoned) chips.push('<span class="chip">No match (abandoned)</span>');
  else if (over) chips.push('<span class="chip win">Match over \u2014 ' + RB.esc(st.match_winner) + " wins</span>");
  else {
    if (RB.inHand(st)) chips.push('<span class="chip hot">' + RB.inHand(st) + "</span>");
    if (RB.callHtml(st)) chips.push('<span class="chip">' + RB.callHtml(st) + "</span>");
    if (RB.awaiting(st)) chips.push('<span class="chip ask">' + RB.awaiting(st) + "</span>");
    if (RB.provisional(st)) chips.push('<span class="chip ask prov">' + RB.esc(RB.provisional(st)) + "</span>");
    if ((st.to_spot || []).length) chips.push('<span class="chip hot">To spot ' + st.to_spot.map((k) => RB.ball(k, "small")).join("") + "</span>");
  }
  if (!over && s.inplay) chips.push('<span class="chip inplay">' + RB.inplay(s) + "</span>");
  const left = st.balls_on_table || [];
  const rack = over || !st.balls_on_table ? "" : '<div class="mini">' + left.map((k) => RB.ball(k, "small")).join("") +
    '<span class="dim"> ' + left.length + " left</span></div>";
  const foot = [s.game || "no game"];
  if (RB.goalText(s)) foot.push(RB.goalText(s));
  if (st.rack) foot.push("rack " + st.rack);
  foot.push(((s.pockets || {}).total || 0) + " balls today");
  RB.html(c, `<a href="${RB.tableUrl(R.venue, s.table)}">
    <h2><span class="t">${RB.esc(s.table)}</span><span class="sensors ${sensorClass}">${RB.esc(sensorText)}</span></h2>
    ${row(0)}${row(1)}<div class="chips">${chips.join("")}</div>${rack}<div class="foot">${RB.esc(foot.join(" \u00b7 "))}</div></a>`);
}

fetch("/api/v/" + encodeURIComponent(R.venue)).then((r) => r.json()).then((d) => d.tables.forEach(card));
RB.live(R.venue, card);
const tick = () => { document.getElementById("clock").textContent = new Date().toLocaleTimeString(); };
tick(); setInterval(tick, 1000);
