"use strict";
// Streaming overlay (a browser source in OBS and the like): a score bar on a transparent page.
const R = RB.route();
const $ = (id) => document.getElementById(id);
let got = false;

function render(s) {
  got = true;
  const st = s.state || {}, n = RB.names(s), sc = RB.per(s, "scores"), fouls = RB.per(s, "consecutive_fouls");
  const abandoned = st.ended === "abandoned", over = !!st.match_winner || abandoned;
  ["a", "b"].forEach((k, i) => {
    RB.name($("name-" + k), n[i]);
    RB.text($("score-" + k), sc[i] == null ? 0 : sc[i]);
    $("p" + k).classList.toggle("up", !over && st.at_table === n[i]);
    $("p" + k).classList.toggle("won", over && st.match_winner === n[i]);
    const f = over ? 0 : fouls[i] || 0;
    RB.html($("fouls-" + k), f ? '<span class="long">' + f + (f === 1 ? " FOUL" : " FOULS") +
      '</span><span class="short">' + f + "F</span>" : "");
    $("fouls-" + k).classList.toggle("warn", f >= 2 && RB.threeFouls(s.game));
  });
  RB.text($("race"), RB.goalText(s) || s.game || "");
  // the event and the round; before the called match starts, the match it is
  const c = s.call, ev = c ? (c.began ? RB.callTitle(c) : RB.callTitle(c) + " \u00b7 " + RB.calledText(c)) : "";
  RB.text($("event"), ev); $("event").hidden = !ev;
  RB.text($("over"), abandoned ? "No match" : over ? st.match_winner + " wins the match" : "");
  $("over").hidden = !over;
  const ih = [over ? "" : RB.inHand(st).replace("Ball in hand", "BALL IN HAND"),
    RB.provisional(st).toUpperCase()].filter(Boolean).join(" \u00b7 ");
  RB.text($("inhand"), ih); $("inhand").hidden = !ih;
  RB.html($("balls"), over ? "" : (st.balls_on_table || []).map((k) => RB.ball(k)).join(""));
  // the shot in play, provisional until its ruling replaces it (as on the table page)
  const ip = over ? "" : RB.inplay(s);
  RB.html($("inplay"), ip); $("inplay").hidden = !ip;
  RBClock.set(over ? null : st.shot_clock);
}

fetch("/api/v/" + encodeURIComponent(R.venue) + "/" + encodeURIComponent(R.table))
  .then((r) => r.ok ? r.json() : null).then((s) => { if (s && !got) render(s); });
RB.live(R.venue, (s) => { if (s.table === R.table) render(s); }, R.table);
