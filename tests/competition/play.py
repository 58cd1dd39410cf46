"""Playing a tournament through to the end with random results, checking after every step
what must hold of any bracket (docs/events.md): the checks the property tests and the
sweep share."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass, field

from railbird.competition import tournament as T
from railbird.competition.spec import Entrant, Format, Stage
from railbird.competition.standings import standings
from railbird.competition.tournament import MatchState, Result, Tournament


def entrants(n: int) -> list[Entrant]:
    return [Entrant(100 + i, f"Player {i + 1}") for i in range(n)]


@dataclass
class Run:
    t: Tournament
    steps: int = 0
    seats_seen: dict[tuple[str, int], int | None] = field(default_factory=dict)


def result_for(t: Tournament, m: T.Match, rng: random.Random) -> Result:
    winner = rng.randrange(2)
    if rng.random() < 0.08:
        return Result(winner, None)  # a forfeit
    score = [0, 0]
    if t.spec.goal_field == "race_to":
        score[winner] = m.goal
        score[1 - winner] = rng.randrange(m.goal)
    else:
        score[winner] = m.goal + rng.randrange(3)
        score[1 - winner] = rng.randrange(-3, m.goal)
    return Result(winner, (score[0], score[1]))


def play(t: Tournament, rng: random.Random, tables: int | None = None) -> Tournament:
    """Until the end: each step starts some of the matches `next_matches` offers (at most
    `tables` in play at once) and records a random one of those in play, or records a
    ready match at once; every step is checked."""
    run = Run(t)
    check(run)
    limit = 4 * len(t.layout) + 10
    while not T.is_complete(run.t):
        run.steps += 1
        assert run.steps <= limit, "the event does not come to an end"
        in_play = [m for m in run.t.matches if m.state is MatchState.IN_PLAY]
        free = None if tables is None else tables - len(in_play)
        offered = T.next_matches(run.t, free)
        assert offered or in_play, "nothing to play, yet the event is not complete"
        if offered and rng.random() < 0.6:
            for m in offered[: rng.randint(1, len(offered))]:
                run.t = T.start(run.t, m.id, f"t{rng.randint(1, 9)}")
        else:
            choices = in_play or list(offered)
            m = rng.choice(choices)
            before = run.t
            run.t = T.record(run.t, m.id, result_for(run.t, m, rng))
            # recorded once: the same result again is refused
            try:
                T.record(run.t, m.id, Result(0, None))
            except T.NotAllowed:
                pass
            else:
                raise AssertionError(f"{m.id} took a second result")
            assert before.match(m.id).state is not MatchState.DONE
        # the standings at a random third of the steps (they cost as much as the rest)
        check(run, standings_too=rng.random() < 0.3)
    check(run)
    return run.t


def lives(t: Tournament) -> int:
    return {Format.SINGLE: 1, Format.DOUBLE: 2, Format.ROUND_ROBIN: 0}[t.spec.format]


def losses(t: Tournament) -> Counter[int]:
    c: Counter[int] = Counter()
    for m in t.matches:
        if m.state is MatchState.DONE:
            p = m.loser.player
            assert p is not None
            c[p] += 1
    return c


def check(run: Run, standings_too: bool = True) -> None:
    t = run.t
    ids = [m.id for m in t.matches]
    assert len(set(ids)) == len(ids), "a match id twice"
    players = {e.player for e in t.entrants}
    for m in t.matches:
        a, b = m.seats
        assert not (a.player is not None and a.player == b.player), f"{m.id}: a player v self"
        assert all(p in players for p in m.players)
        for seat, s in enumerate(m.seats):  # a seat, once filled, never changes
            key = (m.id, seat)
            if s.player is not None or s.empty:
                known = run.seats_seen.setdefault(key, s.player if not s.empty else -1)
                assert known == (s.player if not s.empty else -1), f"{m.id} seat {seat} moved"
    # no player in two simultaneous matches
    busy = [p for m in t.matches if m.state is MatchState.IN_PLAY for p in m.players]
    assert len(busy) == len(set(busy)), "a player in two matches at once"
    assert not set(busy) & {p for m in T.playable(t) for p in m.players}
    offered = [p for m in T.next_matches(t) for p in m.players]
    assert len(offered) == len(set(offered))
    if t.spec.format is not Format.ROUND_ROBIN:
        # a player waits in at most one match, and only while they have lives left
        lost = losses(t)
        open_ = [p for m in t.matches if m.state not in T.FINISHED for p in m.players]
        assert len(open_) == len(set(open_)), "a player seated in two open matches"
        for p in open_:
            assert lost[p] < lives(t), f"player {p} plays on after {lost[p]} losses"
    if standings_too:
        check_standings(t)


def check_standings(t: Tournament) -> None:
    rows = standings(t)
    assert sorted(r.player for r in rows) == sorted(e.player for e in t.entrants)
    done = [m for m in t.matches if m.state is MatchState.DONE]
    assert sum(r.won for r in rows) == sum(r.lost for r in rows) == len(done)
    # the records counted again, one pass over the matches
    won: Counter[int] = Counter()
    played: Counter[int] = Counter()
    score_for: Counter[int] = Counter()
    score_against: Counter[int] = Counter()
    byes: Counter[int] = Counter()
    for m in t.matches:
        if m.state is MatchState.BYE:
            byes[m.winner.player or 0] += 1
        if m.state is not MatchState.DONE or m.result is None:
            continue
        won[m.winner.player or 0] += 1
        for seat, p in enumerate(m.players):
            played[p] += 1
            if m.result.score is not None:
                score_for[p] += m.result.score[seat]
                score_against[p] += m.result.score[1 - seat]
    for r in rows:
        p = r.player
        assert (r.played, r.won, r.lost) == (played[p], won[p], played[p] - won[p])
        assert (r.score_for, r.score_against, r.byes) == (score_for[p], score_against[p], byes[p])
    places = [r.place for r in rows if r.place is not None]
    assert places == sorted(places), "standings not in order of place"
    if t.spec.format is Format.ROUND_ROBIN:
        assert [r.won for r in rows] == sorted((r.won for r in rows), reverse=True)
    else:
        undecided = [r for r in rows if r.place is None]
        assert rows[: len(undecided)] == tuple(undecided), "players still in come first"
        for r in rows:
            if r.place is not None and r.place > 1:
                assert r.lost == lives(t), f"{r.name} placed with {r.lost} losses"


def check_complete(t: Tournament) -> None:
    """What holds of every finished event."""
    assert T.is_complete(t)
    assert not T.playable(t)
    lost = losses(t)
    n = len(t.entrants)
    rows = standings(t)
    if t.spec.format is Format.ROUND_ROBIN:
        pairs = Counter(frozenset(m.players) for m in t.matches if m.state is MatchState.DONE)
        assert len(pairs) == n * (n - 1) // 2 and set(pairs.values()) == {1}
        byes = Counter(m.winner.player for m in t.matches if m.state is MatchState.BYE)
        assert byes == (Counter({e.player: 1 for e in t.entrants}) if n % 2 else Counter())
        return
    champ = T.champion(t)
    assert champ is not None
    for e in t.entrants:  # every player plays until `lives` losses, the champion aside
        if e.player == champ:
            assert lost[e.player] < lives(t)
        else:
            assert lost[e.player] == lives(t), f"{e.name} out with {lost[e.player]} losses"
    assert rows[0].player == champ and rows[0].place == 1
    assert [r.place for r in rows].count(1) == 1 and [r.place for r in rows].count(2) == 1
    # everyone out in the same round shares a place
    by_round: dict[str | None, set[int | None]] = {}
    for r in rows:
        by_round.setdefault(r.out_in, set()).add(r.place)
    assert all(len(places) == 1 for out_in, places in by_round.items() if out_in is not None)
    # meetings: once per bracket, twice at most in the grand final
    meet: Counter[tuple[frozenset[int], Stage]] = Counter()
    for m in t.matches:
        if m.state is MatchState.DONE:
            meet[(frozenset(m.players), m.round.stage)] += 1
    for (_, stage), k in meet.items():
        assert k <= (2 if stage is Stage.FINAL else 1), f"a pair met {k} times in {stage}"
    if t.spec.format is Format.DOUBLE:
        gf1, gf2 = t.matches[-2], t.matches[-1]
        assert gf1.state is MatchState.DONE and gf1.result is not None
        reset = gf1.result.winner == 1
        assert (gf2.state is MatchState.DONE) == reset
        assert (gf2.state is MatchState.VOID) == (not reset)
    check_byes(t)


def check_byes(t: Tournament) -> None:
    """No player has byes in two of their rounds in a row; a first-round bye is never two
    byes meeting (every first-round match has a player)."""
    for e in t.entrants:
        mine = [m for m in t.matches if e.player in m.players]
        kinds = [m.state for m in mine]
        for a, b in itertools.pairwise(kinds):
            assert not (a is MatchState.BYE and b is MatchState.BYE), f"{e.name}: two byes running"
    first = [m for m in t.matches if m.round.stage is Stage.WINNERS and m.round.number == 1]
    assert all(m.state is not MatchState.VOID for m in first), "a first-round match of nobody"
