"""The referee app's side of the web server: sign-in sessions, referee input with
idempotency ids, the undo preview and the foul catalogue.

Routes (all JSON; POST bodies must be `Content-Type: application/json`):

    GET    /api/session/<venue>            {"referee", "signed_in", "expires_in"}
    POST   /api/session/<venue>            {"pin"} -> session cookie (HttpOnly, SameSite=Strict)
    DELETE /api/session/<venue>            sign out
    GET    /api/fouls/<game>               {"game", "fouls": [{"declare", "rule", "name", "grade"}]}
    GET    /api/options/<game>             {"game", "options": [{"name", "kind", "doc", "code"}]}
    GET    /api/v/<venue>/<table>/undo     {"undo": {"key", "rulings"} or null}
    POST   /api/v/<venue>/<table>/referee  {"id", "input", "undo_key"?} or {"inputs": [...]}
    POST   /api/v/<venue>/players          {"name"} -> {"player"}: a name the New match form
                                           typed, registered (registration.py)

Referee input is accepted with the venue's session cookie, or with the venue PIN in the body
(`pin`) or the `X-Railbird-Pin` header, for scripts. Cross-site requests cannot use the
session: the cookie is SameSite=Strict, a form cannot send a JSON body (the content type is
checked) and a request whose `Origin` is not this host is refused. Wrong PINs are limited
per venue across all addresses and per address (pinguard.py: 5 a minute per venue, 3 per
address, then a lockout that doubles); while locked, no PIN is compared and the answer is
429 with `retry_after`. A referee already signed in keeps working. A request with no PIN at
all is not a guess and is not counted (a signed-out phone retrying its queue must not lock
the referee out).

Routes are plain functions of a `wire.Req` to a `wire.Reply`; server.py runs them in a
worker thread, since referee input waits for the daemon's answer.

Idempotency: an input sent with an `id` is applied at most once. The answer is kept per
(venue, table, id), so a phone that lost the answer and sends the same id again gets the
same answer (`repeat: true`) instead of a second ruling; after a host restart the daemon's
own de-duplication (journalled ids) still refuses the second copy, reported as a repeat.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections import OrderedDict
from urllib.parse import urlsplit

from railbird.core.records import StateRecord
from railbird.outputs.web import registration
from railbird.outputs.web.pinguard import PinGuard
from railbird.outputs.web.sessions import (
    MAX_AGE_S,
    Sessions,
    clear_cookie,
    cookie_token,
    set_cookie,
)
from railbird.outputs.web.wire import Reply, Req, json_reply
from railbird.rules.engine import GAMES
from railbird.rules.fen import OPTION_CODES
from railbird.rules.fouls import declarable
from railbird.rules.options import form_options

log = logging.getLogger("railbird.outputs.web")

MAX_BODY = 16384
RESULTS_KEPT = 2048
TRAIL_KEPT = 200
MAX_INPUTS = 8
NO_ANSWER = "daemon did not answer"
REFEREE_OFF = (
    "referee input is off on this host: no referee PIN (referee_token) is configured for the venue"
)


class UndoTrail:
    """Per table, the rulings of each input the rules applied, newest last, so the app can
    show what an `undo` will withdraw before it is sent. Kept from the outputs' `on_state`:
    an undo (ruling 1.8) pops, a correction (1.10 "corrects") replaces the newest. A new
    match is an input like any other: the host's undo right after it brings the old one
    back."""

    def __init__(self):
        self._lock = threading.Lock()
        self._by_table: dict[tuple[str, str], list[dict]] = {}
        self._serial = 0

    def on_state(self, venue, table, announcements) -> None:
        anns = [dict(a) for a in announcements or () if isinstance(a, dict)]
        if not anns:
            return
        first = anns[0]
        text, rule = str(first.get("text", "")), first.get("rule")
        with self._lock:
            trail = self._by_table.setdefault((venue, table), [])
            if rule == "1.8" and text.startswith("Undo"):
                if trail:
                    trail.pop()
                return
            if rule == "1.10" and text.startswith("The referee corrects") and trail:
                trail.pop()
            self._serial += 1
            trail.append({"key": self._serial, "rulings": anns})
            del trail[:-TRAIL_KEPT]

    def top(self, venue, table) -> dict | None:
        with self._lock:
            trail = self._by_table.get((venue, table))
            return dict(trail[-1]) if trail else None


class RefereeDesk:
    def __init__(self, web):
        self.web = web
        self.sessions = Sessions()
        self.guard = PinGuard()
        self.trail = UndoTrail()
        self._results: OrderedDict = OrderedDict()

    # -- the Output side -----------------------------------------------------------------
    def on_state(self, venue, table, announcements) -> None:
        self.trail.on_state(venue, table, announcements)

    def restore(self, venue, table, history) -> None:
        for r in history:
            if isinstance(r, StateRecord):
                self.trail.on_state(venue, table, r.announcements)

    # -- routing -------------------------------------------------------------------------
    def route(self, req: Req) -> Reply | None:
        """The reply if the path is one of ours; None: not ours."""
        p, method = req.parts, req.method
        if len(p) == 3 and p[0] == "api" and p[1] == "session":
            if method in ("GET", "HEAD"):
                return self._session_info(req, p[2])
            if method == "POST":
                return self._sign_in(req, p[2])
            if method == "DELETE":
                return self._sign_out(req)
        if len(p) == 3 and p[0] == "api" and p[1] == "fouls" and method in ("GET", "HEAD"):
            return self._fouls(p[2])
        if len(p) == 3 and p[0] == "api" and p[1] == "options" and method in ("GET", "HEAD"):
            return self._options(p[2])
        if len(p) == 5 and p[0] == "api" and p[1] == "v":
            if p[4] == "undo" and method in ("GET", "HEAD"):
                return json_reply(200, {"undo": self.trail.top(p[2], p[3])})
            if p[4] == "referee" and method == "POST":
                return self._referee(req, p[2], p[3])
        if len(p) == 4 and p[:2] == ["api", "v"] and p[3] == "players" and method == "POST":
            return self._register(req, p[2])
        return None

    # -- helpers -------------------------------------------------------------------------
    @staticmethod
    def _body(req: Req):
        """The JSON object of a POST, or (code, error) when it is not acceptable."""
        if req.too_large:
            return None, (413, "body too large")
        ctype = (req.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return None, (415, "send the body as application/json")
        origin = req.headers.get("Origin")
        if origin and _netloc(origin) != (req.headers.get("Host") or ""):
            return None, (403, "cross-site request refused")
        try:
            body = json.loads(req.body or b"{}")
        except (ValueError, RecursionError):  # nested too deep for the parser: not a 500
            return None, (400, "the body is not JSON")
        if not isinstance(body, dict):
            return None, (400, "the body must be a JSON object")
        return body, None

    def _session_venue(self, req: Req) -> str | None:
        return self.sessions.venue_of(cookie_token(req.headers.get("Cookie")))

    def _pin(self, venue: str, pin, addr: str) -> Reply | None:
        """None when `pin` is the venue's; else the refusal (wrong, or not compared at all
        while the venue or the address is locked out)."""
        web = self.web
        ok, wait = self.guard.check(venue, web.pins.get(venue), pin, addr)
        if ok:
            return None
        if wait > 0:
            web.stats["locked_out"] += 1
            secs = math.ceil(wait)
            return json_reply(
                429,
                {
                    "ok": False,
                    "error": f"too many wrong PINs: try again in {secs} s",
                    "retry_after": secs,
                },
                headers=[("Retry-After", str(secs))],
            )
        web.stats["forbidden"] += 1
        log.warning("referee PIN for %s from %s refused: wrong PIN", venue, addr)
        return json_reply(403, {"ok": False, "error": "wrong PIN"})

    # -- sessions ------------------------------------------------------------------------
    def _session_info(self, req: Req, venue) -> Reply:
        token = cookie_token(req.headers.get("Cookie"))
        signed = venue in self.web.pins and self.sessions.venue_of(token) == venue
        return json_reply(
            200,
            {
                "venue": venue,
                "referee": venue in self.web.pins,
                "signed_in": signed,
                "expires_in": round(self.sessions.expires_in(token) or 0) if signed else None,
            },
        )

    def _sign_in(self, req: Req, venue) -> Reply:
        web = self.web
        body, err = self._body(req)
        if err:
            return json_reply(err[0], {"ok": False, "error": err[1]})
        if venue not in web.pins:
            return json_reply(403, {"ok": False, "disabled": True, "error": REFEREE_OFF})
        refused = self._pin(venue, body.get("pin"), req.addr)
        if refused is not None:
            return refused
        token = self.sessions.create(venue)
        log.info("referee signed in for %s from %s", venue, req.addr)
        secure = req.headers.get("X-Forwarded-Proto") == "https"
        return json_reply(
            200,
            {"ok": True, "signed_in": True, "expires_in": MAX_AGE_S},
            headers=[("Set-Cookie", set_cookie(token, secure=secure))],
        )

    def _sign_out(self, req: Req) -> Reply:
        self.sessions.drop(cookie_token(req.headers.get("Cookie")))
        return json_reply(
            200, {"ok": True, "signed_in": False}, headers=[("Set-Cookie", clear_cookie())]
        )

    # -- fouls ---------------------------------------------------------------------------
    def _fouls(self, game) -> Reply:
        if game not in GAMES:
            return json_reply(404, {"error": f"unknown game {game!r}"})
        return json_reply(200, {"game": game, "fouls": declarable(GAMES[game])})

    def _options(self, game) -> Reply:
        """The rule options a new match of `game` may name (REFEREE.md §5), each with its
        state-line letter, so the form shows the current match's as chosen."""
        if game not in GAMES:
            return json_reply(404, {"error": f"unknown game {game!r}"})
        opts = [dict(o, code=OPTION_CODES[o["name"]]) for o in form_options(game)]
        return json_reply(200, {"game": game, "options": opts})

    # -- referee input -------------------------------------------------------------------
    def _referee_body(self, req: Req, venue) -> dict | Reply:
        """The body of a referee's POST, or the refusal: not JSON, no referee input at this
        venue, not signed in and no right PIN."""
        web = self.web
        body, err = self._body(req)
        if err:
            return json_reply(err[0], {"ok": False, "error": err[1]})
        if venue not in web.pins:
            web.stats["forbidden"] += 1
            return json_reply(403, {"ok": False, "disabled": True, "error": REFEREE_OFF})
        if self._session_venue(req) != venue:
            pin = body.get("pin") or req.headers.get("X-Railbird-Pin")
            if not pin:
                web.stats["forbidden"] += 1
                return json_reply(
                    403, {"ok": False, "signin": True, "error": "sign in first (venue PIN)"}
                )
            refused = self._pin(venue, pin, req.addr)
            if refused is not None:
                if refused.status == 403:
                    refused = json_reply(403, {"ok": False, "error": "PIN wrong or missing"})
                return refused
        assert isinstance(body, dict)
        return body

    def _register(self, req: Req, venue) -> Reply:
        body = self._referee_body(req, venue)
        if isinstance(body, Reply):
            return body
        journal = getattr(self.web, "history_journal", None)
        return registration.register(None if journal is None else str(journal), body)

    def _referee(self, req: Req, venue, table):
        body = self._referee_body(req, venue)
        if isinstance(body, Reply):
            return body
        items, err = _items(body)
        if err:
            return json_reply(400, {"ok": False, "error": err})
        rev = body.get("rev")
        if rev is not None and (not isinstance(rev, str) or not 1 <= len(rev) <= 32):
            return json_reply(400, {"ok": False, "error": "rev: a string of 1-32 characters"})
        undo_key = body.get("undo_key")
        if undo_key is not None and any(i.get("type") == "undo" for _, i in items):
            top = self.trail.top(venue, table)
            if top is None or top["key"] != undo_key:
                return json_reply(
                    409,
                    {
                        "ok": False,
                        "error": "the last input changed since the undo was shown: look again",
                        "undo": top,
                    },
                )
        code, res = self.apply(venue, table, items, rev)
        return json_reply(code, res)

    def apply(self, venue, table, items: list, rev: str | None = None) -> tuple[int, dict]:
        """Apply (id, input) pairs in order; the first refusal stops the rest (422; 409
        when the first was made against another revision than the table's, `rev`: the
        others follow from the states the earlier ones make)."""
        web = self.web
        if web.referee is None:
            return 503, {"ok": False, "error": "no referee input on this host"}
        last = None
        with web.referee_lock:  # one input at a time, in order, and each id once
            for n, (rid, inp) in enumerate(items):
                key = (venue, table, rid)
                if rid is not None and key in self._results:
                    code, res = self._results[key]
                    res = dict(res, repeat=True)
                else:
                    code, res = self._one(venue, table, rid, inp, rev if n == 0 else None)
                    if rid is not None and code in (200, 422):
                        self._results[key] = (code, res)
                        while len(self._results) > RESULTS_KEPT:
                            self._results.popitem(last=False)
                if code != 200:
                    if len(items) > 1:
                        res = dict(res, applied=n)
                    return code, res
                last = res
        if len(items) > 1:
            last = dict(last, applied=len(items))
        return 200, last

    def _one(self, venue, table, rid, inp, rev=None) -> tuple[int, dict]:
        web = self.web
        try:
            res = web.referee(venue, table, inp, by="web", id=rid, rev=rev)
        except Exception as e:  # a broken callable is logged and answered, the server goes on
            log.exception("referee input for %s/%s failed", venue, table)
            res = {"ok": False, "error": str(e) or type(e).__name__}
        if not isinstance(res, dict):
            res = {"ok": True, "state": res}
        err = str(res.get("error") or "")
        if not res.get("ok") and rid is not None and err == f"referee input {rid} seen":
            # the daemon journalled this id before (a host restart lost our answer)
            web.stats["applied"] += 1
            return 200, {"ok": True, "id": rid, "repeat": True, "rulings": []}
        if not res.get("ok") and res.get("stale"):
            # made against a state the table has left: nothing applied, the id not taken
            web.stats["stale"] += 1
            return 409, {"ok": False, "id": rid, "stale": True, "rev": res.get("rev"),
                         "error": err}  # fmt: skip
        if not res.get("ok"):
            if err.startswith(NO_ANSWER):
                return 504, {"ok": False, "id": rid, "error": err}
            web.stats["refused"] += 1
            return 422, {"ok": False, "id": rid, "error": err or "refused"}
        web.stats["applied"] += 1
        out = {
            "ok": True,
            "id": rid,
            "rev": res.get("rev"),
            "state": res.get("state"),
            "rulings": res.get("announcements") or [],
        }
        if res.get("pending"):
            out["pending"] = True
            out["facts"] = res.get("facts")
        return 200, out


def _netloc(url: str) -> str | None:
    """The host[:port] of `url`; None when it is no URL at all (`http://[`), which is
    not this host either."""
    try:
        return urlsplit(url).netloc
    except ValueError:
        return None


def _items(body: dict):
    """[(id, input)] from {"id", "input"} or {"inputs": [...]}, or an error text."""
    rid = body.get("id")
    if rid is not None and (not isinstance(rid, str) or not 1 <= len(rid) <= 64):
        return None, "id: a string of 1-64 characters"
    inputs = body.get("inputs")
    if inputs is None and "input" in body:
        inputs = [body["input"]]
    if (
        not isinstance(inputs, list)
        or not inputs
        or len(inputs) > MAX_INPUTS
        or not all(isinstance(i, dict) and isinstance(i.get("type"), str) for i in inputs)
    ):
        return None, f"inputs: 1-{MAX_INPUTS} objects with a type"
    if rid is None:
        return [(None, i) for i in inputs], None
    if len(inputs) == 1:
        return [(rid, inputs[0])], None
    return [(f"{rid}/{n}", i) for n, i in enumerate(inputs)], None
