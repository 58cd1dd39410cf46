"""The matches a format needs for n entrants, and where each seat of each match comes from.

A layout depends on the format and the number of entrants only; the draw (`tournament`)
then says which entrant holds which position. Every seat is filled from one `Source`: a
draw position (`FromEntry`; a position at or past n is nobody: a bye), or the winner or the
loser of an earlier match. Matches come in an order where every source precedes its match,
which is also the order they are called in: a round, then the losers' rounds it feeds.

Elimination: the bracket has P positions, the smallest power of two at least n (2 at
least), filled in the standard seeding order (1 v P, then 2 v P-1 in the other half, ...),
so the P - n byes go to the first P - n seeds, each against a different bye: no first-round
match is two byes. Single elimination has the rounds W1..Wk (P = 2^k). Double elimination
adds the losers' bracket, L1..L(2k-2): L1 pairs the losers of W1; each even round L(2j)
meets the winners of L(2j-1) with the losers of W(j+1) dropping in; each odd round after
L1 pairs the winners of the round before. The drop-ins come in reversed order, then with
the halves swapped, alternately, so a player does not meet at once the one who sent them
down. The grand final GF1 is the winners' bracket winner (seat 0) against the losers'
bracket winner (seat 1); GF2, the reset, is played only when seat 1 wins GF1, since only
then does the winners' bracket winner have a loss. With two entrants there is no losers'
bracket: the loser of W1 goes straight to GF1.

Byes in the losers' bracket follow from the first round: a W1 bye has no loser, so L1 may
meet an empty seat (a bye) or two (a match not played), and an L1 match not played leaves
a W2 loser alone in L2 (a bye). Every W1 match has a player, so every W1 winner and every
later loser is a player: no other round has a bye, and no player has byes in two rounds
in a row (docs/events.md, "Byes").

Round robin: the circle method. With an odd n one position more is nobody, and the entrant
paired with it sits the round out (a bye): each entrant once, never twice in a row.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import CompetitionError
from .spec import ENTRANTS_MAX, Format, Round, Stage


@dataclass(frozen=True, slots=True)
class FromEntry:
    position: int  # the draw position, from 0; at or past the number of entrants: a bye


@dataclass(frozen=True, slots=True)
class WinnerOf:
    match: int  # the index of the earlier match in the layout


@dataclass(frozen=True, slots=True)
class LoserOf:
    match: int


Source = FromEntry | WinnerOf | LoserOf


@dataclass(frozen=True, slots=True)
class MatchDef:
    id: str  # "W1-3", "L2-1", "R4-2", "GF1", "GF2"
    round: Round
    seats: tuple[Source, Source]
    reset: bool = False  # GF2: played only when seat 1 (the losers' bracket) won GF1


def bracket_size(n: int) -> int:
    size = 2
    while size < n:
        size *= 2
    return size


def seed_positions(size: int) -> list[int]:
    """Seed numbers (from 0) by bracket position: 1 v P, P/2+1 v P/2 ... in the standard
    order, so seeds 1 and 2 can meet only in the final."""
    order = [0]
    while len(order) < size:
        m = 2 * len(order)
        order = [x for s in order for x in (s, m - 1 - s)]
    return order


def build(fmt: Format, n: int) -> tuple[MatchDef, ...]:
    if type(n) is not int or not 2 <= n <= ENTRANTS_MAX:
        raise CompetitionError(f"an event has 2 to {ENTRANTS_MAX} entrants (got {n})")
    match fmt:
        case Format.ROUND_ROBIN:
            return _round_robin(n)
        case Format.SINGLE:
            return _elimination(n, double=False)
        case Format.DOUBLE:
            return _elimination(n, double=True)


def _round_robin(n: int) -> tuple[MatchDef, ...]:
    m = n + (n % 2)  # position n (odd n) is nobody: its partner has the bye
    ring = list(range(m))
    out: list[MatchDef] = []
    for r in range(m - 1):
        rnd = Round(Stage.POOL, r + 1)
        for i in range(m // 2):
            a, b = ring[i], ring[m - 1 - i]
            if i == 0 and r % 2:  # the fixed position alternates seats
                a, b = b, a
            if a >= n:  # the empty seat second
                a, b = b, a
            out.append(MatchDef(f"{rnd}-{i + 1}", rnd, (FromEntry(a), FromEntry(b))))
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return tuple(out)


def _elimination(n: int, double: bool) -> tuple[MatchDef, ...]:
    size = bracket_size(n)
    k = size.bit_length() - 1
    out: list[MatchDef] = []
    in_round: dict[Round, int] = {}

    def add(rnd: Round, seats: tuple[Source, Source], reset: bool = False) -> int:
        i = in_round[rnd] = in_round.get(rnd, 0) + 1
        mid = f"{rnd}-{i}" if rnd.stage is not Stage.FINAL else str(rnd)
        out.append(MatchDef(mid, rnd, seats, reset))
        return len(out) - 1

    seeds = seed_positions(size)
    winners: list[list[int]] = []  # per round, the matches' indexes
    w1 = Round(Stage.WINNERS, 1)
    winners.append(
        [add(w1, (FromEntry(seeds[2 * i]), FromEntry(seeds[2 * i + 1]))) for i in range(size // 2)]
    )
    losers: list[int] = []  # the losers' bracket's newest round

    def next_winners(r: int) -> None:
        prev = winners[-1]
        rnd = Round(Stage.WINNERS, r)
        pairs = [(WinnerOf(prev[2 * i]), WinnerOf(prev[2 * i + 1])) for i in range(len(prev) // 2)]
        winners.append([add(rnd, seats) for seats in pairs])

    for r in range(2, k + 1):
        next_winners(r)
        if not double:
            continue
        j = r - 1  # the losers of W(j+1) = W(r) drop into L(2j)
        if j == 1:
            first = winners[0]
            l1 = Round(Stage.LOSERS, 1)
            losers = [add(l1, (LoserOf(first[2 * i]), LoserOf(first[2 * i + 1])))
                      for i in range(len(first) // 2)]  # fmt: skip
        else:
            rnd = Round(Stage.LOSERS, 2 * j - 1)
            losers = [add(rnd, (WinnerOf(losers[2 * i]), WinnerOf(losers[2 * i + 1])))
                      for i in range(len(losers) // 2)]  # fmt: skip
        dropping = _drop_order(winners[r - 1], j)
        rnd = Round(Stage.LOSERS, 2 * j)
        losers = [add(rnd, (WinnerOf(a), LoserOf(b)))
                  for a, b in zip(losers, dropping, strict=True)]  # fmt: skip
    if double:
        final_w = winners[-1][0]
        lb: Source = WinnerOf(losers[0]) if losers else LoserOf(final_w)
        gf1 = add(Round(Stage.FINAL, 1), (WinnerOf(final_w), lb))
        # the reset: seat 0 is GF1's loser, the winners' bracket winner when it is played
        add(Round(Stage.FINAL, 2), (LoserOf(gf1), WinnerOf(gf1)), reset=True)
    return tuple(out)


def _drop_order(matches: list[int], j: int) -> list[int]:
    """The order the losers of a winners' round drop into L(2j): reversed, then the halves
    swapped, alternately."""
    if j % 2:
        return list(reversed(matches))
    half = len(matches) // 2
    return matches[half:] + matches[:half]
