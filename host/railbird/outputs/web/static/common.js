// Shared by the table page, the venue board and the overlay: live snapshots over server-sent
// events, the "scores may be stale" watchdog, and how a state reads on a board.
"use strict";
const RB = {
  STALE_SILENT_MS: 3500,   // no event (the server's heartbeat is 1 s) -> the host is gone
  STALE_ERROR_MS: 1500,    // a broken stream not back within this -> the host is gone
  route() {   // /v/<venue>/<table>/ or /v/<venue>/t/<table>/<view>
    const p = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    return p[2] === "t" && p.length >= 4 ? { venue: p[1], table: p[3], view: p[4] || "" }
      : { venue: p[1], table: p[2], view: "" };
  },
  tableUrl(venue, table, view) {
    return "/v/" + encodeURIComponent(venue) + "/t/" + encodeURIComponent(table) + "/" + (view || "");
  },

  // Live snapshots, and the page's own judgement of the host: the board runs in the daemon
  // process, so a dead daemon can only be noticed here, by its silence (SSE closed, failed
  // reconnects, or a heartbeat that stops). Recovery is a fresh stream, whose first events
  // are the snapshots of every table (of `table` only, when given). The server ends a stream
  // that falls behind; EventSource then reconnects by itself (or, once it has given up, we
  // do), and the new stream's snapshot replaces whatever was missed.
  live(venue, onTable, table) {
    const st = { es: null, last: Date.now(), errorSince: null, host: null, stale: null };
    RB._live = st;
    const open = () => {
      const es = new EventSource("/events/v/" + encodeURIComponent(venue) +
        (table ? "/t/" + encodeURIComponent(table) : ""));
      st.es = es;
      const seen = () => { st.last = Date.now(); st.errorSince = null; };
      es.addEventListener("table", (e) => { seen(); onTable(JSON.parse(e.data)); });
      es.addEventListener("host", (e) => { seen(); st.host = JSON.parse(e.data); st.hostAt = st.last; check(); });
      es.onopen = () => { st.connects = (st.connects || 0) + 1; seen(); document.body.dataset.live = "1"; };
      es.onerror = () => {
        document.body.dataset.live = "0";
        if (st.errorSince === null) st.errorSince = Date.now();
        if (es.readyState === EventSource.CLOSED) {   // the browser gave up: we do not
          setTimeout(() => { if (st.es === es) open(); }, 1000);
        }
      };
    };
    const check = () => {
      const now = Date.now();
      let why = null;
      if (st.errorSince !== null && now - st.errorSince > RB.STALE_ERROR_MS) why = "the host is not answering";
      else if (now - st.last > RB.STALE_SILENT_MS) why = "no word from the host for " + Math.round((now - st.last) / 1000) + " s";
      else if (st.host && st.host.ok === false) why = st.host.reason || "the host is not scoring";
      RB.setStale(why);
    };
    open();
    setInterval(check, 250);
    return st;
  },
  setStale(why) {
    const st = RB._live || {};
    if (why === st.stale) return;
    st.stale = why;
    document.body.dataset.stale = why ? "1" : "0";
    let el = document.getElementById("stale");
    if (!el) {
      el = document.createElement("div");
      el.id = "stale"; el.className = "stale"; el.setAttribute("role", "alert");
      document.body.prepend(el);
    }
    el.hidden = !why;
    if (why) el.innerHTML = "<b>Scores may be stale</b> <span>" + RB.esc(why) + " \u2014 since " +
      new Date().toLocaleTimeString() + "</span>";
  },

  // -- the one order of table names: natural, t2 before t10 (the twin of Python's
  // railbird/tableorder.py natural_key; tests/host/test_table_order.py holds them to one
  // order). Runs of digits compare by value then length, other runs by code point, and
  // names equal so far by their whole text.
  naturalCompare(a, b) {
    a = String(a); b = String(b);
    const x = a.split(/(\d+)/), y = b.split(/(\d+)/);
    const cmp = (p, q) => (p < q ? -1 : p > q ? 1 : 0);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (i % 2) {   // digits: the value (no leading zeros: longer is larger), then the length
        const p = x[i].replace(/^0+/, ""), q = y[i].replace(/^0+/, "");
        const d = p.length - q.length || cmp(p, q) || x[i].length - y[i].length;
        if (d) return d < 0 ? -1 : 1;
      } else if (x[i] !== y[i]) return cmp(x[i], y[i]);
    }
    return x.length !== y.length ? (x.length < y.length ? -1 : 1) : cmp(a, b);
  },
  naturalSort(names) { return [...names].sort(RB.naturalCompare); },

  esc(v) { return String(v).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";"); },
  text(el, v) { if (el && el.textContent !== String(v)) el.textContent = v; },
  // A player's name, whole: it wraps, and a long one is set smaller (data-len: "long" over
  // 18 characters, "longer" over 36; the rules take 64) so it never pushes a TV page past
  // its screen. Never cut with an ellipsis: a name is how a player knows the score is his.
  name(el, v) {
    if (!el) return;
    RB.text(el, v);
    const n = String(v).length, len = n > 36 ? "longer" : n > 18 ? "long" : "";
    if ((el.dataset.len || "") !== len) el.dataset.len = len;
  },
  html(el, v) { if (el && el.innerHTML !== v) el.innerHTML = v; },
  names(s) {
    const p = s.players || (s.state || {}).players;
    return (p && p.length === 2) ? p : ["A", "B"];
  },
  per(snap, key) {           // per-player value of the state as [a, b]
    const st = snap.state || {}, v = st[key], n = RB.names(snap);
    if (Array.isArray(v)) return v;
    if (v && typeof v === "object") return [v[n[0]], v[n[1]]];
    return [null, null];
  },
  // the games' facts, generated from the rules classes (games.js)
  GAMES: RB_VOCAB.games,
  RACK: Object.fromEntries(Object.entries(RB_VOCAB.games).map(([g, f]) => [g, f.rack])),
  byPoints(game) { return (RB_VOCAB.games[game] || {}).unit === "points"; },
  threeFouls(game) { return (RB_VOCAB.games[game] || { three_fouls: true }).three_fouls; },
  goal(s) {       // the state's race to (racks) or points target (REFEREE.md section 2, goal)
    const g = (s.state || {}).goal;
    return g == null ? null : +g;
  },
  goalText(s) {
    const g = RB.goal(s), r = (s.state || {}).races;
    // a handicapped match (REFEREE.md section 2, races): "race 5-3", in players' order
    if (r && typeof r === "object") return "race " + RB.names(s).map((n) => r[n]).join("-");
    return g == null ? "" : (RB.byPoints(s.game) ? "to " + g : "race to " + g);
  },

  // -- the event's match called to a table (snapshot `call`, railbird.events) ---------------
  callGoal(c) { return (RB.byPoints(c.game) ? "to " : "race to ") + c.goal; },
  callTitle(c) { return [c.event, c.round_name].filter(Boolean).join(" \u00b7 "); },
  calledText(c) {   // "Next match: Ann v Bob · race to 2"
    return "Next match: " + c.players.join(" v ") + " \u00b7 " + RB.callGoal(c);
  },

  // -- pool balls: standard colours, 9-15 striped, the number on a white disc --------------
  ball(n, cls) {
    const k = +n;
    return '<span class="ball b' + k + (k >= 9 ? " stripe" : "") + (cls ? " " + cls : "") +
      '" data-ball="' + k + '" title="' + (k === 0 ? "cue ball" : "ball " + k) + '"><i>' + (k === 0 ? "" : k) + "</i></span>";
  },
  POCKETS: { HL: "head left", HR: "head right", SL: "side left", SR: "side right", FL: "foot left", FR: "foot right" },

  // -- the shot in play: PROVISIONAL until it closes and its ruling replaces it ---------------
  // Each pocketed ball as its pocket (the sensors do not know which object ball it was; the
  // cue ball, paired by the return detector, shows as the cue ball), the count and, in 14.1,
  // the points the object balls would score.
  inplay(s) {
    const ip = s.inplay;
    if (!ip) return "";
    const pk = ip.pocketed || [], obj = pk.filter((p) => p.ball !== 0).length;
    const balls = pk.map((p) => '<span class="ip-ball" data-pocket="' + RB.esc(p.pocket) + '">' +
      (p.ball === 0 ? RB.ball(0, "small") : '<span class="ball unknown small"><i>?</i></span>') +
      RB.esc(p.pocket) + "</span>").join("");
    const said = [pk.length ? pk.length + (pk.length === 1 ? " ball" : " balls") + " pocketed" : "shot in play"];
    if (RB.byPoints(s.game) && obj) said.push("+" + obj + (obj === 1 ? " point" : " points"));
    if (obj < pk.length) said.push("cue ball down");
    return '<span class="prov">In play · provisional</span>' + balls +
      '<span class="ip-said">' + said.join(" · ") + "</span>";
  },

  // -- how the state reads -------------------------------------------------------------------
  inHand(st) {
    if (st.ball_in_hand === "kitchen") return "Ball in hand \u2014 behind the head string";
    if (st.ball_in_hand) return "Ball in hand \u2014 anywhere";
    return "";
  },
  callHtml(st) {
    const c = st.call;
    if (!c) return "";
    if (c === "safety") return "Safety";
    if (c === "push_out") return "Push-out";
    if (typeof c === "object") {
      return "Call " + (c.ball == null ? "" : RB.ball(c.ball, "small")) + " in " + RB.esc(c.pocket) +
        ' <span class="dim">(' + RB.esc(RB.POCKETS[c.pocket] || c.pocket) + ")</span>";
    }
    return "Call: " + RB.esc(c);
  },
  awaiting(st) {
    const who = st.at_table ? RB.esc(st.at_table) + ": " : "";
    switch (st.awaiting) {
      case null: case undefined: case "": return "";
      case "lag": return "Waiting for the lag";
      case "shoot_or_pass": return who + "shoot or pass?";
      case "accept_or_rebreak": return who + "accept the table or re-break?";
      case "rerack": return "Re-rack: waiting for the referee";
      case "referee_check": return "Ruling held: waiting for the referee\u2019s check";
      case "spot_or_rebreak": return who + "spot the 8 or re-break?";
      case "spot_or_break": return who + "spot the 8 or break again?";
      case "accept_or_break": return who + "accept the table or break again?";
      case "accept_or_kitchen": return who + "accept the table or take ball in hand in the kitchen?";
      default: return who + RB.esc(String(st.awaiting).replace(/_/g, " "));
    }
  },
  // protocol/REFEREE.md 3b: a ruling made on the fair default because nobody could check a fact
  // the sensors cannot decide; plain text ("" when none)
  provisional(st) {
    return ((st && st.provisional) || []).map((p) => "Provisional: " + p.ruling +
      (p.rule ? " (" + p.rule + ")" : "")).join(" \u00b7 ");
  },
  // 6.14: three consecutive fouls lose the rack (10/9-ball) or cost 15 more points (14.1);
  // a player on two is warned, in the games the rule applies to (not 8-ball: games.js).
  fouls(game, n) {
    if (!n) return "";
    if (n >= 2 && RB.threeFouls(game)) {
      return '<span class="warn">' + n + " FOULS \u2014 warning: a third " +
        (RB.byPoints(game) ? "costs 15 points" : "loses the rack") + "</span>";
    }
    return '<span class="foul">' + n + (n === 1 ? " foul" : " fouls") + "</span>";
  },
  sensors(s) {    // [text, class] for the table's sensor nodes
    const nodes = Object.entries(s.nodes || {});
    if (!nodes.length) return ["no sensors reported", "offline"];
    const off = nodes.filter(([, on]) => !on).map(([n]) => n);
    if (!off.length) return [nodes.length === 1 ? "sensors online" : "all " + nodes.length + " sensors online", "online"];
    return ["sensors offline: " + off.join(", "), "offline"];
  },
  // The table's sensor health as the host judges it from the last shots (the `sensors` of
  // its summary, docs/shots.md "Sensor health"): HTML, "" when the host gives none (an older
  // one). Each suspect channel by name with what its silence changes in the shots.
  health(s) {
    const h = s.sensors;
    if (!h || !h.health) return "";
    if (h.health === "suspect") {
      return '<div class="health suspect">' + (h.suspect || []).map((c) =>
        '<div class="ch" data-channel="' + RB.esc(c.kind + " " + c.item) + '"><b>\u26A0 ' + RB.esc(c.name) +
        "</b> silent " + RB.esc(c.silent_shots) + '+ shots (dead?)<span class="effect">: ' +
        RB.esc(c.effect) + "</span></div>").join("") + "</div>";
    }
    if (h.health === "ok") return '<div class="health ok">sensors ok</div>';
    return '<div class="health unknown" title="too few shots yet to judge the sensors">sensors ? ' +
      '<span class="effect">(too few shots yet)</span></div>';
  },
  nodeChips(s) {
    return Object.entries(s.nodes || {}).sort(([p], [q]) => RB.naturalCompare(p, q)).map(([n, on]) =>
      '<span class="node ' + (on ? "online" : "offline") + '" data-node="' + RB.esc(n) + '">' +
      (on ? "\u25CF " : "\u25CB ") + RB.esc(n) + " " + (on ? "online" : "OFFLINE") + "</span>").join("");
  },
};
