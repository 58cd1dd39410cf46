"use strict";
// The shot clock on a page (docs/displays.md "Shot clock"): the table page, the overlay and
// the referee app load it. The state carries the clock (`state.shot_clock`) with its
// deadline in table time; the host's heartbeat says the table time now (`now_us`), so the
// page counts down on its own clock, with no message per second. Before a heartbeat it
// counts from what was left when the state was sent (`remaining_us` as of `at`). A page of
// many tables (the venue board) keys each clock by its table: `data-shotclock="<table>"`.
const RBClock = {
  clocks: {}, host: null, hostAt: 0,
  noteHost(h, at) { if (h && typeof h.now_us === "number") { this.host = h.now_us; this.hostAt = at; } },
  set(clock, key = "") { this.clocks[key] = { clock: clock || null, recvAt: Date.now() }; this.paint(); },
  tableNow() {
    const live = typeof RB !== "undefined" && RB._live && RB._live.host;
    if (live && typeof live.now_us === "number") return live.now_us + (Date.now() - RB._live.hostAt) * 1000;
    if (this.host !== null) return this.host + (Date.now() - this.hostAt) * 1000;
    return null;
  },
  leftMs(key = "") {   // what is left, in ms (null: nothing is timed)
    const k = this.clocks[key] || {}, c = k.clock;
    if (!c || c.status === "idle") return null;
    if (c.status !== "running") return c.remaining_us == null ? null : c.remaining_us / 1000;
    const now = this.tableNow();
    const left = now === null ? c.remaining_us - (Date.now() - k.recvAt) * 1000 : c.deadline - now;
    return Math.max(0, left / 1000);
  },
  paint() {
    for (const el of document.querySelectorAll("[data-shotclock]")) {
      const key = el.dataset.shotclock || "", c = (this.clocks[key] || {}).clock, ms = this.leftMs(key);
      const on = ms !== null;
      if (el.hidden === on) el.hidden = !on;
      if (!on) continue;
      const s = Math.ceil(ms / 1000), st = c.status;
      const warn = st === "running" && c.warning_us > 0 && ms * 1000 <= c.warning_us;
      const num = st === "expired" ? "TIME" : String(s);
      const note = st === "expired" ? (c.proposal ? "time foul proposed to the referee" : "time ran out")
        : st === "held" ? "held" : st === "waiting" ? (c.wait === "rack" ? "waiting for the rack" : "waiting for the cue ball")
        : st === "stopped" ? "shot played" : warn ? "warning" : c.backdated ? "from the last ball's stop" : "";
      const n = el.querySelector(".sc-num"), t = el.querySelector(".sc-note");
      if (n && n.textContent !== num) n.textContent = num;
      if (t && t.textContent !== note) t.textContent = note;
      el.dataset.status = st;
      el.classList.toggle("warn", warn);
      el.classList.toggle("out", st === "expired");
      el.classList.toggle("backdated", !!c.backdated);
    }
  },
};
setInterval(() => RBClock.paint(), 200);
