// Shared by the table page and the venue board: live snapshots over server-sent events.
"use strict";
const RB = {
  route() {
    const p = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    return { venue: p[1], table: p[2] };
  },
  live(venue, onTable) {
    const es = new EventSource("/events/v/" + encodeURIComponent(venue));
    es.addEventListener("table", (e) => onTable(JSON.parse(e.data)));
    es.onerror = () => { document.body.dataset.live = "0"; };
    es.onopen = () => { document.body.dataset.live = "1"; };
    return es;
  },
  esc(v) { return String(v).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";"); },
  text(el, v) { if (el && el.textContent !== String(v)) el.textContent = v; },
  names(s) { return (s.players && s.players.length === 2) ? s.players : ["A", "B"]; },
  per(snap, key) {           // per-player value of the state as [a, b]
    const st = snap.state || {}, v = st[key], n = RB.names(snap);
    if (Array.isArray(v)) return v;
    if (v && typeof v === "object") return [v[n[0]], v[n[1]]];
    return [null, null];
  },
};
