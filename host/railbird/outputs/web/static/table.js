"use strict";
const R = RB.route();
document.getElementById("title").textContent = R.table + " \u00b7 " + R.venue;
let snap = null;

function render(s) {
  snap = s;
  const st = s.state || {}, n = RB.names(s), scores = RB.per(s, "scores");
  const fouls = RB.per(s, "consecutive_fouls"), run = RB.per(s, "run"), high = RB.per(s, "high_run");
  RB.text(document.getElementById("game"), (s.game || "no game") + (st.rack ? " \u00b7 rack " + st.rack : ""));
  const on = document.getElementById("online");
  on.className = s.online ? "online" : "offline";
  RB.text(on, s.online ? "sensors online" : "sensors offline");
  ["a", "b"].forEach((k, i) => {
    RB.text(document.getElementById("name-" + k), n[i]);
    RB.text(document.getElementById("score-" + k), scores[i] == null ? "0" : scores[i]);
    document.getElementById("p" + k).classList.toggle("up", st.at_table === n[i]);
    const meta = [];
    if (st.breaker === n[i] && s.game !== "14.1") meta.push("breaks");
    if (s.game === "14.1") meta.push("run " + (run[i] || 0) + " \u00b7 high " + (high[i] || 0));
    if (fouls[i]) meta.push((fouls[i] >= 2 ? '<span class="warn">' : "<span>") + fouls[i] +
                            (fouls[i] >= 2 ? " FOULS \u2013 warning" : " foul") + "</span>");
    const el = document.getElementById("meta-" + k), html = meta.join(" \u00b7 ");
    if (el.innerHTML !== html) el.innerHTML = html;
  });
  const goal = /goal=(\d+)/.exec(s.fen || st.fen || "");
  const line = [];
  if (goal) line.push((s.game === "14.1" ? "to " : "race to ") + goal[1]);
  if (st.ball_in_hand) line.push("ball in hand (" + st.ball_in_hand + ")");
  if (st.awaiting) line.push("waiting for: " + st.awaiting.replace(/_/g, " "));
  if (st.match_winner) line.push(st.match_winner + " wins the match");
  RB.text(document.getElementById("line"), line.join(" \u00b7 "));
  const anns = s.announcements || [], b = document.getElementById("banner");
  RB.text(b, anns.map((a) => a.text).join(" \u2014 "));
  b.className = anns.some((a) => a.level === "foul" || /^foul/i.test(a.text)) ? "foul" : "";
  const pk = s.pockets || {}, bp = pk.by_pocket || {};
  document.getElementById("pockets").innerHTML = ["HL", "HR", "SL", "SR", "FL", "FR"]
    .map((p) => `<div id="pocket-${p}">${p}<b>${bp[p] || 0}</b></div>`).join("");
  RB.text(document.getElementById("hours"), "today (" + (pk.day || "") + "): " + (pk.total || 0) +
          " balls \u00b7 by hour: " + Object.entries(pk.by_hour || {}).map(([h, c]) => h + "h " + c).join(", "));
  RB.text(document.getElementById("games"), "by game: " + (pk.by_game || [])
          .map((g) => (g.game || "?") + " rack " + g.rack + ": " + g.balls).join(", "));
  const ls = s.last_shot;
  const unc = st.unconfirmed || [];
  RB.text(document.getElementById("last-shot"), (ls ? "shot " + ls.n + ": " + ((ls.pocketed || [])
          .map((p) => p.pocket + ":" + (p.ball == null ? "?" : p.ball) + (p.source === "inferred" ? "(inferred)" : ""))
          .join(" ") || "nothing pocketed") : "no shot yet") +
          (unc.length ? " \u2014 uncertain: " + unc.join(", ") + " (confirm or correct)" : ""));
}

fetch("/api/v/" + encodeURIComponent(R.venue) + "/" + encodeURIComponent(R.table))
  .then((r) => r.ok ? r.json() : null).then((s) => { if (s && !snap) render(s); });
RB.live(R.venue, (s) => { if (s.table === R.table) render(s); });

// -- referee panel -------------------------------------------------------------------
const pinEl = document.getElementById("pin");
pinEl.value = sessionStorage.getItem("rb-pin-" + R.venue) || "";
pinEl.addEventListener("change", () => sessionStorage.setItem("rb-pin-" + R.venue, pinEl.value));
const ballSel = document.getElementById("call-ball"), pocketSel = document.getElementById("call-pocket");
for (let i = 1; i <= 15; i++) ballSel.add(new Option(String(i), String(i)));
["HL", "HR", "SL", "SR", "FL", "FR"].forEach((p) => pocketSel.add(new Option(p, p)));

function inputsFor(btn) {
  const act = btn.dataset.act;
  if (act === "call") return [{ type: "call", ball: +ballSel.value, pocket: pocketSel.value }];
  if (act === "safety") return [{ type: "call", safety: true }];
  if (act === "push_out") return [{ type: "push_out" }];
  if (act === "undo") return [{ type: "undo" }];
  if (act === "option") return [{ type: "option", choice: btn.dataset.choice }];
  if (act === "foul") {
    const rule = document.getElementById("foul-rule").value.trim();
    if (!rule) throw new Error("enter the rule of the foul");
    return [{ type: "shot", pocketed: [], fouls: [rule] }];
  }
  if (act === "confirm") {
    // protocol/REFEREE.md §3a: with no field filled in, confirm the last shot's uncertain
    // facts as sensed; otherwise correct the last shot with the facts given (the rules
    // re-rule it and re-apply later inputs). "-" in balls: nothing was pocketed.
    const inp = { type: "confirm" };
    const balls = document.getElementById("fix-balls").value.trim();
    if (balls) inp.pocketed = balls === "-" ? [] : balls.split(/\s+/).filter(Boolean)
      .map((w) => { const [p, b] = w.toUpperCase().split(":");
        return (b === undefined || b === "?" || b === "") ? { pocket: p } : { pocket: p, ball: +b }; });
    const first = document.getElementById("fix-first").value.trim();
    if (first) inp.first_contact = first === "-" ? null : +first;
    const foul = document.getElementById("fix-foul").value.trim();
    if (foul) inp.fouls = [foul];
    return [inp];
  }
  throw new Error("unknown action " + act);
}

async function send(btn) {
  const status = document.getElementById("ref-status");
  let inputs;
  try { inputs = inputsFor(btn); } catch (e) { status.className = "err"; status.textContent = e.message; return; }
  status.className = ""; status.textContent = "sending\u2026";
  try {
    const r = await fetch("/api/v/" + encodeURIComponent(R.venue) + "/" + encodeURIComponent(R.table) + "/referee", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ pin: pinEl.value, inputs }) });
    const res = await r.json().catch(() => ({}));
    status.className = r.ok ? "ok" : "err";
    status.textContent = r.ok ? "applied: " + inputs.map((i) => i.type).join(", ")
      : (r.status === 403 ? "refused: PIN wrong or missing" : "refused: " + (res.error || r.status));
  } catch (e) { status.className = "err"; status.textContent = "no answer from the host"; }
}
document.querySelectorAll("#ref button[data-act]").forEach((b) => b.addEventListener("click", () => send(b)));
