"use strict";
// The event director's page, on a phone or a laptop: sign in with the director PIN, make
// the event (players, format, game, race) and draw it; then watch the matches called to
// the tables, call one by hand, turn the automatic calling off or on, record a no-show.
// Everything the event is lives in the host's journal; the page only asks and shows.
const R = RB.route();
const V = encodeURIComponent(R.venue);
const API = "/api/director/" + V;
const $ = (id) => document.getElementById(id);
RB.text($("title"), R.venue + " \u00b7 director");
let session = null, view = null, error = "";

async function call(method, url, body) {
  const r = await fetch(url, { method, credentials: "same-origin",
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined });
  let data = {};
  try { data = await r.json(); } catch (e) { /* no body */ }
  return { status: r.status, data };
}

async function load() {
  try {
    session = (await call("GET", API + "/session")).data;
    const d = (await call("GET", "/api/event/" + V)).data;
    view = d.event;
    RB.html($("eventboard"), d.html || "");
  } catch (e) { error = "No answer from the host: it tries again by itself."; }
  render();
}

async function act(what, body) {
  const r = await call("POST", API + "/" + what, body || {});
  error = r.status === 200 ? "" : (r.data.error || "refused (" + r.status + ")");
  if (r.data.signin) session.signed_in = false;
  await load();
}

function signInView() {
  return `<div class="card" id="signin"><h2>Sign in to run the event</h2>
    <p class="hint">The director's PIN (not the referee's).</p>
    <input id="pin" type="password" inputmode="numeric" autocomplete="off" aria-label="director PIN">
    <button class="primary" id="btn-signin">Sign in</button></div>`;
}

function createView() {
  const games = Object.keys(RB_VOCAB.games).map((g) => `<option>${RB.esc(g)}</option>`).join("");
  return `<div class="card" id="create"><h2>New event</h2>
    <label>Name <input id="ev-name" value=""></label>
    <label>Format <select id="ev-format"><option value="double_elimination">double elimination</option>
      <option value="single_elimination">single elimination</option><option value="round_robin">round robin</option></select></label>
    <label>Game <select id="ev-game">${games}</select></label>
    <label>Race to (points for 14.1) <input id="ev-goal" type="number" min="1" value="3"></label>
    <label>Draw <select id="ev-seeding"><option value="drawn">drawn at random</option>
      <option value="seeded">seeded: in the order below</option></select></label>
    <label>Shot clock <select id="ev-clock"><option value="">off</option>
      <option value="wpa">WPA: 35 s a shot, warning at 10, one 25 s extension a rack</option></select></label>
    <label>Seconds a shot (blank: the preset's) <input id="ev-clock-s" type="number" min="5" max="300"></label>
    <label>Players, one a line <textarea id="ev-players" rows="8"></textarea></label>
    <button class="primary" id="btn-create">Draw and start</button></div>`;
}

// The event's shot clock as the match input takes it (protocol/REFEREE.md §9b): null is
// none; the preset's numbers, with the shot time the director typed
function clockForm() {
  const preset = $("ev-clock").value, secs = $("ev-clock-s").value;
  if (!preset) return null;
  return secs ? { preset, shot_s: +secs } : { preset };
}

function eventView(v) {
  const free = v.free_tables || [];
  const calls = Object.entries(v.calls || {}).map(([t, c]) =>
    `<li data-table="${RB.esc(t)}"><b>${RB.esc(t)}</b> ${RB.esc(c.match)} ${RB.esc(c.players.join(" v "))}
     ${c.began ? "playing" : "called"}
     <button class="quiet" data-forfeit="${RB.esc(c.match)}" data-winner="0">${RB.esc(c.players[1])} no-show</button>
     <button class="quiet" data-forfeit="${RB.esc(c.match)}" data-winner="1">${RB.esc(c.players[0])} no-show</button></li>`).join("");
  const up = (v.up_next || []).map((u) =>
    `<li>${RB.esc(u.match)}: ${RB.esc(u.players.join(" v "))} ${free.map((t) =>
      `<button data-assign="${RB.esc(u.match)}" data-table="${RB.esc(t)}">to ${RB.esc(t)}</button>`).join(" ")}</li>`).join("");
  return `<div class="card" id="running"><h2>${RB.esc(v.name || "Event")}${v.complete ? " \u2014 complete" : ""}</h2>
    <label><input type="checkbox" id="auto"${v.auto ? " checked" : ""}> call matches to free tables by themselves</label>
    <h3>On the tables</h3><ul id="dir-calls">${calls || "<li>none</li>"}</ul>
    <h3>Up next</h3><ul id="dir-up">${up || "<li>none</li>"}</ul>
    <button class="quiet" id="btn-close">Close the event</button></div>`;
}

function render() {
  const app = $("app");
  let html = error ? `<p class="hint" id="error" role="alert">${RB.esc(error)}</p>` : "";
  if (!session) html += '<p class="hint">Loading…</p>';
  else if (!session.director) html += `<div class="card" id="off"><h2>The director's page is off</h2>
    <p class="hint">This host has no <code>director_pin</code>.</p></div>`;
  else if (!session.signed_in) html += signInView();
  else if (!view || view.closed) html += createView();
  else html += eventView(view);
  // the new event's form is drawn once: a redraw would lose what is being typed
  if (app.dataset.html !== html && !(html.includes('id="create"') && $("create") && app.dataset.error === error)) {
    app.innerHTML = html;
    app.dataset.html = html;
    app.dataset.error = error;
  }
}

document.addEventListener("click", (e) => {
  const b = e.target.closest("button, input[type=checkbox]");
  if (!b) return;
  if (b.id === "btn-signin") {
    call("POST", API + "/session", { pin: $("pin").value }).then((r) => {
      error = r.status === 200 ? "" : (r.data.error || "refused");
      load();
    });
  } else if (b.id === "btn-create") {
    act("event", { name: $("ev-name").value, format: $("ev-format").value, game: $("ev-game").value,
      goal: +$("ev-goal").value, seeding: $("ev-seeding").value, seed: Date.now() % 1000000,
      players: $("ev-players").value.split("\n"), shot_clock: clockForm() });
  } else if (b.id === "auto") act("auto", { on: b.checked });
  else if (b.id === "btn-close") { if (confirm("Close the event? Its results stay in the journal.")) act("close"); }
  else if (b.dataset.assign) act("assign", { match: b.dataset.assign, table: b.dataset.table });
  else if (b.dataset.forfeit) act("forfeit", { match: b.dataset.forfeit, winner: +b.dataset.winner });
});

let timer = null;
RB.live(R.venue, () => { if (!timer) timer = setTimeout(() => { timer = null; load(); }, 500); });
load();
setInterval(load, 10000);
const tick = () => { $("clock").textContent = new Date().toLocaleTimeString(); };
tick(); setInterval(tick, 1000);
