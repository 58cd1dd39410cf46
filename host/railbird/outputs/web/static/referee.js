// Railbird referee app: one table, on a phone. It shows only the inputs valid now (from the
// table's state), sends each action once with an idempotency id, keeps the actions the host
// has not applied yet in a queue (retried with the same id, kept across a reload), and
// reconnects its live stream by itself. Sign-in is one PIN entry per device: the host keeps
// the session in an HttpOnly cookie, the page never stores the PIN.
"use strict";
(() => {
  const PATH = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const VENUE = PATH[1];
  const TABLE = PATH[2] === "t" ? PATH[3] : PATH[2];
  const enc = encodeURIComponent;
  const API = "/api/v/" + enc(VENUE);
  const TAPI = API + "/" + enc(TABLE);
  const SESSION = "/api/session/" + enc(VENUE);
  const QKEY = "rb-referee-queue:" + VENUE + ":" + TABLE;
  const POCKETS = ["FL", "FR", "SL", "SR", "HL", "HR"];
  const POCKET_NAMES = { HL: "head left", HR: "head right", SL: "side left", SR: "side right",
    FL: "foot left", FR: "foot right" };
  // 1 yellow, 2 blue, 3 red, 4 purple, 5 orange, 6 green, 7 maroon, 8 black; 9-15 striped
  const COLOURS = [null, "#f2c300", "#1d4fc4", "#d7261e", "#5b2a86", "#f26d0f", "#11823b",
    "#7a1d22", "#111111"];
  // the games' facts, generated from the rules classes (games.js)
  const RACK = Object.fromEntries(Object.entries(RB_VOCAB.games).map(([g, f]) => [g, f.rack]));
  const GAMES = Object.keys(RB_VOCAB.games);
  // 14.1 is played to points (a target), the others are races to racks won
  const byPoints = (g) => (RB_VOCAB.games[g] || {}).unit === "points";
  const goalKey = (g) => (RB_VOCAB.games[g] || { goal: "race_to" }).goal;
  const RB_CALL_GOAL = (c) => (byPoints(c.game) ? "to " : "race to ") + c.goal;
  const RB_CALL_TITLE = (c) => "Next match" + (c.event ? ": " + c.event : "") + " · " + c.round_name;
  const FACT_NAMES = { pocketed: "which balls dropped", first_contact: "first ball hit",
    rail_after_contact: "rail after contact", object_balls_to_rail: "balls driven to a rail",
    cue_ball_to_rail: "cue ball to a rail", off_table: "cue ball off the table" };

  let snap = null;          // the table's latest snapshot (server-sent)
  let session = null;       // {referee, signed_in}
  const fouls = {};         // game -> declarable fouls, from the host (one source with the rules)
  let shown = null;         // {label, rulings, error, pending} of the latest action or ruling
  let lastAnns = "";
  let ui = { ball: null, lag: null, rerack: null, pin: "" };
  let queue = loadQueue();
  // Input the host refused as stale (made for a state the table has left, REFEREE.md §9
  // "Revisions"): never sent again by itself; the referee applies it anew or drops it.
  let asked = [];
  // The last shot's card and the revision it was made for: once the table's state moves on
  // (a foul declared, another phone's input) its buttons are greyed and disabled.
  let card = null;
  let live = null;  // the live stream: null until it first opens or fails
  let sending = false, retryTimer = null, lastHeard = 0, beats = false, es = null;

  // -- helpers ---------------------------------------------------------------------------
  const $ = (id) => document.getElementById(id);
  const esc = (v) => String(v).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
  const st = () => (snap && snap.state) || null;
  const names = () => { const s = st(); return (s && s.players) || ["A", "B"]; };
  const per = (v, i) => (Array.isArray(v) ? v[i] : v && typeof v === "object" ? v[names()[i]] : null);
  const other = (n) => names().find((x) => x !== n) || "";
  const rule = (r) => (r ? ` <span class="rule">(${esc(r)})</span>` : "");
  const goal = () => { const g = ((snap && snap.state) || {}).goal; return g == null ? null : +g; };

  function newId() {
    const b = new Uint8Array(12);
    crypto.getRandomValues(b);  // crypto.randomUUID needs a secure context; the LAN is http
    return "app-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }

  function ballHtml(n, extra = "", tag = "span", more = "") {
    const stripe = n >= 9, c = n == null ? "#555" : n === 0 ? "#f4f1e8" : COLOURS[stripe ? n - 8 : n];
    const cls = "ball" + (n == null ? " unknown" : "") + (stripe ? " stripe" : "") +
      (n === 0 ? " cue" : "") + (more ? " " + more : "");
    const label = n == null ? "ball not identified" : n === 0 ? "cue ball" : "ball " + n;
    const num = n == null ? "?" : n === 0 ? "" : n;
    return `<${tag} class="${cls}" style="--c:${c}" aria-label="${label}" ${extra}><i>${num}</i></${tag}>`;
  }

  function pocketName(p) { return POCKET_NAMES[p] ? `${p} (${POCKET_NAMES[p]})` : p; }

  function describe(inp) {
    switch (inp.type) {
      case "call": return inp.safety ? "Safety" : `Call the ${inp.ball} in ${pocketName(inp.pocket)}`;
      case "push_out": return "Push-out";
      case "option": return "Option: " + inp.choice;
      case "lag": return `Lag: ${inp.winner} won, ${inp.breaker || inp.winner} breaks`;
      case "rerack": return "Re-rack answers";
      case "undo": return "Undo";
      case "stalemate": return "Stalemate";
      case "concede": return `${inp.player} concedes`;
      case "abandon": return "Abandon the match";
      case "match": return "New match" + (inp.players ? ": " + inp.players.join(" v ") : "");
      case "clock": return "Shot clock: " + inp.action;
      case "shot": return "Foul: " + (inp.fouls || []).map(foulName).join(", ");
      case "confirm": {
        const keys = Object.keys(inp).filter((k) => k !== "type");
        if (keys.length === 1 && inp.fouls) return "Foul on the last shot: " + inp.fouls.map(foulName).join(", ");
        return keys.length ? "Correct the last shot: " + keys.map((k) => FACT_NAMES[k] || k).join(", ")
          : "Confirm the last shot as sensed";
      }
      default: return inp.type;
    }
  }

  function foulName(code) {
    const f = (fouls[(st() || {}).game] || []).find((x) => x.declare === code);
    return f ? `${f.name} (${f.rule})` : code;
  }

  // -- what is valid now -----------------------------------------------------------------
  // The host lists the inputs acceptable now in the state (`valid_inputs`, REFEREE.md "Match
  // control through the host"), with the choices, callable balls and re-rack questions.
  function valid() {
    const s = st(), v = { types: new Set(), choices: [], balls: [], safety: false,
      fields: null, correct: false, check: null, facts: null };
    for (const x of s ? s.valid_inputs || [] : [{ type: "match" }]) {
      v.types.add(x.type);
      if (x.type === "option") v.choices = x.choices || [];
      if (x.type === "call") { v.balls = x.balls || []; v.safety = !!x.safety; }
      if (x.type === "rerack") v.fields = x.fields || null;
      if (x.type === "confirm") {
        v.correct = !!x.correct; v.check = x.choices || null;
        v.facts = x.facts || null;  // the last shot's facts in force (REFEREE.md §3c)
      }
    }
    return v;
  }

  function over(s) { return !!(s && (s.match_winner || s.ended)); }

  function onTable() {
    const s = st() || {};
    return [...new Set([...(s.balls_on_table || []), ...(s.to_spot || [])])].sort((a, b) => a - b);
  }

  // -- the queue: sent once, retried with the same id until the host answers -------------
  function loadQueue() {
    try { return JSON.parse(localStorage.getItem(QKEY) || "[]"); } catch (e) { return []; }
  }
  function saveQueue() {
    try { localStorage.setItem(QKEY, JSON.stringify(queue)); } catch (e) { /* private mode */ }
  }

  function act(input, extra = {}) {
    // the revision this input is made for: the one on screen now, or the card's
    const rev = extra.rev !== undefined ? extra.rev : (snap && snap.rev) || null;
    queue.push(Object.assign({ id: newId(), input, label: describe(input), tries: 0 }, extra, { rev }));
    saveQueue();
    closeSheet();
    renderQueue();
    pump();
  }

  async function request(method, url, body, timeoutMs = 8000) {
    const ctl = new AbortController(), timer = setTimeout(() => ctl.abort(), timeoutMs);
    try {
      const r = await fetch(url, { method, signal: ctl.signal, credentials: "same-origin",
        headers: body === undefined ? {} : { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body) });
      const data = await r.json().catch(() => ({}));
      return { status: r.status, data };
    } finally { clearTimeout(timer); }
  }

  async function pump() {
    if (sending || !queue.length || !(session && session.signed_in)) return;
    sending = true;
    clearTimeout(retryTimer);
    retryTimer = null;
    const item = queue[0];
    let retry = false;
    try {
      const body = { id: item.id, input: item.input };
      if (item.undo_key != null) body.undo_key = item.undo_key;
      if (item.rev) body.rev = item.rev;
      const r = await request("POST", TAPI + "/referee", body);
      if (r.status === 200) {
        queue.shift();
        const d = r.data || {};
        shown = { label: item.label, rulings: d.rulings || [], pending: d.pending,
          facts: d.facts, repeat: d.repeat || d.duplicate };
        if (d.state && snap) { snap.state = d.state; }
        if (d.rev && snap) snap.rev = d.rev;
        if (item.card && card && d.rev) card.rev = d.rev;  // the card's own correction
        ui.ball = null;
      } else if (r.status === 409 && r.data && r.data.stale) {
        // the table moved on before it got there (an outage, another phone): not applied,
        // and not sent again by itself; the referee is asked once more
        queue.shift();
        asked.push({ input: item.input, label: item.label, error: r.data.error || "stale" });
        shown = null;
      } else if (r.status === 401 || (r.status === 403 && r.data && r.data.signin)) {
        session.signed_in = false;  // the session ended: sign in again, then the queue goes on
      } else if (r.status >= 500 || r.status === 429 || r.status === 408) {
        retry = true;
        item.error = (r.data && r.data.error) || "host busy (" + r.status + ")";
      } else {
        queue.shift();
        shown = { label: item.label, error: (r.data && r.data.error) || "refused (" + r.status + ")" };
      }
    } catch (e) {
      retry = true;
      item.error = "no answer from the host";
    }
    if (retry) {
      item.tries += 1;
      retryTimer = setTimeout(pump, Math.min(8000, 500 * 2 ** Math.min(item.tries, 4)));
    }
    saveQueue();
    sending = false;
    render();
    if (!retry && queue.length) pump();
  }

  function renderQueue() {
    const q = $("queue");
    if (!queue.length) { q.hidden = true; q.textContent = ""; return; }
    q.hidden = false;
    const head = queue[0];
    q.className = head.tries ? "err" : "";
    q.dataset.count = queue.length;
    q.textContent = "Not applied yet: " + queue.map((x) => x.label).join(" · ") +
      (session && !session.signed_in ? " (sign in to send)" :
        head.tries ? ` (${head.error || "retrying"}; retry ${head.tries})` : " (sending…)");
  }

  // -- the live stream: reconnects by itself ---------------------------------------------
  function connect() {
    if (es) es.close();
    es = new EventSource("/events/v/" + enc(VENUE));
    es.addEventListener("table", (e) => {
      lastHeard = Date.now();
      const s = JSON.parse(e.data);
      if (s.table === TABLE) onSnapshot(s);
    });
    es.addEventListener("host", (e) => {
      lastHeard = Date.now(); beats = true; setLive(true);
      RBClock.noteHost(JSON.parse(e.data), lastHeard);
    });
    es.onopen = () => { lastHeard = Date.now(); setLive(true); pump(); };
    es.onerror = () => {
      setLive(false);
      // EventSource retries by itself unless the answer was not a stream: then we do
      if (es.readyState === EventSource.CLOSED) setTimeout(connect, 2000);
    };
  }
  setInterval(() => {
    // a stream that went silent (a dropped Wi-Fi that never errored): open a fresh one.
    // The host beats every second; an older host only sends a keep-alive every 15 s.
    if (lastHeard && Date.now() - lastHeard > (beats ? 5000 : 20000)) {
      lastHeard = Date.now();
      setLive(false);
      connect();
    }
    if (queue.length && !sending && !retryTimer) pump();
  }, 2000);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") { connect(); pump(); }
  });
  window.addEventListener("online", () => { connect(); pump(); });

  function setLive(on) {
    const c = $("conn");
    c.className = "conn " + (on ? "on" : "off");
    c.textContent = on ? "live" : "offline: reconnecting…";
    if (on !== live) {
      live = on;
      document.body.classList.toggle("offline", !on);  // scores greyed (referee.css)
      render();
    }
  }

  function onSnapshot(s) {
    const anns = JSON.stringify(s.announcements || []);
    if (anns !== lastAnns && (s.announcements || []).length) {
      shown = { label: null, rulings: s.announcements };
    }
    lastAnns = anns;
    const before = snap && snap.game;
    snap = s;
    if (s.last_shot && (!card || card.n !== s.last_shot.n)) card = { n: s.last_shot.n, rev: s.rev || null };
    if (s.game && s.game !== before) loadFouls(s.game);
    render();
    RBClock.set((s.state || {}).shot_clock);
  }

  async function loadFouls(game) {
    if (fouls[game]) return;
    try {
      const r = await request("GET", "/api/fouls/" + enc(game));
      if (r.status === 200) { fouls[game] = r.data.fouls; }
    } catch (e) { /* offered again on the next snapshot */ }
  }

  // -- rendering -------------------------------------------------------------------------
  function render() {
    $("where").textContent = TABLE + " · referee";
    renderQueue();
    const app = $("app");
    if (!session) { app.innerHTML = '<p class="hint">Loading…</p>'; return; }
    if (!session.referee) {
      app.innerHTML = `<div class="card" id="off"><h2>Referee input is off</h2><p class="hint">
        This host has no referee PIN (<code>referee_token</code>) for the venue.</p></div>`;
      return;
    }
    if (!session.signed_in) { app.innerHTML = signInView(); return; }
    if (!snap) { app.innerHTML = '<p class="hint" id="waiting">Waiting for the table…</p>'; return; }
    const s = st(), v = valid();
    // what the referee acts on comes first, under the thumb; the ruling of the last action
    // right below it
    let html = offlineView() + calledView() + scoresView(s) + clockView(s) + inplayView(s) + askedView();
    if (!s) html += noMatchView();
    else if (over(s)) html += overView(s, v);
    else if (v.types.has("lag")) html += lagView(s);
    else if (v.types.has("option")) html += optionView(s, v);
    else if (v.check) html += checkView(s, v);
    else html += playView(s, v);
    if (s && (s.provisional || []).length) html += provisionalView(s, v);
    html += rulingsView();
    // the last shot, while it can be confirmed or corrected (a shot of this match)
    if (shotShown(s, v)) html += shotView(s, v);
    html += toolsView(s, v);
    app.innerHTML = html;
    keepAwake();
  }

  // The phone stays awake while a match is in play (Screen Wake Lock). Browsers give it
  // only to a secure page (https, or localhost): over plain http on the LAN it is not
  // there, and the phone's own sleep setting applies (docs/displays.md).
  let wake = null, waking = false;
  async function keepAwake() {
    if (!("wakeLock" in navigator) || waking) return;
    const s = st(), want = !!(s && !over(s) && document.visibilityState === "visible");
    if (want && !wake) {
      waking = true;
      try {
        wake = await navigator.wakeLock.request("screen");
        wake.addEventListener("release", () => { wake = null; });
      } catch (e) { wake = null; /* refused (battery saver): nothing to do */ }
      waking = false;
    } else if (!want && wake) { const w = wake; wake = null; w.release().catch(() => {}); }
  }
  // the lock is released whenever the page is hidden; it is asked again on return
  document.addEventListener("visibilitychange", () => keepAwake());

  // The shot in play, as the sensors see it while the balls roll (the host's provisional
  // `inplay`, pushed on every drop): the referee sees the drop as the TV does, not only
  // when the shot is ruled. It goes when the shot closes and its ruling arrives.
  function inplayView(s) {
    const ip = snap.inplay;
    if (!s || !ip || over(s)) return "";
    const pk = ip.pocketed || [];
    const drops = pk.map((p) => `<div class="drop">${ballHtml(p.ball === 0 ? 0 : Number.isInteger(p.ball) ? p.ball : null)}
      <span>${esc(ballWords(Number.isInteger(p.ball) ? p.ball : null))} in ${esc(pocketName(p.pocket))}</span><span></span></div>`).join("");
    return `<div class="card shot inplay" id="inplay" aria-live="polite"><h2>In play <span class="badge presumed">provisional</span></h2>
      <div class="drops">${drops || '<div class="facts">shot in play: nothing down yet</div>'}</div>
      <p class="hint">Ruled when the balls stop; which ball it was is said on the last shot's card.</p></div>`;
  }

  function offlineView() {
    if (live !== false) return "";  // not before the first attempt has failed
    return `<div class="card offline" id="offline" role="alert"><b>Offline: no connection to the host.</b>
      <p class="hint">The scores below may be out of date. What you enter waits in the list at the
      bottom and is sent when the host is back; if the table has moved on by then, you are asked again.</p></div>`;
  }

  function askedView() {
    if (!asked.length) return "";
    const a = asked[0];
    return `<div class="card refused" id="asked"><h2>Not applied: the table changed first</h2>
      <p><b id="asked-what">${esc(a.label)}</b>${asked.length > 1 ? ` <span class="tag">+${asked.length - 1} more</span>` : ""}</p>
      <p class="hint" id="asked-why">${esc(a.error)}</p><div class="grid2">
      <button class="primary" data-act="asked-send" id="btn-asked-send">Apply it now</button>
      <button class="quiet" data-act="asked-drop" id="btn-asked-drop">Drop it</button></div></div>`;
  }

  function signInView() {
    const keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "del", "0", "ok"];
    return `<div class="card" id="signin"><h2>Sign in to referee ${esc(TABLE)}</h2>
      <p class="hint">Enter the venue PIN once; this phone stays signed in for the evening.</p>
      <div class="pin" id="pin-dots" aria-label="PIN">${"•".repeat(ui.pin.length) || "&nbsp;"}</div>
      <div class="keypad">${keys.map((k) => k === "del"
        ? '<button class="quiet" data-act="pin-del" aria-label="delete">⌫</button>'
        : k === "ok" ? '<button class="primary ok" data-act="pin-ok" id="pin-ok">Sign in</button>'
        : `<button data-act="pin-key" data-key="${k}">${k}</button>`).join("")}</div>
      ${ui.pinError ? `<p class="hint" id="pin-error" style="color:var(--bad)">${esc(ui.pinError)}</p>` : ""}
      </div>`;
  }

  function scoresView(s) {
    if (!s) return "";
    const n = names(), fo = s.consecutive_fouls, g = goal();
    const cards = [0, 1].map((i) => {
      const meta = [];
      const f = per(fo, i) || 0;
      // a foul count means something only while there is a next shot (6.14)
      if (f && !over(s)) meta.push(f >= 2 ? `<span class="warn">${f} fouls: warning</span>` : "1 foul");
      if (byPoints(s.game)) meta.push("run " + (per(s.run, i) || 0));
      if (s.breaker === n[i] && s.breaking && !byPoints(s.game)) meta.push("breaks");
      const up = s.at_table === n[i];
      return `<div class="player${up ? " up" : ""}" id="p${i}" data-up="${up ? 1 : 0}">
        <div class="name">${esc(n[i])}</div><div class="score" id="score-${i}">${per(s.scores, i) ?? 0}</div>
        <div class="meta" id="meta-${i}">${meta.join(" · ")}</div></div>`;
    }).join("");
    const line = [`<span>${esc(s.game)}${g ? (byPoints(s.game) ? " to " : " · race to ") + g : ""}</span>`];
    if (!byPoints(s.game)) line.push("<span>rack " + (s.rack || 1) + "</span>");
    if (s.inning) line.push("<span>inning " + s.inning + "</span>");
    if (s.ball_in_hand) {
      line.push(`<span class="badge" id="bih">ball in hand${s.ball_in_hand === "kitchen" ? " behind the head string" : " anywhere"}</span>`);
    }
    if (s.call && typeof s.call === "object") line.push(`<span id="call">call: ${s.call.ball} in ${s.call.pocket}</span>`);
    else if (s.call === "safety") line.push('<span id="call">safety called</span>');
    else if (s.call === "push_out") line.push('<span id="call">push-out</span>');
    if ((s.to_spot || []).length) line.push("<span>spot: " + s.to_spot.join(", ") + "</span>");
    return `<div class="players">${cards}</div><div class="line" id="line">${line.join("")}</div>`;
  }

  function rulingsView() {
    if (!shown) return "";
    if (shown.error) {
      return `<div class="card refused" id="rulings"><b>Refused:</b> ${esc(shown.label || "")}
        <div id="refusal">${esc(shown.error)}</div></div>`;
    }
    const rs = shown.rulings || [];
    const foul = rs.some((r) => r.level === "foul");  // the engine's level: 9.7 is no foul
    const head = shown.label ? `<b>${esc(shown.label)}</b>` +
      (shown.pending ? ' <span class="tag">held for the shot in play</span>' : "") +
      (shown.repeat ? ' <span class="tag">already applied</span>' : "") : "<b>Ruling</b>";
    // presumed defaults and notes on uncertain facts are kept, but quieter than the rulings
    const minor = (r) => /\(default\)|^Uncertain, applied as sensed|stand as sensed/.test(r.text || "");
    // folded, so the last shot's card and Undo stay on the screen: the card shows each
    // presumed fact itself (REFEREE.md §3c)
    const li = (r) => `<li>${esc(r.text)}${rule(r.rule)}</li>`;
    const major = rs.filter((r) => !minor(r)), quiet = rs.filter(minor);
    const items = major.map(li).join("");
    const folded = quiet.length ? `<details id="minor-rulings"><summary>${quiet.length} presumed or noted
      (shown on the last shot)</summary><ul class="minor">${quiet.map(li).join("")}</ul></details>` : "";
    return `<div class="card${foul ? " foul" : ""}" id="rulings">${head}${items ? `<ul>${items}</ul>` : ""}${folded}</div>`;
  }

  // The event's match called to this table (railbird.events), not started yet: one tap
  // applies its `match` input (players, race, break order), nothing to type.
  function calledView() {
    const c = snap && snap.call;
    if (!c || c.began) return "";
    const pending = queue.some((q) => q.input.type === "match" && q.call === c.match);
    return `<div class="card called" id="called"><h2>${esc(RB_CALL_TITLE(c))}</h2>
      <div class="winner" id="called-match">${esc(c.players.join(" v "))}</div>
      <p class="hint">${esc(c.game)} · ${esc(RB_CALL_GOAL(c))} · match ${esc(c.match)}</p>
      <button class="primary" data-act="start-call" id="btn-start-call"${pending ? " disabled" : ""}>
      ${pending ? "Starting…" : "Start the match"}</button></div>`;
  }

  function noMatchView() {
    return `<div class="card" id="nomatch"><h2>No match on this table</h2>
      <button class="primary" data-act="new-match" data-keep="0" id="btn-new">New match</button></div>`;
  }

  function overView(s, v) {
    const n = names(), sc = [per(s.scores, 0) ?? 0, per(s.scores, 1) ?? 0];
    const w = s.match_winner;
    const text = s.ended === "abandoned" || !w ? "Match abandoned: no result"
      : s.ended === "conceded" ? `${esc(other(w))} conceded: ${esc(w)} wins` : `${esc(w)} wins`;
    const hi = byPoints(s.game) ? `<p class="hint">high run: ${esc(n[0])} ${per(s.high_run, 0) || 0} · ${esc(n[1])} ${per(s.high_run, 1) || 0}</p>` : "";
    return `<div class="card over" id="over"><h2>Match over</h2><div class="winner" id="winner">${text}</div>
      <div id="result">${esc(n[0])} ${signed(sc[0])} · ${esc(n[1])} ${signed(sc[1])}</div>${hi}
      <div class="stack"><button class="primary" data-act="ask-rematch" id="btn-rematch">Rematch: same players</button>
      <button data-act="new-match" data-keep="0" id="btn-new">New match, new players</button></div></div>`;
  }

  // a score as a reader reads it: 14.1 scores may be negative ("−19", a real minus sign)
  function signed(x) { return x < 0 ? "\u2212" + (-x) : String(x); }

  function lagView(s) {
    const n = names();
    if (ui.lag && n.includes(ui.lag)) {
      const o = other(ui.lag);
      return `<div class="card" id="lag"><h2>${esc(ui.lag)} won the lag: who breaks?</h2>
        <div class="stack"><button class="primary" data-act="lag" data-winner="${esc(ui.lag)}" data-breaker="${esc(ui.lag)}">${esc(ui.lag)} breaks</button>
        <button data-act="lag" data-winner="${esc(ui.lag)}" data-breaker="${esc(o)}">${esc(o)} breaks</button>
        <button class="quiet" data-act="lag-back">Back</button></div></div>`;
    }
    return `<div class="card" id="lag"><h2>Lag for the break: who won?</h2>
      <div class="grid2">${n.map((p) => `<button class="primary" data-act="lag-winner" data-player="${esc(p)}">${esc(p)}</button>`).join("")}</div></div>`;
  }

  function optionView(s, v) {
    const up = s.at_table, o = other(up);
    const label = { shoot: `${up} shoots`, pass: `${up} passes it back to ${o}`,
      accept: `${up} accepts the table`, rebreak: `${o} breaks again`,
      spot: "Spot the 8 and shoot", break: `${up} re-racks and breaks`,
      kitchen: `${up} takes ball in hand behind the head string` };
    const q = { shoot_or_pass: "shoot, or pass the shot back?",
      accept_or_rebreak: "accept the table, or have the breaker break again?",
      accept_or_kitchen: "accept the table, or take ball in hand behind the head string?" }[s.awaiting] || "decide";
    return `<div class="card" id="option"><h2>${esc(up)}: ${esc(q)}</h2><div class="stack">
      ${v.choices.map((c) => `<button class="primary" data-act="option" data-choice="${esc(c)}">${esc(label[c] || c)}</button>`).join("")}
      </div></div>`;
  }

  // REFEREE.md §3b: the ruling depends on what the sensors cannot decide; one tap each way
  // The shot clock (docs/displays.md "Shot clock"): the countdown, the extension, hold,
  // resume, restart, and the time foul proposed when it ran out, which only the referee gives
  function clockView(s) {
    const c = s && !over(s) ? s.shot_clock : null;
    if (!c || c.status === "idle") return "";
    const b = (action, label, on = true, cls = "quiet") =>
      `<button class="${cls}" data-act="clock" data-action="${action}" ${on ? "" : "disabled"}>${label}</button>`;
    const left = (c.extensions_left || []).map((x, i) => `${esc(names()[i] || "")} ${x}`).join(" · ");
    let html = `<div class="card" id="clock"><h2>Shot clock</h2>
      <div id="ref-shotclock" class="shotclock" data-shotclock><b class="sc-num"></b> <span class="sc-note"></span></div>`;
    if (c.proposal) {
      const f = c.proposal.fouls || [];
      html += `<p class="hint">Time ran out: ${esc(f.map(foulName).join(", "))}?</p><div class="stack">
        <button class="primary" data-act="clock-foul" data-fouls="${esc(f.join(","))}">Give the time foul</button>
        ${b("dismiss", "No foul")}</div>`;
    }
    html += `<div class="row">${b("extension", "Extension", !!c.can_extend, "primary")}
      ${c.status === "held" ? b("resume", "Resume") : b("hold", "Hold", c.status === "running")}
      ${b("restart", "Restart")}${c.status === "waiting" ? b("placed", c.wait === "rack" ? "Rack done" : "Cue ball placed", true, "primary") : ""}</div>
      <p class="hint">Extensions left this rack: ${left}</p></div>`;
    return html;
  }

  // A proposed call (`proposed`, issue 26: a strike with nothing after it, a likely foul)
  // comes first, marked: one tap accepts it, one tap on another choice dismisses it.
  function checkView(s, v) {
    const c = s.check || {}, likely = c.proposed || null;
    const order = v.check.map((x, i) => i).sort((a, b) =>
      (v.check[b].label === likely) - (v.check[a].label === likely));
    return `<div class="card" id="check"><h2>Check the shot: the sensors cannot decide</h2>
      <p class="hint">${esc(c.text || "")}${likely ? `; likely ${esc(likely)}` : ""}</p><div class="stack">
      ${order.map((i) => v.check[i].label === likely
        ? `<button class="primary" data-act="check" data-i="${i}" id="btn-check-proposed">Likely: ${esc(choiceLabel(v.check[i]))}</button>`
        : `<button class="${likely ? "" : "primary"}" data-act="check" data-i="${i}">${esc(choiceLabel(v.check[i]))}</button>`).join("")}
      </div></div>`;
  }

  function provisionalView(s, v) {
    const p = s.provisional[0], fix = v.correct ? p.choices || [] : [];
    return `<div class="card" id="provisional"><h2>Provisional: ${esc(p.ruling)}${rule(p.rule)}</h2>
      <p class="hint">${esc(p.text || "")}; no referee checked it.${p.proposed ? ` Likely ${esc(p.proposed)}.` : ""}</p><div class="stack">
      ${shotShown(s, v) ? "" : '<button class="primary" data-act="confirm" id="btn-prov-confirm">Confirm the ruling</button>'}
      ${fix.filter((x) => x.label !== p.ruling).map((x) => `<button class="warn" data-act="prov" data-i="${p.choices.indexOf(x)}"${x.label === p.proposed ? ' id="btn-prov-proposed"' : ""}>${x.label === p.proposed ? "Likely: " : ""}${esc(choiceLabel(x))}</button>`).join("")}
      </div></div>`;
  }

  function choiceLabel(x) {
    const t = String(x.label || "");
    return t.charAt(0).toUpperCase() + t.slice(1);
  }

  function playView(s, v) {
    let html = "";
    if (v.types.has("rerack")) html += rerackView(s, v);
    const up = s.at_table;
    const balls = v.balls;
    if (balls.length) {
      const called = s.call && typeof s.call === "object" ? s.call : null;
      html += `<div class="card" id="calls"><h2>${esc(up)} calls${ui.ball != null ? ` the ${ui.ball}: which pocket?` : ""}</h2>
        <div class="balls">${balls.map((b) => ballHtml(b, `data-act="pick-ball" data-ball="${b}"`, "button", ui.ball === b ? "sel" : "")).join("")}</div>`;
      if (ui.ball != null) html += tableView(called);
      html += "</div>";
    } else if (s.breaking) {
      html += `<div class="card" id="calls"><h2>${esc(up)} breaks</h2><p class="hint">No call on the break.</p></div>`;
    }
    const row = [];
    if (v.types.has("call") && v.safety) {
      row.push('<button data-act="safety" id="btn-safety">Safety</button>');
    }
    if (v.types.has("push_out")) row.push('<button data-act="push-out" id="btn-push">Push-out</button>');
    if (v.types.has("shot")) row.push(`<button class="warn" data-act="foul-now" id="btn-foul">Foul by ${esc(up)}…</button>`);
    if (row.length) html += `<div class="row" id="actions">${row.join("")}</div>`;
    return html;
  }

  function tableView(called) {
    const pockets = POCKETS.map((p) => `<button class="pocket${called && called.pocket === p && called.ball === ui.ball ? " called" : ""}"
      data-act="call" data-pocket="${p}" data-pocket-name="${POCKET_NAMES[p]}" aria-label="${POCKET_NAMES[p]} pocket">${p}</button>`).join("");
    return `<div class="table" id="diagram"><div class="felt"><div class="label" style="top:8px">foot</div>
      <div class="headstring"></div><div class="label" style="bottom:8px">head (kitchen)</div></div>${pockets}</div>`;
  }

  function rerackView(s, v) {
    const a = ui.rerack || (ui.rerack = { cue_ball_in_rack_area: false, ball_in_rack_area: false,
      ball_behind_head_string: false });
    // 4.8.1: with the 15th ball pocketed only the cue ball can be in the way
    const fifteenth = v.fields ? v.fields.includes("ball_in_rack_area")
      : (s.balls_on_table || []).length > 0;
    const q = (key, text) => `<div><label>${text}</label><div class="seg" data-q="${key}">
      <button data-act="rr" data-key="${key}" data-val="0" class="${a[key] ? "" : "on"}">No</button>
      <button data-act="rr" data-key="${key}" data-val="1" class="${a[key] ? "on" : ""}">Yes</button></div></div>`;
    return `<div class="card" id="rerack"><h2>Re-rack${rule("4.8")}: before the break shot</h2>
      ${q("cue_ball_in_rack_area", "Is the cue ball in the rack area?")}
      ${fifteenth ? q("ball_in_rack_area", "Is the 15th ball in the rack area?") +
        q("ball_behind_head_string", "Is the 15th ball behind the head string?") : ""}
      <button class="primary" data-act="rerack" id="btn-rerack" style="width:100%;margin-top:10px"
        ${a.ball_in_rack_area && a.ball_behind_head_string ? "disabled" : ""}>Balls racked: go on</button></div>`;
  }

  // The last shot as it was ruled: every drop and fact in force, each marked sensed,
  // presumed or corrected (REFEREE.md §3c). A correction sends the whole list back, built
  // from these facts, never from the sensed shot, so one tap never undoes another.
  const ORIGIN_TAGS = { presumed: '<span class="badge presumed">presumed</span>',
    referee: '<span class="tag corrected">corrected</span>', sensed: "" };

  // The rules' last shot is the card's sensed shot (the host gives the sensed shot's start
  // as its `t_us`); else the last shot the rules know is another one (a declared foul):
  // the card is shown, but nothing on it may correct that other shot.
  function factsOf(v) {
    const sh = snap && snap.last_shot;
    return v.facts && sh && v.facts.t_us != null && v.facts.t_us === sh.start ? v.facts : null;
  }

  function shotDrops(v) {
    const f = factsOf(v);
    if (f) return f.pocketed;
    return (snap.last_shot.pocketed || []).map((p) =>
      ({ ball: p.ball, pocket: p.pocket, origin: p.ball == null ? "presumed" : "sensed" }));
  }

  function ballWords(n) { return n === 0 ? "the cue ball" : n == null ? "a ball" : "the " + n; }

  function factWords(name, value) {
    switch (name) {
      case "first_contact": return value === null ? "no ball hit" : value === undefined ? "a legal ball hit first"
        : `${ballWords(value)} hit first`;
      case "rail_after_contact": return value ? "a ball reached a rail" : "no rail after contact";
      case "object_balls_to_rail": return `${value} object ball${value === 1 ? "" : "s"} to a rail`;
      case "cue_ball_to_rail": return value ? "the cue ball reached a rail" : "the cue ball reached no rail";
      case "off_table": return "off the table: " + (value || []).map(ballWords).join(", ");
      case "fouls": return "foul: " + (value || []).map(foulName).join(", ");
      default: return name;
    }
  }

  // the words of what the one confirm button confirms: exactly the facts it sends
  function confirmWords(c) {
    const out = [];
    for (const p of c.pocketed || []) out.push(`${ballWords(p.ball)} in ${p.pocket}`);
    for (const k of Object.keys(c)) if (k !== "pocketed") out.push(factWords(k, c[k]));
    return out.join(", ");
  }

  function shotView(s, v) {
    const sh = snap.last_shot, f = factsOf(v), unc = s.unconfirmed || [];
    const list = shotDrops(v);
    const drops = list.map((p, i) => `<div class="drop" data-origin="${esc(p.origin)}">${ballHtml(p.ball)}
      <span>${esc(ballWords(p.ball))} in ${esc(pocketName(p.pocket))} ${ORIGIN_TAGS[p.origin] || ""}
      ${p.restored ? '<span class="tag">hung: back on the lip</span>' : ""}</span>
      ${v.correct ? `<button class="quiet" data-act="fix-ball" data-i="${i}" id="which-${i}">Which?</button>` : "<span></span>"}</div>`).join("");
    const rails = sh.rails || [];
    const nr = sh.distinct_rails != null ? sh.distinct_rails : new Set(rails.map((r) => r.rail)).size;
    const cue = list.some((p) => p.ball === 0);
    const lines = [cue ? "scratch: the cue ball dropped" : "cue ball stayed on the table",
      rails.length ? `${rails.length} rail hit${rails.length > 1 ? "s" : ""} on ${nr} rail${nr > 1 ? "s" : ""}` : "no rail hit sensed"];
    // what the referee may need to act on gets a row (presumed, uncertain, his own); the
    // sensed facts share one quiet line with the rail hits
    const words = (x) => factWords(x.fact, x.value === null && x.origin === "presumed" ? undefined : x.value);
    const marked = (f ? f.facts : []).filter((x) => x.origin !== "sensed" || x.uncertain);
    const factRows = marked.map((x) => `<div class="fact" data-fact="${esc(x.fact)}" data-origin="${esc(x.origin)}">
      ${esc(words(x))} ${ORIGIN_TAGS[x.origin] || ""}${x.uncertain ? ' <span class="badge">uncertain</span>' : ""}</div>`).join("");
    const sensed = (f ? f.facts : []).filter((x) => x.origin === "sensed" && !x.uncertain).map(words);
    const warn = (sh.warnings || []).map((w) => `<span class="tag">${esc(w)}</span>`).join(" ");
    const uncHtml = unc.length ? `<p id="uncertain"><span class="badge">uncertain</span> ${unc.map((u) => esc(FACT_NAMES[u] || u)).join(", ")}</p>` : "";
    const sure = f && Object.keys(f.confirm || {}).length ? f.confirm : null;
    // one confirm button; its label says exactly what it makes the referee's
    const confirm = sure
      ? `<button class="primary" data-act="confirm-facts" id="btn-confirm">Confirm: ${esc(confirmWords(sure))}</button>`
      : unc.length ? '<button class="primary" data-act="confirm" id="btn-confirm">Confirm as sensed</button>' : "";
    const fixes = v.correct ? `<div class="row"><button class="quiet" data-act="fix-first" id="btn-first">First ball hit…</button>
        <button class="quiet warn" data-act="fix-foul" id="btn-shot-foul">Foul on this shot…</button></div>` : "";
    const buttons = `<div class="stack">${confirm}${fixes}</div>`;
    const html = `<div class="card shot" id="last-shot"><h2>Last shot (${sh.n != null ? "#" + sh.n : "sensed"})</h2>
      <div class="drops">${drops || '<div class="facts">nothing pocketed</div>'}</div>
      ${factRows}<div class="facts">${[...sensed, ...lines].map(esc).join(" · ")} ${warn}</div>${uncHtml}${buttons}</div>`;
    if (!cardStale(v)) return html;
    // made for a state the table has left: shown, greyed, and nothing on it can be sent
    return html.replace('class="card shot"', 'class="card shot stale" data-stale="1"')
      .replace(/<button /g, "<button disabled ")
      .replace(/<\/div>$/, '<p class="hint" id="stale-note">The table has moved on since this shot: it can no longer be corrected here.</p></div>');
  }

  // The pocketed list a correction sends: the drops in force, entry `i` replaced by
  // `entry` (or left out: null); presumed drops go without a ball, to be presumed again
  // from what is left; the sensed ones say so.
  function dropsWith(i, entry) {
    return shotDrops(valid()).map((p, j) => {
      if (j === i) return entry;
      const lip = {};
      if (p.rested_us != null) lip.rested_us = p.rested_us;
      if (p.jammed) lip.jammed = true;
      if (p.origin === "presumed" || p.ball == null) return Object.assign({ pocket: p.pocket }, lip);
      return Object.assign({ ball: p.ball, pocket: p.pocket, source: p.origin === "sensed" ? "sensed" : "referee" }, lip);
    }).filter(Boolean);
  }

  function shotShown(s, v) { return !!(s && snap.last_shot && v.types.has("confirm")); }

  function cardStale(v) {
    if (v && v.facts && !factsOf(v)) return true;  // the rules' last shot is another one
    return !!(card && snap && snap.rev && card.rev && card.rev !== snap.rev);
  }

  function toolsView(s, v) {
    const row = [];
    if (v.types.has("undo")) row.push('<button data-act="undo" id="btn-undo">Undo…</button>');
    row.push('<button class="quiet" data-act="more" id="btn-more">More…</button>');
    return `<div class="row" id="tools">${row.join("")}</div>`;
  }

  // -- sheets ------------------------------------------------------------------------------
  function cardExtra() {
    // an input from the last shot's card is made for the state the card was made for
    return card ? { rev: card.rev, card: true } : {};
  }

  function openSheet(html, id) {
    const sh = $("sheet");
    sh.innerHTML = html;
    sh.dataset.sheet = id;
    sh.hidden = false;
    $("sheet-back").hidden = false;
  }
  function closeSheet() {
    $("sheet").hidden = true;
    $("sheet").innerHTML = "";
    $("sheet").dataset.sheet = "";
    $("sheet-back").hidden = true;
  }

  function foulSheet(mode) {
    const s = st(), list = fouls[s && s.game] || [];
    const who = mode === "now" ? `Foul by ${esc(s.at_table)} (no ball pocketed)` : "Foul on the last shot";
    const items = list.map((f) => `<button class="quiet" data-act="foul" data-mode="${mode}" data-code="${esc(f.declare)}" data-rule="${esc(f.rule)}">
      <span class="foul-rule">${esc(f.rule)}</span>${esc(f.name)}${f.grade === "serious" ? ' <span class="tag">serious</span>' : ""}</button>`).join("");
    openSheet(`<h2>${who}</h2><div class="stack" id="foul-list">${items || '<p class="hint">Loading the fouls…</p>'}</div>
      <button class="quiet" data-act="close" style="width:100%;margin-top:10px">Cancel</button>`, "fouls");
  }

  function ballSheet(title, act, extra, options, withNone) {
    const balls = options.map((b) => ballHtml(b.n, `data-act="${act}" data-ball="${b.n}" ${extra}`, "button", b.dim ? "dim" : "")).join("");
    openSheet(`<h2>${esc(title)}</h2><div class="balls" id="ball-pick">${balls}</div>
      ${withNone ? `<button class="quiet" data-act="${act}" data-ball="none" ${extra} style="width:100%;margin-top:10px">${esc(withNone)}</button>` : ""}
      <button class="quiet" data-act="close" style="width:100%;margin-top:10px">Cancel</button>`, "balls");
  }

  // "Which?" on a drop: the ball it was (the cue ball too: a guess of the cue's pocket can
  // be wrong on an uncalibrated table) and, for the cue ball, the pocket it went in
  function dropSheet(i, p) {
    const balls = rackBalls(true).map((b) => ballHtml(b.n, `data-act="set-ball" data-ball="${b.n}" data-i="${i}"`, "button", b.dim ? "dim" : "")).join("");
    const pockets = p.ball === 0 ? `<h2>Which pocket did the cue ball go in?</h2><div class="pockets" id="pocket-pick">
      ${POCKETS.map((k) => `<button class="${k === p.pocket ? "primary" : "quiet"}" data-act="set-pocket" data-pocket="${k}" data-i="${i}">${esc(pocketName(k))}</button>`).join("")}</div>` : "";
    openSheet(`${pockets}<h2>Which ball went in ${esc(pocketName(p.pocket))}?</h2><div class="balls" id="ball-pick">${balls}</div>
      <button class="quiet" data-act="set-ball" data-ball="none" data-i="${i}" style="width:100%;margin-top:10px">Nothing dropped there</button>
      <button class="quiet" data-act="close" style="width:100%;margin-top:10px">Cancel</button>`, "balls");
  }

  function rackBalls(withCue) {
    const s = st() || {}, on = new Set(onTable()), n = RACK[s.game] || 15, out = [];
    if (withCue) out.push({ n: 0 });
    for (let b = 1; b <= n; b++) out.push({ n: b, dim: !on.has(b) });
    return out;
  }

  async function undoSheet() {
    openSheet('<h2>Undo</h2><p class="hint">Looking up the last input…</p>', "undo");
    let d = null;
    try { const r = await request("GET", TAPI + "/undo"); d = r.status === 200 ? r.data : null; } catch (e) { d = null; }
    if ($("sheet").dataset.sheet !== "undo") return;
    const u = d && d.undo;
    const what = u && (u.rulings || []).length
      ? `<ul id="undo-what">${u.rulings.map((r) => `<li>${esc(r.text)}${rule(r.rule)}</li>`).join("")}</ul>`
      : '<p class="hint" id="undo-what">The last input (not known to this server since it started).</p>';
    openSheet(`<h2>Undo this?</h2>${what}<p class="hint">Withdraws the last input and restores the
      position and scores before it (1.8).</p><div class="grid2">
      <button class="warn" data-act="undo-yes" data-key="${u ? esc(u.key) : ""}" id="btn-undo-yes">Undo it</button>
      <button class="quiet" data-act="close" id="btn-undo-no">Keep it</button></div>`, "undo");
  }

  function matchSheet(keep) {
    const s = st(), g = (s && s.game) || "10-ball", n = keep && s ? s.players : ["", ""];
    const gl = goal();
    const seg = GAMES.map((x) => `<button data-act="m-game" data-game="${x}" class="${x === g ? "on" : ""}">${x}</button>`).join("");
    openSheet(`<h2>New match</h2><form id="match-form" autocomplete="off">
      <label>Game</label><div class="seg" id="m-game">${seg}</div>
      <label for="m-p1">Player 1</label><input id="m-p1" class="m-player" maxlength="32" value="${esc(n[0] || "")}" required autocapitalize="words" spellcheck="false">
      <label for="m-p2">Player 2</label><input id="m-p2" class="m-player" maxlength="32" value="${esc(n[1] || "")}" required autocapitalize="words" spellcheck="false">
      <div id="m-found" class="known found empty"></div>
      <div id="m-known" class="known"><span class="hint">Loading the known players…</span></div>
      <label id="m-goal-label">${byPoints(g) ? "Points to win" : "Race to (racks)"}</label>
      <div class="stepper"><button type="button" data-act="m-step" data-d="-1" aria-label="fewer">−</button>
      <span id="m-goal">${gl && keep ? gl : byPoints(g) ? 100 : 5}</span>
      <button type="button" data-act="m-step" data-d="1" aria-label="more">+</button></div>
      <div id="m-order-box" ${byPoints(g) ? "hidden" : ""}><label for="m-order">Who breaks after the first rack</label><select id="m-order">
      <option value="alternate">players alternate</option><option value="winner">winner breaks</option>
      <option value="loser">loser breaks</option><option value="trailing">trailing player breaks</option></select></div>
      <label>Rules</label><div id="m-options" class="options"><p class="hint">Loading the rules options…</p></div>
      <p class="hint" id="m-error"></p>
      <button type="submit" class="primary" id="btn-start" style="width:100%">Start the match</button>
      <button type="button" class="quiet" data-act="close" style="width:100%;margin-top:10px">Cancel</button></form>`, "match");
    $("sheet").dataset.game = g;
    $("match-form").addEventListener("submit", (e) => { e.preventDefault(); startMatch(); });
    fillOptions(g, keep && s && s.game === g);
    fillKnown();
    for (const id of ["m-p1", "m-p2"]) {
      const f = $(id);
      f.addEventListener("focus", () => { ui.field = id; });
      f.addEventListener("input", () => { ui.field = id; delete f.dataset.player; findPlayers(f.value); });
    }
    ui.field = null;
  }

  // The registry's players as one types a few letters (name, a word of it, or nickname,
  // case and accents ignored): one tap puts the player in the field being typed in.
  let findTimer = null, findSeq = 0;
  function findPlayers(text) {
    clearTimeout(findTimer);
    const q = text.trim(), box = $("m-found");
    if (!q) { if (box) { box.classList.add("empty"); box.innerHTML = ""; } return; }
    findTimer = setTimeout(async () => {
      const seq = ++findSeq;
      let found = [];
      try {
        const r = await request("GET", API + "/players?q=" + enc(q));
        if (r.status === 200) found = r.data.registered || [];
      } catch (e) { /* typed, then */ }
      const b = $("m-found");
      if (!b || seq !== findSeq) return;  // the form closed, or a later search answers
      b.innerHTML = found.length ? found.map((p) => {
        const extra = [p.nickname ? `“${esc(p.nickname)}”` : "",
          p.rating != null ? `${Math.round(p.rating)}${p.established ? "" : "?"}` : ""].filter(Boolean).join(" ");
        return `<button type="button" data-act="m-pick" data-id="${p.id}" data-name="${esc(p.name)}">${esc(p.name)}${extra ? ` <span class="hint">${extra}</span>` : ""}</button>`;
      }).join("") : `<span class="hint">No registered player: “${esc(q)}” is registered when the match starts.</span>`;
      b.classList.remove("empty");
    }, 120);
  }

  // A name not picked from the registry is registered on the way (the host validates it:
  // a name the rules refuse is said here, before the match is sent); the host unreachable,
  // the match is queued all the same and the name stays unregistered.
  async function register(field) {
    const name = field.value.trim();
    if (field.dataset.player === name) return null;
    let r;
    try { r = await request("POST", API + "/players", { name }); } catch (e) { return null; }
    if (r.status === 422) return r.data.error || "That name cannot be used.";
    if (r.status === 200 && r.data.player) { field.value = r.data.player.name; field.dataset.player = r.data.player.name; }
    return null;
  }

  // The venue's players from its history, most recent first: one tap puts a name in the
  // first empty field (or Player 2), so a regular is picked, not typed.
  async function fillKnown() {
    let names = [];
    try {
      const r = await request("GET", API + "/players");
      if (r.status === 200) names = r.data.players || [];
    } catch (e) { /* typed, then */ }
    const box = $("m-known");
    if (!box) return;
    box.innerHTML = names.length ? '<span class="hint">Known players:</span>' +
      names.map((x) => `<button type="button" class="quiet" data-act="m-known" data-name="${esc(x)}">${esc(x)}</button>`).join("")
      : '<span class="hint">No players in this venue\'s history yet.</span>';
  }

  // The rules options of a game (REFEREE.md §5) from the host, one box each with what it
  // changes; those of the current match are ticked when it is kept (its state line's opt=).
  const optionSpecs = {};
  async function fillOptions(game, keep) {
    if (!optionSpecs[game]) {
      try {
        const r = await request("GET", "/api/options/" + enc(game));
        if (r.status === 200) optionSpecs[game] = r.data.options;
      } catch (e) { /* shown as unavailable below */ }
    }
    const box = $("m-options");
    if (!box || $("sheet").dataset.game !== game) return;  // the form moved on meanwhile
    const list = optionSpecs[game];
    if (!list) { box.innerHTML = '<p class="hint">The rules options could not be loaded: the default rules apply.</p>'; return; }
    const m = keep && snap && snap.fen ? / opt=([A-Z0-9]*)/.exec(" " + snap.fen) : null;
    const on = new Set(((m && m[1]) || "").replace(/[0-9]/g, "").split(""));
    const head = { edition: "Later WPA edition", reading: "Literal Thai reading", bca: "BCA general rules" };
    box.innerHTML = list.length ? list.map((o) => `<label class="opt"><input type="checkbox" data-opt="${esc(o.name)}" ${on.has(o.code) ? "checked" : ""}>
      <span><b>${esc(head[o.kind] || o.kind)}</b>: ${esc(o.doc)}</span></label>`).join("")
      : '<p class="hint">This game has no rules options.</p>';
  }

  async function startMatch() {
    const g = $("sheet").dataset.game;
    let p1 = $("m-p1").value.trim(), p2 = $("m-p2").value.trim();
    if (!p1 || !p2 || p1 === p2) { $("m-error").textContent = "Two different player names, please."; return; }
    $("btn-start").disabled = true;
    for (const id of ["m-p1", "m-p2"]) {
      const why = await register($(id));
      if (!$("match-form")) return;  // closed meanwhile
      if (why) { $("m-error").textContent = why; $("btn-start").disabled = false; $(id).focus(); return; }
    }
    p1 = $("m-p1").value.trim(); p2 = $("m-p2").value.trim();
    if (p1 === p2) { $("m-error").textContent = "Two different players, please."; $("btn-start").disabled = false; return; }
    // started from the referee's phone: a referee is at the table (REFEREE.md §3b)
    const m = { type: "match", game: g, players: [p1, p2], referee: true };
    const box = $("m-options");
    // what the form shows is what the match gets: the boxes as ticked, none ticked included
    if (box && optionSpecs[g]) m.options = [...box.querySelectorAll("input[data-opt]:checked")].map((x) => x.dataset.opt);
    m[goalKey(g)] = +$("m-goal").textContent;
    if (!byPoints(g)) m.break_order = $("m-order").value;
    act(m);
  }

  // What ends or replaces a match is asked once: one stray tap must not end it.
  function askSheet(title, detail, yes, attrs) {
    openSheet(`<h2>${esc(title)}</h2><p class="hint">${esc(detail)}</p><div class="stack" id="ask">
      <button class="primary warn" id="btn-ask-yes" ${attrs}>${esc(yes)}</button>
      <button class="quiet" data-act="close" id="btn-ask-no">Cancel</button></div>`, "ask");
  }

  function moreSheet() {
    const s = st(), v = valid(), items = [];
    if (s && v.types.has("stalemate")) items.push('<button class="quiet" data-act="stalemate">Stalemate (1.12): replay the rack</button>');
    if (s && v.types.has("concede")) names().forEach((p) => items.push(`<button class="quiet" data-act="ask-concede" data-player="${esc(p)}">${esc(p)} concedes the match</button>`));
    if (s && v.types.has("abandon")) items.push('<button class="quiet warn" data-act="ask-abandon">Abandon the match (no result)</button>');
    if (v.types.has("match") && s) items.push('<button class="quiet" data-act="new-match" data-keep="1">New match…</button>');
    items.push(`<a href="/v/${enc(VENUE)}/" style="color:var(--dim)"><button class="quiet" style="width:100%">Scoreboard</button></a>`);
    items.push('<button class="quiet" data-act="signout">Sign out of this phone</button>');
    openSheet(`<h2>More</h2><div class="stack">${items.join("")}</div>
      <button class="quiet" data-act="close" style="width:100%;margin-top:10px">Close</button>`, "more");
  }

  // -- taps ----------------------------------------------------------------------------------
  document.addEventListener("click", (e) => {
    const b = e.target.closest("[data-act]");
    if (!b || b.disabled) return;
    const d = b.dataset, s = st();
    switch (d.act) {
      case "pin-key": if (ui.pin.length < 12) ui.pin += d.key; ui.pinError = ""; render(); break;
      case "pin-del": ui.pin = ui.pin.slice(0, -1); render(); break;
      case "pin-ok": signIn(); break;
      case "lag-winner": ui.lag = d.player; render(); break;
      case "lag-back": ui.lag = null; render(); break;
      case "lag": ui.lag = null; act({ type: "lag", winner: d.winner, breaker: d.breaker }); break;
      case "option": act({ type: "option", choice: d.choice }); break;
      case "clock": act({ type: "clock", action: d.action }, { rev: null }); break;
      case "clock-foul": act({ type: "shot", pocketed: [], fouls: d.fouls.split(",") }); break;
      case "pick-ball": ui.ball = ui.ball === +d.ball ? null : +d.ball; render(); break;
      case "call": act({ type: "call", ball: ui.ball, pocket: d.pocket }); break;
      case "safety": act({ type: "call", safety: true }); break;
      case "push-out": act({ type: "push_out" }); break;
      case "rr": ui.rerack[d.key] = d.val === "1"; render(); break;
      case "rerack": act(Object.assign({ type: "rerack" }, ui.rerack)); ui.rerack = null; break;
      case "foul-now": foulSheet("now"); break;
      case "fix-foul": foulSheet("shot"); break;
      case "foul":
        if (d.mode === "now") act({ type: "shot", pocketed: [], fouls: [d.code] });
        else act({ type: "confirm", fouls: [d.code] }, cardExtra());
        break;
      case "confirm": act({ type: "confirm" }, b.id === "btn-confirm" ? cardExtra() : {}); break;
      case "check": act(Object.assign({ type: "confirm" }, valid().check[+d.i].facts)); break;
      case "prov": act(Object.assign({ type: "confirm" }, st().provisional[0].choices[+d.i].facts)); break;
      case "fix-ball": {
        const p = shotDrops(valid())[+d.i];
        if (p) dropSheet(+d.i, p);
        break;
      }
      case "set-ball": {
        const p = shotDrops(valid())[+d.i];
        const entry = d.ball === "none" ? null : { ball: +d.ball, pocket: p.pocket, source: "referee" };
        act({ type: "confirm", pocketed: dropsWith(+d.i, entry) }, cardExtra());
        break;
      }
      case "set-pocket": {
        const p = shotDrops(valid())[+d.i];
        act({ type: "confirm", pocketed: dropsWith(+d.i, { ball: p.ball, pocket: d.pocket, source: "referee" }) }, cardExtra());
        break;
      }
      case "confirm-facts": {
        const f = factsOf(valid());
        if (f && f.confirm) act(Object.assign({ type: "confirm" }, f.confirm), cardExtra());
        break;
      }
      case "fix-first": ballSheet("Which ball did the cue ball hit first?", "set-first", "", rackBalls(false), "No ball was hit"); break;
      case "set-first": act({ type: "confirm", first_contact: d.ball === "none" ? null : +d.ball }, cardExtra()); break;
      case "asked-send": { const a = asked.shift(); if (a) act(a.input); else render(); break; }
      case "asked-drop": asked.shift(); render(); break;
      case "undo": undoSheet(); break;
      case "undo-yes": act({ type: "undo" }, d.key !== "" ? { undo_key: +d.key } : {}); break;
      case "more": moreSheet(); break;
      case "stalemate": act({ type: "stalemate" }); break;
      case "ask-concede":
        askSheet(`${d.player} concedes?`, `${d.player} loses the match (1.11); the score stands.`,
          `Yes: ${d.player} concedes`, `data-act="concede" data-player="${esc(d.player)}"`);
        break;
      case "ask-abandon":
        askSheet("Abandon the match?", "The match ends with no result.", "Yes: abandon it", 'data-act="abandon"');
        break;
      case "ask-rematch":
        askSheet(`Rematch: ${names().join(" v ")}?`, "A new match with the same players, game and rules options.",
          "Yes: start the rematch", 'data-act="rematch"');
        break;
      case "concede": act({ type: "concede", player: d.player }); break;
      case "abandon": act({ type: "abandon" }); break;
      case "signout": signOut(); break;
      case "new-match": matchSheet(d.keep === "1"); break;
      case "start-call": {
        const c = snap && snap.call;
        // a new match does not depend on the state on screen: sent without a revision, so a
        // late correction of the last match's shot cannot make it stale
        if (c && !c.began) act(c.input, { call: c.match, rev: null });
        break;
      }
      case "rematch": {
        const m = { type: "match", game: s.game, players: s.players };
        m[goalKey(s.game)] = goal() || (byPoints(s.game) ? 100 : 5);
        act(m);
        break;
      }
      case "m-known": {
        const a = $("m-p1"), b2 = $("m-p2");
        const target = !a.value.trim() ? a : !b2.value.trim() ? b2 : b2;
        if (target === b2 && a.value.trim() === d.name) break;  // two different players
        target.value = d.name;
        break;
      }
      case "m-pick": {
        const f = $(ui.field || (!$("m-p1").value.trim() ? "m-p1" : "m-p2"));
        const twin = $(f.id === "m-p1" ? "m-p2" : "m-p1");
        if (twin.value.trim() === d.name) break;  // two different players
        f.value = d.name;
        f.dataset.player = d.name;
        $("m-found").classList.add("empty");
        if (f.id === "m-p1" && !twin.value.trim()) { twin.focus(); ui.field = twin.id; }
        break;
      }
      case "m-game": {
        $("sheet").dataset.game = d.game;
        b.parentNode.querySelectorAll("button").forEach((x) => x.classList.toggle("on", x === b));
        $("m-goal-label").textContent = byPoints(d.game) ? "Points to win" : "Race to (racks)";
        $("m-goal").textContent = byPoints(d.game) ? 100 : 5;
        $("m-order-box").hidden = byPoints(d.game);  // 14.1 has no racks to break after
        fillOptions(d.game, false);
        break;
      }
      case "m-step": {
        const big = byPoints($("sheet").dataset.game);
        const x = +$("m-goal").textContent + (+d.d) * (big ? 25 : 1);
        $("m-goal").textContent = Math.max(1, Math.min(big ? 1000 : 99, big && x < 25 ? 25 : x));
        break;
      }
      case "close": closeSheet(); break;
      default: break;
    }
  });
  $("sheet-back").addEventListener("click", closeSheet);

  // -- session -----------------------------------------------------------------------------
  async function loadSession() {
    try {
      const r = await request("GET", SESSION);
      session = r.status === 200 ? r.data : { referee: true, signed_in: false };
    } catch (e) {
      session = session || { referee: true, signed_in: false };
      setTimeout(loadSession, 3000);
    }
    render();
    pump();
  }

  async function signIn() {
    if (!ui.pin) return;
    let r;
    try { r = await request("POST", SESSION, { pin: ui.pin }); } catch (e) { r = { status: 0, data: {} }; }
    ui.pin = "";
    if (r.status === 200) { session = Object.assign({}, session, { signed_in: true }); ui.pinError = ""; }
    else ui.pinError = r.status === 0 ? "No answer from the host: try again." : (r.data.error || "Refused");
    render();
    pump();
  }

  async function signOut() {
    closeSheet();
    try { await request("DELETE", SESSION); } catch (e) { /* the cookie expires anyway */ }
    session = Object.assign({}, session, { signed_in: false });
    render();
  }

  // -- start -------------------------------------------------------------------------------
  render();
  loadSession();
  request("GET", TAPI).then((r) => { if (r.status === 200 && !snap) onSnapshot(r.data); }).catch(() => {});
  connect();
})();
