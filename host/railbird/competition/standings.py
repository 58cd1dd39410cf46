"""Standings: each entrant's record (played, won, lost, score for and against, byes) and
place, worked out from the matches alone, so they always agree with the results.

Round robin: by matches won; a tie by the matches won between the tied players
(head-to-head), then by score difference, then by score won; players still equal share the
place and are listed in draw order. The places are provisional until the event is complete.

Elimination: a player's place is fixed when they are out, and shared with everyone out in
the same round: in double elimination the losers of a losers' round (the losers' final's
loser is third), in single elimination the losers of a round (both semi-final losers are
third). The grand final's (the final's) loser is second, its winner first. A player still
in has no place yet (`place` None) and is listed before those out, by losses then draw
order.
"""

from __future__ import annotations

from dataclasses import dataclass

from .spec import Format, Stage
from .tournament import Match, MatchState, Tournament, champion, is_complete


@dataclass(frozen=True, slots=True)
class Standing:
    player: int
    name: str
    place: int | None  # None: still in (elimination), the place not decided
    played: int  # matches with a result, forfeits included
    won: int
    lost: int
    score_for: int  # racks (or points) won, forfeits not counted
    score_against: int
    byes: int
    out_in: str | None = None  # elimination: the round in which the player went out


def standings(t: Tournament) -> tuple[Standing, ...]:
    rows = {e.player: _Row(e.player, e.name) for e in t.entrants}
    for m in t.matches:
        if m.state is MatchState.BYE:
            rows[m.winner.player or 0].byes += 1
        elif m.state is MatchState.DONE and m.result is not None:
            w, lo = m.winner.player, m.loser.player
            assert w is not None and lo is not None
            rows[w].won += 1
            rows[lo].lost += 1
            rows[lo].last_loss = m
            if m.result.score is not None:
                for seat, p in enumerate(m.players):
                    rows[p].score_for += m.result.score[seat]
                    rows[p].score_against += m.result.score[1 - seat]
    draw_pos = {t.entrants[e].player: i for i, e in enumerate(t.positions or ())}
    if t.spec.format is Format.ROUND_ROBIN:
        return _round_robin(t, rows, draw_pos)
    return _elimination(t, rows, draw_pos)


class _Row:
    __slots__ = ("byes", "last_loss", "lost", "name", "player", "score_against", "score_for", "won")

    def __init__(self, player: int, name: str) -> None:
        self.player, self.name = player, name
        self.won = self.lost = self.score_for = self.score_against = self.byes = 0
        self.last_loss: Match | None = None

    def standing(self, place: int | None, out_in: str | None = None) -> Standing:
        played = self.won + self.lost
        return Standing(self.player, self.name, place, played, self.won, self.lost,
                        self.score_for, self.score_against, self.byes, out_in)  # fmt: skip


def _round_robin(
    t: Tournament, rows: dict[int, _Row], draw_pos: dict[int, int]
) -> tuple[Standing, ...]:
    h2h: dict[int, int] = dict.fromkeys(rows, 0)
    by_wins: dict[int, set[int]] = {}
    for r in rows.values():
        by_wins.setdefault(r.won, set()).add(r.player)
    for m in t.matches:
        if m.state is MatchState.DONE:
            w, lo = m.winner.player, m.loser.player
            assert w is not None and lo is not None
            if rows[w].won == rows[lo].won:
                h2h[w] += 1

    def merit(r: _Row) -> tuple[int, int, int, int]:
        return (-r.won, -h2h[r.player], -(r.score_for - r.score_against), -r.score_for)

    ordered = sorted(rows.values(), key=lambda r: (merit(r), draw_pos.get(r.player, 0)))
    merits = [merit(r) for r in ordered]
    return tuple(r.standing(1 + sum(1 for x in merits if x < merit(r))) for r in ordered)


def _elimination(
    t: Tournament, rows: dict[int, _Row], draw_pos: dict[int, int]
) -> tuple[Standing, ...]:
    lives = 2 if t.spec.format is Format.DOUBLE else 1
    index = {m.id: i for i, m in enumerate(t.matches)}
    won_it = champion(t)
    out: dict[int, Match] = {}  # the players out, by the match that put them out
    for r in rows.values():
        if r.lost >= lives or (is_complete(t) and r.player != won_it):
            assert r.last_loss is not None
            out[r.player] = r.last_loss

    def level(m: Match) -> tuple[int, int]:
        """Later rounds rank higher: the grand final over the losers' bracket; within a
        bracket by round number."""
        top = m.round.stage is Stage.FINAL or (
            t.spec.format is Format.SINGLE and m is t.matches[-1]
        )
        return (1 if top else 0, m.round.number if not top else 0)

    alive = [r for r in rows.values() if r.player not in out]
    gone = sorted((r for r in rows.values() if r.player in out),
                  key=lambda r: (tuple(-x for x in level(out[r.player])),
                                 index[out[r.player].id], draw_pos.get(r.player, 0)))  # fmt: skip
    result: list[Standing] = []
    if won_it is not None:
        result.append(rows[won_it].standing(1))
        alive = []
    else:
        alive.sort(key=lambda r: (r.lost, draw_pos.get(r.player, 0)))
        result += [r.standing(None) for r in alive]
    ahead = len(result)
    place, last = 0, None
    for i, r in enumerate(gone):  # by level, best first: a new level starts a new place
        lv = level(out[r.player])
        if lv != last:
            place, last = ahead + i + 1, lv
        result.append(r.standing(place, str(out[r.player].round)))
    return tuple(result)
