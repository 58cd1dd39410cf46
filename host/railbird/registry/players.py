"""The players registry: its tables in the journal's database and every change to them.

Tables (created where missing, like the match history's: a table added alone needs no
journal migration, railbird.daemon.migrations):
- `players`     one row per player: name, nickname, rating, and the folded forms of name
                and nickname that search compares (case and accents ignored,
                `railbird.competition.players.folded`); `merged_into` names the player a
                duplicate was merged into: it stays, so an id anything kept still
                resolves, but is no longer listed;
- `player_ids`  external ids (a league's or a rating service's number): one per player and
                system, and one player per system and number.

Every name goes through `railbird.competition.players.clean_name` (trimmed, at most 64
characters, no control character): a bad one is an `InvalidName` with the reason, never a
row. A name already in the registry (compared folded) is refused unless the caller says
that this is another person of the same name (`same_name=True`). Each change is one
transaction of its own (BEGIN IMMEDIATE, so a daemon writing the same journal waits for it
or it waits for the daemon, `BUSY_MS`), or a savepoint inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from railbird.competition.errors import CompetitionError
from railbird.competition.players import (
    Player,
    clean_external,
    clean_name,
    clean_nickname,
    clean_rating,
    clean_system,
    folded,
)
from railbird.competition.spec import Entrant

BUSY_MS = 5000  # a daemon's transaction is milliseconds; a change waits this long for it
SEARCH_LIMIT = 20

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS players (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL, folded TEXT NOT NULL,
  nickname TEXT, nick_folded TEXT,
  rating INTEGER,
  merged_into INTEGER REFERENCES players (id),
  created REAL NOT NULL, changed REAL NOT NULL   -- wall clock
)""",
    "CREATE INDEX IF NOT EXISTS players_folded ON players (folded)",
    """CREATE TABLE IF NOT EXISTS player_ids (
  player INTEGER NOT NULL REFERENCES players (id),
  system TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (player, system)
)""",
    "CREATE UNIQUE INDEX IF NOT EXISTS player_ids_value ON player_ids (system, value)",
)
_COLUMNS = "id, name, nickname, rating, merged_into"
_UNSET = object()  # `edit`: a field not given stays as it is


class RegistryError(CompetitionError):
    """A change the registry refuses: an unknown player, a duplicate, a merge of a player
    with itself."""


def ensure(db: sqlite3.Connection) -> None:
    for sql in SCHEMA:
        db.execute(sql)


def has_players(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='players'")
    return row.fetchone() is not None


class PlayerRegistry:
    def __init__(self, db: sqlite3.Connection, clock: Callable[[], float] = time.time) -> None:
        """`db`: the journal's connection in autocommit mode (isolation_level None), as
        railbird.daemon.journal opens it; `clock`: wall-clock time for `created`/`changed`."""
        self.db = db
        self.clock = clock
        db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")

    # -- reading ---------------------------------------------------------------------------
    def get(self, player: int) -> Player:
        """The player with this id, merged or not (`resolve` follows a merge)."""
        if not has_players(self.db):
            raise RegistryError(f"no player {player}: the registry is empty")
        row = self.db.execute(f"SELECT {_COLUMNS} FROM players WHERE id = ?", (player,)).fetchone()
        if row is None:
            raise RegistryError(f"no player {player}")
        return self._player(row)

    def resolve(self, player: int) -> Player:
        """The player this id stands for now: a merged duplicate's survivor."""
        p = self.get(player)
        seen = {p.id}
        while p.merged_into is not None:
            p = self.get(p.merged_into)
            if p.id in seen:  # a loop cannot be written by `merge`; refuse rather than spin
                raise RegistryError(f"player {player}: the merges form a loop")
            seen.add(p.id)
        return p

    def listed(self) -> list[Player]:
        """Every player not merged into another, by name."""
        if not has_players(self.db):
            return []
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM players WHERE merged_into IS NULL ORDER BY folded, id"
        )
        return [self._player(r) for r in rows.fetchall()]

    def search(self, prefix: str, limit: int = SEARCH_LIMIT) -> list[Player]:
        """Listed players whose name, a word of their name, or nickname begins with
        `prefix` (case and accents ignored): what a match form offers as one types. Names
        that begin with it come first."""
        q = folded(prefix.strip())
        if not has_players(self.db):
            return []
        if not q:
            return self.listed()[:limit]
        like = _like_escape(q) + "%"
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM players WHERE merged_into IS NULL AND ("
            " folded LIKE ? ESCAPE '\\' OR folded LIKE ? ESCAPE '\\'"
            " OR nick_folded LIKE ? ESCAPE '\\')"
            " ORDER BY folded NOT LIKE ? ESCAPE '\\', folded, id LIMIT ?",
            (like, "% " + like, like, like, limit),
        )
        # LIKE folds ASCII letters only; both sides are folded already, so check exactly
        out = []
        for r in rows.fetchall():
            p = self._player(r)
            words = folded(p.name).split()
            nick = folded(p.nickname) if p.nickname else ""
            if (
                folded(p.name).startswith(q)
                or nick.startswith(q)
                or any(w.startswith(q) for w in words)
            ):
                out.append(p)
        return out

    def named(self, name: str) -> list[Player]:
        """Listed players of exactly this name (compared folded)."""
        if not has_players(self.db):
            return []
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM players WHERE folded = ? AND merged_into IS NULL ORDER BY id",
            (folded(clean_name(name)),),
        )
        return [self._player(r) for r in rows.fetchall()]

    def entrants(self, players: Sequence[int]) -> list[Entrant]:
        """A tournament's entrants (railbird.competition.tournament.create) for these ids,
        in the order given (the seed order), each merged duplicate as the player who
        stays."""
        return [Entrant(p.id, p.name) for p in (self.resolve(pid) for pid in players)]

    def aliases(self, player: int) -> list[str]:
        """The names of the duplicates merged into this player, at any depth: the names
        their matches in the history were played under."""
        out: list[str] = []
        todo = [player]
        while todo:
            rows = self.db.execute(
                "SELECT id, name FROM players WHERE merged_into = ? ORDER BY id", (todo.pop(),)
            ).fetchall()
            for pid, name in rows:
                out.append(name)
                todo.append(pid)
        return out

    # -- changes ---------------------------------------------------------------------------
    def add(
        self,
        name: str,
        nickname: str | None = None,
        rating: int | None = None,
        external: Sequence[tuple[str, str]] = (),
        same_name: bool = False,
    ) -> Player:
        clean = clean_name(name)
        nick = clean_nickname(nickname)
        rate = clean_rating(rating)
        ids = self._clean_ids(external)
        with self._change():
            self._refuse_taken(clean, same_name)
            now = self.clock()
            cur = self.db.execute(
                "INSERT INTO players (name, folded, nickname, nick_folded, rating, created,"
                " changed) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (clean, folded(clean), nick, folded(nick) if nick else None, rate, now, now),
            )
            pid = cur.lastrowid
            assert pid is not None
            for system, value in ids:
                self._set_id(pid, system, value)
        return self.get(pid)

    def rename(self, player: int, name: str, same_name: bool = False) -> Player:
        clean = clean_name(name)
        with self._change():
            p = self._listed(player)
            if folded(clean) != folded(p.name):
                self._refuse_taken(clean, same_name)
            self.db.execute(
                "UPDATE players SET name = ?, folded = ?, changed = ? WHERE id = ?",
                (clean, folded(clean), self.clock(), p.id),
            )
        return self.get(player)

    def edit(
        self,
        player: int,
        nickname: object = _UNSET,
        rating: object = _UNSET,
        external: Sequence[tuple[str, str | None]] = (),
    ) -> Player:
        """Change the nickname or rating (None clears it) and set external ids (a value of
        None or "" removes that system's id); what is not given stays."""
        nick = None if nickname is _UNSET else clean_nickname(nickname)
        rate = None if rating is _UNSET else clean_rating(rating)
        ids: list[tuple[str, str | None]] = [
            clean_external(s, v) if v else (clean_system(s), None) for s, v in external
        ]
        with self._change():
            p = self._listed(player)
            now = self.clock()
            if nickname is not _UNSET:
                self.db.execute(
                    "UPDATE players SET nickname = ?, nick_folded = ?, changed = ? WHERE id = ?",
                    (nick, folded(nick) if nick else None, now, p.id),
                )
            if rating is not _UNSET:
                self.db.execute(
                    "UPDATE players SET rating = ?, changed = ? WHERE id = ?", (rate, now, p.id)
                )
            for system, value in ids:
                if value is None:
                    self.db.execute(
                        "DELETE FROM player_ids WHERE player = ? AND system = ?", (p.id, system)
                    )
                else:
                    self._set_id(p.id, system, value)
        return self.get(player)

    def merge(self, keep: int, drop: int) -> Player:
        """`drop` is a duplicate of `keep`: it is no longer listed and its id resolves to
        `keep`, which takes its nickname, rating and external ids where it has none of its
        own. Two different ids in the same system are refused: one of them is wrong, and
        only a person can say which (`edit` removes it)."""
        if keep == drop:
            raise RegistryError("a player cannot be merged into themselves")
        with self._change():
            k, d = self._listed(keep), self._listed(drop)
            mine = dict(k.external)
            for system, value in d.external:
                if system in mine and mine[system] != value:
                    raise RegistryError(
                        f"both have a {system} id ({k.name}: {mine[system]}, {d.name}: "
                        f"{value}): remove the wrong one first"
                    )
            now = self.clock()
            # the duplicate's ids move over (both the same: the duplicate's row goes)
            self.db.execute(
                "DELETE FROM player_ids WHERE player = ?"
                " AND system IN (SELECT system FROM player_ids WHERE player = ?)",
                (d.id, k.id),
            )
            self.db.execute("UPDATE player_ids SET player = ? WHERE player = ?", (k.id, d.id))
            self.db.execute(
                "UPDATE players SET nickname = COALESCE(nickname, ?),"
                " nick_folded = COALESCE(nick_folded, ?), rating = COALESCE(rating, ?),"
                " changed = ? WHERE id = ?",
                (d.nickname, folded(d.nickname) if d.nickname else None, d.rating, now, k.id),
            )
            self.db.execute(
                "UPDATE players SET merged_into = ?, changed = ? WHERE id = ?", (k.id, now, d.id)
            )
        return self.get(keep)

    # -- inside ----------------------------------------------------------------------------
    @contextmanager
    def _change(self) -> Iterator[None]:
        db = self.db
        if db.in_transaction:  # the caller's transaction: a savepoint of ours in it
            db.execute("SAVEPOINT players")
            try:
                ensure(db)
                yield
            except BaseException:
                db.execute("ROLLBACK TO players")
                db.execute("RELEASE players")
                raise
            db.execute("RELEASE players")
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            ensure(db)
            yield
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _listed(self, player: int) -> Player:
        p = self.get(player)
        if p.merged_into is not None:
            raise RegistryError(
                f"player {p.id} ({p.name}) was merged into player {self.resolve(p.id).id}"
            )
        return p

    def _refuse_taken(self, name: str, same_name: bool) -> None:
        if same_name:
            return
        taken = self.named(name)
        if taken:
            raise RegistryError(
                f"a player named {taken[0].name} is registered already (id {taken[0].id}); "
                "if this is another person of the same name, say so (--same-name)"
            )

    def _clean_ids(self, external: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        ids = [clean_external(s, v) for s, v in external]
        systems = [s for s, _ in ids]
        if len(set(systems)) != len(systems):
            raise RegistryError("one external id per system")
        return ids

    def _set_id(self, player: int, system: str, value: str) -> None:
        row = self.db.execute(
            "SELECT player FROM player_ids WHERE system = ? AND value = ?", (system, value)
        ).fetchone()
        if row is not None and row[0] != player:
            raise RegistryError(f"{system} id {value} belongs to player {row[0]} already")
        self.db.execute(
            "INSERT OR REPLACE INTO player_ids (player, system, value) VALUES (?, ?, ?)",
            (player, system, value),
        )

    def _player(self, row: tuple[object, ...]) -> Player:
        pid, name, nickname, rating, merged = row
        assert isinstance(pid, int) and isinstance(name, str)
        ids = self.db.execute(
            "SELECT system, value FROM player_ids WHERE player = ? ORDER BY system", (pid,)
        ).fetchall()
        return Player(
            pid,
            name,
            nickname if isinstance(nickname, str) else None,
            rating if isinstance(rating, int) else None,
            tuple((str(s), str(v)) for s, v in ids),
            merged if isinstance(merged, int) else None,
        )


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
