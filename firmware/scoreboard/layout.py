"""Screens of the scoreboard (protocol/SCOREBOARD.md "Screens"), common subset.

A screen is a dict of str fields from the SCREEN frame; the result is one text per row
('.' lights the decimal point of the character before it, so it takes no column).
"""

RACE_GAMES = ("10", "9", "8")


def _r(s, w):
    s = str(s)
    return " " * (w - len(s)) + s if len(s) < w else s[-w:]


def _warning(f):
    fa = f.get("fa", "0")
    fb = f.get("fb", "0")
    if fa.isdigit() and int(fa) >= 2:
        return "A 2 FOUL"
    if fb.isdigit() and int(fb) >= 2:
        return "B 2 FOUL"
    return None


def _doubt(f):
    # REFEREE.md 3b: a shot held for the referee's check, or a provisional ruling
    if f.get("q") == "1":
        return "REF CHCK"
    if f.get("p") == "1":
        return "PROVISNL"
    return None


# The shot clock (SCREEN `sc` seconds, `ss` status): row 1 while a shot is timed
_CLOCK_WORDS = {"r": "TIME", "w": "WARN", "h": "HOLD", "p": "WAIT"}


def _clock(f):
    ss = f.get("ss")
    if ss == "x":
        return "TIME OUT"
    if ss in _CLOCK_WORDS:
        return _CLOCK_WORDS[ss] + _r(f.get("sc", ""), 4)
    return None


def _race(r):
    # `r`: the race, or A's race-B's race of a handicapped match (`5-3`, `11-10`)
    return "RACE" + _r(r, 4) if len(r) <= 4 else "R" + _r(r, 7)


def _score(f, who, w):
    s = _r(f.get(who, ""), w)
    if f.get("t") == who:
        s += "."
    return s


def rows(f, ann=None, link_lost=False, have_screen=True, cols=8):
    """The four row texts for screen fields `f`; `ann` is (row2, row3) of an active
    announcement or None."""
    if not have_screen:
        out = ["RAILBIRD", "", "", ""]
    else:
        g = f.get("g", "")
        win = f.get("w")
        if g == "141":
            r0 = _score(f, "a", 4) + _score(f, "b", 4)
            r1 = _clock(f) or ("RUN" + _r(f.get("run", ""), 5) if "run" in f else "")
            fa = f.get("fa", "")
            fb = f.get("fb", "")
            fouls = ((("F" + fa) if fa else "") + "    ")[:4] + _r(("F" + fb) if fb else "", 4)
            r2 = _doubt(f) or _warning(f) or fouls
            if win:
                r3 = win.upper() + " WINS"
            elif "ha" in f or "hb" in f:
                r3 = "HI" + _r(f.get("ha", ""), 3) + _r(f.get("hb", ""), 3)
            else:
                r3 = ""
        elif g:
            r0 = _score(f, "a", 3) + "  " + _score(f, "b", 3)
            r1 = _clock(f) or (_race(f["r"]) if "r" in f else "")
            k = f.get("k", "")
            r2 = _doubt(f) or _warning(f) or ("BRK" + _r(k.upper(), 5) if k else "")
            if win:
                r3 = win.upper() + " WINS"
            elif "inn" in f:
                r3 = "INN" + _r(f.get("inn", ""), 5)
            else:
                r3 = ""
        else:
            out = ["", "", "", ""]
            r0 = None
        if g:
            out = [r0, r1, r2, r3]
        if ann is not None:
            out[2] = ann[0]
            out[3] = ann[1]
    if link_lost:
        # the decimal point of the bottom-right digit: no valid frame from the host lately
        t = (out[3] + " " * cols)[:cols]
        out[3] = t[:cols - 1] + ("" if "." in t[cols - 1:] else t[cols - 1]) + "."
    return out
