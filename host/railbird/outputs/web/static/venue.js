"use strict";
// The venue board: every table as a card, in natural order (t2 before t10). A phone scrolls
// one column. A TV (landscape, 1000 px wide or more) is a screen nobody scrolls: the board
// lays the cards out so that every one of them fits it, as large as their count allows, and
// past MAX_PER_PAGE tables shows them page by page, turning every ROTATE_S seconds
// (`?rotate=S` on the address), with "page 2 of 3" in the header. The cards of the pages not
// shown are kept up to date too: a page that turns never shows a score from before.
const R = RB.route();
const BRAND = document.title.replace(/ · venue$/, "");
document.getElementById("title").textContent = R.venue;
document.getElementById("history-link").href = "/v/" + encodeURIComponent(R.venue) + "/history";
document.title = BRAND + " \u00b7 " + R.venue;
const Q = new URLSearchParams(location.search);
const ROTATE_S = Math.max(1, +Q.get("rotate") || 12);
const MAX_PER_PAGE = 24;    // 6 x 4 at 1920x1080: cards about 300 px wide, scores 53 px high
// a card's content in units of --cu: 40 high (name, two players with their scores, chips,
// rack, foot), 56 wide (a long name beside a four-digit score)
const CARD_H_CU = 40, CARD_W_CU = 56, MAX_CU_PX = 26;
const cards = {};
const board = { page: 0, pages: 1, per: 0, cu: 0, names: [] };

const isTv = () => innerWidth >= 1000 && innerWidth > innerHeight;

// The grid for `per` cards in a w x h box: the columns whose cards have the largest unit
// (the fewest empty places among equals), and that unit.
function grid(per, w, h, gap) {
  let best = null;
  for (let cols = 1; cols <= per; cols++) {
    const rows = Math.ceil(per / cols);
    const cw = (w - gap * (cols - 1)) / cols, ch = (h - gap * (rows - 1)) / rows;
    const cu = Math.min(MAX_CU_PX, ch / CARD_H_CU, cw / CARD_W_CU);
    if (!best || cu > best.cu + 0.01) best = { cols, rows, cu };
  }
  return best;
}

function layout() {
  const all = document.getElementById("tables");
  const names = RB.naturalSort(Object.keys(cards));
  names.forEach((t, i) => { if (all.children[i] !== cards[t]) all.insertBefore(cards[t], all.children[i] || null); });
  board.names = names;
  all.dataset.n = names.length;
  const tv = isTv();
  document.body.classList.toggle("tv", tv);
  if (!tv || !names.length) {
    all.style.cssText = "";
    board.pages = 1; board.page = 0; board.per = names.length;
    show();
    return;
  }
  board.pages = Math.ceil(names.length / MAX_PER_PAGE);
  board.per = Math.ceil(names.length / board.pages);
  board.page = Math.min(board.page, board.pages - 1);
  const cs = getComputedStyle(all), box = all.getBoundingClientRect();
  const w = box.width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  const h = box.height - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
  const g = grid(board.per, w, h, parseFloat(cs.columnGap) || 0);
  board.cu = g.cu;
  all.style.gridTemplateColumns = `repeat(${g.cols}, minmax(0, 1fr))`;
  all.style.gridTemplateRows = `repeat(${g.rows}, minmax(0, 1fr))`;
  show();
}

// The cards of the current page, the page indicator, and a --cu at which they all fit.
function show() {
  const { names, per, page, pages } = board;
  names.forEach((t, i) => { cards[t].hidden = per > 0 && Math.floor(i / per) !== page; });
  const el = document.getElementById("page");
  el.hidden = pages < 2;
  const first = names[page * per], last = names[Math.min(names.length, (page + 1) * per) - 1];
  RB.text(el, pages < 2 ? "" : `page ${page + 1} of ${pages} \u00b7 ${first}\u2013${last}`);
  document.getElementById("tables").dataset.page = page + 1;
  fit();
}

// Shrink the cards' unit until no shown card's content is cut off (a long name wraps, a
// busy state adds chips); each time from the size the grid gives, so cards grow back.
function fit() {
  const all = document.getElementById("tables");
  if (!document.body.classList.contains("tv")) return;
  const shown = board.names.map((t) => cards[t]).filter((c) => !c.hidden);
  const over = () => shown.some((c) => c.scrollHeight > c.clientHeight + 1 || c.scrollWidth > c.clientWidth + 1);
  let cu = board.cu;
  all.style.setProperty("--cu", cu + "px");
  for (let k = 0; k < 16 && over(); k++) {
    cu *= 0.92;
    all.style.setProperty("--cu", cu + "px");
  }
}

// once per frame, however many cards changed or came in a burst (the first snapshots)
const due = { queued: false, layout: false };
function later() {
  if (due.queued) return;
  due.queued = true;
  requestAnimationFrame(() => {
    const again = due.layout;
    due.queued = due.layout = false;
    if (again) layout(); else fit();   // a layout fits too
  });
}
function relayout() { due.layout = true; later(); }
function refit() { later(); }

function card(s) {
  let c = cards[s.table];
  if (!c) {
    c = document.createElement("article"); c.className = "card"; c.id = "table-" + s.table;
    cards[s.table] = c; c.hidden = true;   // shown by the layout, on its page
    document.getElementById("tables").appendChild(c);
    fill(c, s);
    relayout();   // a new table: the grid, the pages and the order change
    return;
  }
  fill(c, s);
  if (!c.hidden) refit();
}

function fill(c, s) {
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
  const cl = s.call;  // the event's match called here (railbird.events)
  if (cl && !cl.began) chips.push('<span class="chip called">' + RB.esc(RB.calledText(cl)) + "</span>");
  else if (cl) chips.push('<span class="chip">' + RB.esc(RB.callTitle(cl)) + "</span>");
  if (!over && s.inplay) chips.push('<span class="chip inplay">' + RB.inplay(s) + "</span>");
  const clock = over ? null : st.shot_clock;   // the shot clock (static/shotclock.js counts it)
  if (clock && clock.status !== "idle") {
    chips.push('<span class="chip shotclock" data-shotclock="' + RB.esc(s.table) +
      '"><b class="sc-num"></b> <span class="sc-note"></span></span>');
  }
  const left = st.balls_on_table || [];
  const rack = over || !st.balls_on_table ? "" : '<div class="mini">' + left.map((k) => RB.ball(k, "small")).join("") +
    '<span class="dim"> ' + left.length + " left</span></div>";
  const foot = [s.game || "no game"];
  if (RB.goalText(s)) foot.push(RB.goalText(s));
  if (st.rack) foot.push("rack " + st.rack);
  foot.push(((s.pockets || {}).total || 0) + " balls today");
  RB.html(c, `<a href="${RB.tableUrl(R.venue, s.table)}">
    <h2><span class="t">${RB.esc(s.table)}</span><span class="sensors ${sensorClass}">${RB.esc(sensorText)}</span></h2>
    ${row(0)}${row(1)}<div class="chips">${chips.join("")}</div>${rack}${RB.health(s)}<div class="foot">${RB.esc(foot.join(" \u00b7 "))}</div></a>`);
  RBClock.set(clock, s.table);
}

// The venue's event (railbird.events): the matches in play, up next, the bracket and the
// standings, as the host renders them (the static export's own fragment), fetched again
// after a table changes, at most once a second.
const ev = { timer: null, calls: "" };
function eventBoard() {
  ev.timer = null;
  fetch("/api/event/" + encodeURIComponent(R.venue)).then((r) => r.ok ? r.json() : null).then((d) => {
    const el = document.getElementById("eventboard");
    const on = !!(d && d.event && !d.event.closed);
    RB.html(el, on ? d.html : "");
    if (el.hidden === on) { el.hidden = !on; relayout(); }
  }).catch(() => {});
}
function eventLater(s) {
  if (s && s.call === undefined) return;
  if (!ev.timer) ev.timer = setTimeout(eventBoard, ev.calls ? 1000 : 0);
  ev.calls = "1";
}
fetch("/api/v/" + encodeURIComponent(R.venue)).then((r) => r.json()).then((d) => d.tables.forEach(card));
RB.live(R.venue, (s) => { card(s); eventLater(s); });
eventBoard();
new ResizeObserver(() => relayout()).observe(document.getElementById("tables"));   // a stale bar, a resize
setInterval(() => {
  if (board.pages < 2) return;
  board.page = (board.page + 1) % board.pages;
  show();
}, ROTATE_S * 1000);
const tick = () => { document.getElementById("clock").textContent = new Date().toLocaleTimeString(); };
tick(); setInterval(tick, 1000);
