"use strict";
// The table page: one table, large, for a phone at the table or a TV across the room.
const R = RB.route();
const $ = (id) => document.getElementById(id);
const BRAND = document.title.replace(/ · table$/, "");
RB.text($("title"), R.table + " \u00b7 " + R.venue);
document.title = BRAND + " \u00b7 " + R.table + " \u00b7 " + R.venue;
$("overlay-link").href = RB.tableUrl(R.venue, R.table, "overlay");
let snap = null;

function show(el, on) { if (el.hidden === on) el.hidden = !on; }

function render(s) {
  snap = s;
  const st = s.state || {}, n = RB.names(s), scores = RB.per(s, "scores");
  const fouls = RB.per(s, "consecutive_fouls"), run = RB.per(s, "run"), high = RB.per(s, "high_run");
  const head = [s.game || "no game"];
  if (RB.goalText(s)) head.push(RB.goalText(s));
  if (st.rack) head.push("rack " + st.rack);
  if (st.inning) head.push("inning " + st.inning);
  RB.text($("game"), head.join(" \u00b7 "));
  const [sensorText, sensorClass] = RB.sensors(s);
  $("online").className = sensorClass;
  RB.text($("online"), sensorText);

  // an abandoned match (REFEREE.md §9) has no result: the table shows "no match"
  const abandoned = st.ended === "abandoned", over = !!st.match_winner || abandoned;
  document.body.classList.toggle("matchover", over);
  show($("over"), over);
  if (abandoned) {
    RB.text($("over-winner"), "No match");
    RB.text($("over-detail"), "the last match was abandoned: no result");
  } else if (over) {
    const w = n.indexOf(st.match_winner), l = 1 - w;
    RB.text($("over-winner"), st.match_winner + " wins the match");
    RB.text($("over-detail"), (scores[w] == null ? "" : scores[w] + " \u2013 " + scores[l] + " against " + n[l]) +
      (RB.goalText(s) ? " \u00b7 " + RB.goalText(s) : "") + (st.inning ? " \u00b7 " + st.inning + " innings" : ""));
  }

  ["a", "b"].forEach((k, i) => {
    RB.name($("name-" + k), n[i]);
    RB.text($("score-" + k), scores[i] == null ? "0" : scores[i]);
    $("score-" + k).classList.toggle("long", String(scores[i]).length > 2);
    $("p" + k).classList.toggle("up", !over && st.at_table === n[i]);
    $("p" + k).classList.toggle("winner", over && st.match_winner === n[i]);
    const meta = [];
    if (st.breaker === n[i] && st.breaking && !over) meta.push("<span>breaks</span>");
    if (RB.byPoints(s.game)) meta.push("<span>run " + (run[i] || 0) + " \u00b7 high " + (high[i] || 0) + "</span>");
    if (fouls[i] && !over) meta.push(RB.fouls(s.game, fouls[i]));
    RB.html($("meta-" + k), meta.join(" \u00b7 "));
  });

  const inHand = over ? "" : RB.inHand(st);
  RB.text($("inhand"), inHand); show($("inhand"), !!inHand);
  $("inhand").dataset.where = st.ball_in_hand || "";
  const call = over ? "" : RB.callHtml(st);
  RB.html($("call"), call); show($("call"), !!call);
  const ip = over ? "" : RB.inplay(s);
  RB.html($("inplay"), ip); show($("inplay"), !!ip);
  const ask = [over ? "" : RB.awaiting(st), RB.esc(RB.provisional(st))].filter(Boolean).join(" \u00b7 ");
  RB.html($("awaiting"), ask); show($("awaiting"), !!ask);
  $("awaiting").classList.toggle("prov", !!RB.provisional(st));

  // presumed facts ("... not reported ... (default)") are for the referee, not the room
  const anns = (s.announcements || []).filter((a) => !/\(default\)$/.test(a.text || ""));
  const b = $("banner");
  RB.text(b, over ? "" : anns.map((a) => a.text).join(" \u2014 "));
  b.className = anns.some((a) => a.level === "foul") ? "foul" : "";

  // rack view: every ball of the game in order, the ones still on the table lit
  const on = new Set(st.balls_on_table || []), size = RB.RACK[s.game] || 15;
  const all = []; for (let k = 1; k <= size; k++) all.push(k);
  RB.html($("balls"), all.map((k) => RB.ball(k, on.has(k) ? "on" : "gone")).join(""));
  RB.text($("left"), (st.balls_on_table || []).length);
  show($("rack"), !over && !!st.balls_on_table);
  const spot = st.to_spot || [];
  RB.html($("spot"), spot.map((k) => RB.ball(k, "on")).join(""));
  show($("spot-row"), spot.length > 0);

  // the event's next match on this table, called and not started yet: "when and where am I up?"
  const c = s.call;
  const called = c && !c.began ? `<div class="called-head">${RB.esc(RB.callTitle(c))}</div>
    <div class="called-match" id="called-match">${RB.esc(RB.calledText(c))}</div>
    <div class="called-where">to table ${RB.esc(R.table)}: the referee starts it</div>` : "";
  RB.html($("called"), called); show($("called"), !!called);
  if (c && c.began) head.push(RB.callTitle(c));
  if (c && c.began) RB.text($("game"), head.join(" \u00b7 "));

  RB.html($("nodes"), RB.nodeChips(s));
  RB.html($("health"), RB.health(s));
  const pk = s.pockets || {}, bp = pk.by_pocket || {};
  RB.html($("pockets"), RB_VOCAB.pockets
    .map((p) => `<div id="pocket-${p}">${p}<b>${bp[p] || 0}</b></div>`).join(""));
  RB.text($("hours"), "today (" + (pk.day || "") + "): " + (pk.total || 0) +
          " balls \u00b7 by hour: " + Object.entries(pk.by_hour || {}).map(([h, c]) => h + "h " + c).join(", "));
  RB.text($("games"), "by game: " + (pk.by_game || [])
          .map((g) => (g.game || "?") + " rack " + g.rack + ": " + g.balls).join(", "));
  RBClock.set(over ? null : st.shot_clock);
  if ("referee" in s) referee(s.referee);
}

function referee(on) {   // the referee app's link, or why there is none
  RB.html($("ref-link"), on
    ? '<a href="' + RB.tableUrl(R.venue, R.table, "referee") + '">referee</a>'
    : '<span class="dim">referee input is off on this host (no referee PIN configured)</span>');
}

fetch("/api/v/" + encodeURIComponent(R.venue) + "/" + encodeURIComponent(R.table))
  .then((r) => r.ok ? r.json() : null).then((s) => { if (s) { referee(s.referee); if (!snap) render(s); } });
RB.live(R.venue, (s) => { if (s.table === R.table) render(s); }, R.table);
