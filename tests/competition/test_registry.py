"""The players registry in a real journal (railbird.registry.players) and `railbird players`:
names validated with a clear error (trimmed, at most 64 characters, no control character),
duplicates refused unless said to be another person, merged duplicates resolving to the
player who stays, search as one types (prefix of the name, a word of it or the nickname,
case and accents ignored), external ids one per system and number."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys

import pytest

from railbird.cli import main
from railbird.competition.errors import CompetitionError, InvalidName
from railbird.daemon.journal import Journal
from railbird.registry.players import PlayerRegistry, RegistryError


@pytest.fixture
def journal(tmp_path):
    j = Journal(tmp_path / "journal.sqlite")
    yield j
    j.close()


@pytest.fixture
def reg(journal):
    return PlayerRegistry(journal.db, clock=lambda: 1_700_000_000.0)


def test_add_trims_and_keeps_what_is_given(reg):
    p = reg.add("  Ann Lee \n", nickname=" Annie ", rating=540, external=[("fargo", "12345")])
    assert (p.name, p.nickname, p.rating, p.external) == (
        "Ann Lee",
        "Annie",
        540,
        (("fargo", "12345"),),
    )
    assert reg.get(p.id) == p and reg.listed() == [p]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "a player's name is empty"),
        ("   ", "a player's name is empty"),
        ("A" * 65, "at most 64 characters (65 given)"),
        ("Ann\x1b[31m", "control characters (U+001B found)"),
        ("Ann\nLee", "control characters (U+000A found)"),
        ("Ann\u2028Lee", "control characters (U+2028 found)"),
        ("\u202eeeL nnA", "control characters (U+202E found)"),
        (None, "must be text"),
    ],
)
def test_bad_names_are_refused_with_the_reason(reg, name, message):
    with pytest.raises(InvalidName, match=re.escape(message)):
        reg.add(name)
    assert reg.listed() == []


def test_a_64_character_name_and_names_of_any_script_are_kept(reg):
    assert reg.add("A" * 64).name == "A" * 64
    assert reg.add("Ngô Bảo Châu").name == "Ngô Bảo Châu"
    persian = "\u0645\u062d\u0645\u062f\u200c\u0631\u0636\u0627"  # with a zero-width non-joiner
    assert reg.add(persian).name == persian
    # the same name typed decomposed is the same name (NFC)
    with pytest.raises(RegistryError, match="registered already"):
        reg.add("Ngo\u0302 Ba\u0309o Cha\u0302u")


def test_a_name_registered_already_needs_same_name(reg):
    first = reg.add("Bob Smith")
    with pytest.raises(RegistryError, match=rf"Bob Smith is registered already \(id {first.id}\)"):
        reg.add("bob smith")
    second = reg.add("Bob Smith", nickname="Junior", same_name=True)
    assert [p.id for p in reg.named("BOB SMITH")] == [first.id, second.id]


def test_rename(reg):
    a, b = reg.add("Ann"), reg.add("Bea")
    assert reg.rename(a.id, "Ann Lee").name == "Ann Lee"
    assert reg.rename(a.id, "ann lee").name == "ann lee"  # her own name, recased
    with pytest.raises(RegistryError, match="registered already"):
        reg.rename(b.id, "Ann Lee")
    with pytest.raises(RegistryError, match="no player 99"):
        reg.rename(99, "Zed")


def test_search_by_prefix_of_name_word_or_nickname(reg):
    ann = reg.add("Ann Lee", nickname="Annie")
    jose = reg.add("José Martínez")
    leo = reg.add("Leo Brandt", nickname="The Lion")
    odd = reg.add("100% _Ace_")
    assert reg.search("an") == [ann]
    assert reg.search("LEE") == [ann]  # a word of the name
    assert reg.search("le") == [leo, ann]  # names that begin with it first
    assert reg.search("jose") == [jose] and reg.search("MARTI") == [jose]
    assert reg.search("the l") == [leo]  # the nickname
    assert reg.search("100%") == [odd] and reg.search("_a") == [odd]  # no LIKE wildcards
    assert reg.search("%") == [] and reg.search("x") == []
    assert len(reg.search("", limit=2)) == 2


def test_merge_a_duplicate(reg):
    keep = reg.add("Ann Lee", external=[("fargo", "12345")])
    dup = reg.add("Anne Lee", nickname="Annie", rating=530, external=[("league", "A-77")])
    merged = reg.merge(keep.id, dup.id)
    assert merged.nickname == "Annie" and merged.rating == 530
    assert merged.external == (("fargo", "12345"), ("league", "A-77"))
    assert [p.id for p in reg.listed()] == [keep.id]
    assert reg.resolve(dup.id) == merged and reg.get(dup.id).merged_into == keep.id
    assert reg.aliases(keep.id) == ["Anne Lee"]
    assert reg.search("anne") == []
    with pytest.raises(RegistryError, match=f"was merged into player {keep.id}"):
        reg.rename(dup.id, "Other")
    with pytest.raises(RegistryError, match="merged into themselves"):
        reg.merge(keep.id, keep.id)
    # the duplicate's name is free again for a new person
    assert reg.add("Anne Lee").id != dup.id


def test_entrants_come_from_the_registry_and_play_a_tournament(reg):
    from railbird.competition import tournament as T
    from railbird.competition.spec import make_spec

    ann, bob, dup = reg.add("Ann"), reg.add("Bob"), reg.add("Bobby")
    reg.merge(bob.id, dup.id)
    got = reg.entrants([dup.id, ann.id])  # a merged id stands for the player who stays
    assert [(e.player, e.name) for e in got] == [(bob.id, "Bob"), (ann.id, "Ann")]
    t = T.draw(T.create(make_spec("single_elimination", "9-ball", 3), got))
    assert T.match_input(t, "W1-1")["players"] == ["Bob", "Ann"]
    with pytest.raises(RegistryError, match="no player 99"):
        reg.entrants([ann.id, 99])
    with pytest.raises(CompetitionError, match="entered twice"):
        T.create(make_spec("single_elimination", "9-ball", 3), reg.entrants([bob.id, dup.id]))


def test_merge_refuses_two_different_ids_of_one_system(reg):
    a = reg.add("Ann", external=[("fargo", "1")])
    b = reg.add("Anne", external=[("fargo", "2")])
    with pytest.raises(RegistryError, match=r"both have a fargo id \(Ann: 1, Anne: 2\)"):
        reg.merge(a.id, b.id)
    assert len(reg.listed()) == 2  # nothing changed
    reg.edit(b.id, external=[("fargo", None)])
    assert reg.merge(a.id, b.id).external == (("fargo", "1"),)


def test_an_external_id_names_one_player(reg):
    a = reg.add("Ann", external=[("fargo", "1")])
    with pytest.raises(RegistryError, match=f"fargo id 1 belongs to player {a.id}"):
        reg.add("Bob", external=[("fargo", "1")])
    assert [p.name for p in reg.listed()] == ["Ann"]  # the refused add left no row
    with pytest.raises(InvalidName, match="lowercase word"):
        reg.add("Cy", external=[("Fargo Rating", "3")])


def test_edit_changes_only_what_is_given(reg):
    p = reg.add("Ann", nickname="Annie", rating=500)
    assert reg.edit(p.id, rating=510) == reg.get(p.id)
    assert (reg.get(p.id).nickname, reg.get(p.id).rating) == ("Annie", 510)
    assert reg.edit(p.id, nickname=None).nickname is None
    with pytest.raises(InvalidName, match="0 to 9999"):
        reg.edit(p.id, rating=-1)


def test_a_change_inside_the_callers_transaction_rolls_back_with_it(journal, reg):
    journal.db.execute("BEGIN")
    reg.add("Ann")
    journal.db.execute("ROLLBACK")
    assert reg.listed() == []


def test_a_journal_without_the_tables_lists_nobody(tmp_path):
    db = sqlite3.connect(tmp_path / "empty.sqlite", isolation_level=None)
    reg = PlayerRegistry(db)
    assert reg.listed() == [] and reg.search("a") == []
    with pytest.raises(CompetitionError, match="the registry is empty"):
        reg.get(1)


# -- railbird players -----------------------------------------------------------------------
def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(["players", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_adds_lists_renames_edits_and_merges(journal, capsys):
    j = ["--journal", journal.path]
    code, out, _ = cli(capsys, "add", "Ann Lee", "--nickname", "Annie", "--rating", "540",
                       "--id", "fargo=12345", *j)  # fmt: skip
    assert code == 0 and out == "added player 1: Ann Lee ('Annie', rating 540, fargo 12345)\n"
    assert cli(capsys, "add", "Anne Lee", *j)[0] == 0
    assert cli(capsys, "add", "Bob", *j)[0] == 0
    code, out, _ = cli(capsys, "list", *j)
    assert out.splitlines() == [
        "id  name      nickname  rating  ids",
        "1   Ann Lee   Annie     540     fargo=12345",
        "2   Anne Lee",
        "3   Bob",
    ]
    code, out, _ = cli(capsys, "list", "ann", "--format", "json", *j)
    assert [p["name"] for p in json.loads(out)["players"]] == ["Ann Lee", "Anne Lee"]
    code, out, _ = cli(capsys, "merge", "1", "2", *j)
    assert code == 0 and out.startswith("merged player 2 (Anne Lee) into 1: Ann Lee")
    code, out, _ = cli(capsys, "list", "--format", "json", *j)
    doc = json.loads(out)["players"]
    assert [(p["id"], p["aliases"]) for p in doc] == [(1, ["Anne Lee"]), (3, [])]
    assert cli(capsys, "rename", "3", "Bob Stone", *j)[1] == "renamed player 3: Bob -> Bob Stone\n"
    code, out, _ = cli(capsys, "edit", "3", "--rating", "610", "--id", "league=B-2", *j)
    assert out == "player 3: Bob Stone (rating 610, league B-2)\n"
    code, out, _ = cli(capsys, "edit", "3", "--rating", "", "--id", "league=", *j)
    assert out == "player 3: Bob Stone\n"


def test_the_commands_errors_are_one_line_and_status_2(journal, capsys, tmp_path):
    j = ["--journal", journal.path]
    for argv, message in [
        (["add", "Ann\x07", *j], "control characters (U+0007 found)"),
        (["add", "A" * 70, *j], "at most 64 characters (70 given)"),
        (["add", "Ann", "--rating", "high", *j], "a rating is a whole number"),
        (["add", "Ann", "--id", "fargo", *j], "--id takes SYSTEM=ID"),
        (["merge", "1", "2", *j], "no player 2: the registry is empty"),
        (["list", "--journal", str(tmp_path / "none.sqlite")], "no such journal file"),
        (["list"], "give --journal, or --config"),
    ]:
        code, out, err = cli(capsys, *argv)
        assert (code, out) == (2, ""), argv
        assert err.startswith("railbird players: ") and message in err and err.count("\n") == 1


def test_the_installed_command_runs(journal):
    r = subprocess.run(
        [sys.executable, "-m", "railbird", "players", "add", "Ann", "--journal", journal.path],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (r.returncode, r.stdout) == (0, "added player 1: Ann\n"), r.stderr
