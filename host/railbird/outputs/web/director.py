"""The event director's side of the web server: the director's sign-in and the event's
controls, and the event as the boards read it (docs/events.md "Running an event").

Routes (JSON; POST bodies `Content-Type: application/json`, checked as the referee app's):

    GET    /api/event/<venue>                     {"event": view or null, "html": fragment}
    GET    /api/director/<venue>/session          {"director", "signed_in"}
    POST   /api/director/<venue>/session          {"pin"} -> director session cookie
    DELETE /api/director/<venue>/session          sign out
    POST   /api/director/<venue>/event            the new event's form: drawn, then called
    POST   /api/director/<venue>/assign           {"match", "table"}
    POST   /api/director/<venue>/auto             {"on"}: call matches to free tables
    POST   /api/director/<venue>/forfeit          {"match", "winner"}: a no-show's result
    POST   /api/director/<venue>/close            the event is over: the tables are free

The director has a PIN of their own (`director_pin`) and a session cookie of their own
(`railbird_director`): the director's session gives no referee input, and the referee's no
event control. Wrong PINs are limited as the referee's are (pinguard.py), separately.
The event's view is public, like the boards: names, the bracket and the scores.
"""

from __future__ import annotations

import logging
import math
import sqlite3

from railbird.competition.errors import CompetitionError
from railbird.events.export import bracket_html
from railbird.outputs.web.desk import RefereeDesk
from railbird.outputs.web.pinguard import PinGuard
from railbird.outputs.web.sessions import (
    MAX_AGE_S,
    Sessions,
    clear_cookie,
    cookie_token,
    set_cookie,
)
from railbird.outputs.web.wire import Reply, Req, json_reply

log = logging.getLogger("railbird.outputs.web")

COOKIE = "railbird_director"
DIRECTOR_OFF = "the director's page is off on this host: no director_pin is configured"
NO_EVENTS = "this host keeps no events (no journal)"
ACTIONS = ("event", "assign", "auto", "forfeit", "close")


class DirectorDesk:
    def __init__(self, web, pins: dict | None = None):
        self.web = web
        self.pins = {k: str(v) for k, v in (pins or {}).items() if v}
        self.sessions = Sessions(pins=self.pins)
        self.guard = PinGuard()

    def keep_sessions(self, path) -> None:
        self.sessions = Sessions(path=path, pins=self.pins)

    def route(self, req: Req) -> Reply | None:
        p, method = req.parts, req.method
        if len(p) == 3 and p[:2] == ["api", "event"] and method in ("GET", "HEAD"):
            return self._view(p[2])
        if len(p) != 4 or p[:2] != ["api", "director"]:
            return None
        venue, what = p[2], p[3]
        if what == "session":
            if method in ("GET", "HEAD"):
                return self._session_info(req, venue)
            if method == "POST":
                return self._sign_in(req, venue)
            if method == "DELETE":
                self.sessions.drop(cookie_token(req.headers.get("Cookie"), COOKIE))
                return json_reply(200, {"ok": True, "signed_in": False},
                                  headers=[("Set-Cookie", clear_cookie(COOKIE))])  # fmt: skip
        if what in ACTIONS and method == "POST":
            return self._action(req, venue, what)
        return None

    # -- the public view -------------------------------------------------------------------
    def _view(self, venue: str) -> Reply:
        ev = self.web.events
        if venue not in self.web.known_venues():
            return json_reply(404, {"error": "unknown venue"})
        view = ev.public() if ev is not None and ev.venue == venue else None
        return json_reply(
            200,
            {
                "venue": venue,
                "director": venue in self.pins,
                "event": view,
                "html": bracket_html(view) if view else "",
            },
        )

    # -- sessions --------------------------------------------------------------------------
    def _signed(self, req: Req, venue: str) -> bool:
        token = cookie_token(req.headers.get("Cookie"), COOKIE)
        return venue in self.pins and self.sessions.venue_of(token) == venue

    def _session_info(self, req: Req, venue: str) -> Reply:
        return json_reply(200, {"venue": venue, "director": venue in self.pins,
                                "signed_in": self._signed(req, venue)})  # fmt: skip

    def _sign_in(self, req: Req, venue: str) -> Reply:
        body, err = RefereeDesk._body(req)
        if err:
            return json_reply(err[0], {"ok": False, "error": err[1]})
        if venue not in self.pins:
            return json_reply(403, {"ok": False, "disabled": True, "error": DIRECTOR_OFF})
        ok, wait = self.guard.check(venue, self.pins[venue], body.get("pin"), req.addr)
        if not ok:
            if wait > 0:
                secs = math.ceil(wait)
                self.web.stats["locked_out"] += 1
                return json_reply(
                    429,
                    {"ok": False, "error": f"too many wrong PINs: try again in {secs} s",
                     "retry_after": secs},
                    headers=[("Retry-After", str(secs))],
                )  # fmt: skip
            self.web.stats["forbidden"] += 1
            log.warning("director PIN for %s from %s refused: wrong PIN", venue, req.addr)
            return json_reply(403, {"ok": False, "error": "wrong PIN"})
        token = self.sessions.create(venue)
        log.info("director signed in for %s from %s", venue, req.addr)
        secure = req.headers.get("X-Forwarded-Proto") == "https"
        return json_reply(
            200,
            {"ok": True, "signed_in": True, "expires_in": MAX_AGE_S},
            headers=[("Set-Cookie", set_cookie(token, secure=secure, cookie=COOKIE))],
        )

    # -- the event's controls --------------------------------------------------------------
    def _action(self, req: Req, venue: str, what: str) -> Reply:
        body, err = RefereeDesk._body(req)
        if err:
            return json_reply(err[0], {"ok": False, "error": err[1]})
        if venue not in self.pins:
            self.web.stats["forbidden"] += 1
            return json_reply(403, {"ok": False, "disabled": True, "error": DIRECTOR_OFF})
        if not self._signed(req, venue):
            self.web.stats["forbidden"] += 1
            return json_reply(403, {"ok": False, "signin": True,
                                    "error": "sign in first (director PIN)"})  # fmt: skip
        ev = self.web.events
        if ev is None or ev.venue != venue:
            return json_reply(503, {"ok": False, "error": NO_EVENTS})
        try:
            if what == "event":
                ev.create_event(body)
            elif what == "assign":
                ev.assign(_text(body, "match"), _text(body, "table"))
            elif what == "auto":
                ev.set_auto(bool(body.get("on")))
            elif what == "forfeit":
                winner = body.get("winner")
                ev.forfeit(_text(body, "match"), winner if isinstance(winner, int) else -1)
            else:
                ev.close()
        except CompetitionError as e:
            return json_reply(422, {"ok": False, "error": str(e)})
        except sqlite3.Error as e:  # the journal busy past its timeout, or full: nothing done
            log.error("event %s at %s not journalled: %s", what, venue, e)
            return json_reply(503, {"ok": False, "error": f"the journal refused it: {e}"})
        return json_reply(200, {"ok": True, "event": ev.public()})


def _text(body: dict, key: str) -> str:
    v = body.get(key)
    if not isinstance(v, str) or not v:
        raise CompetitionError(f"{key}: text")
    return v
