"""The rule options a match form offers (REFEREE.md §5)."""


def test_the_match_form_offers_every_yes_no_rule_option_of_the_game():
    """A New match form offers what host.toml can say (issue 22, 6): every yes/no option
    of the game but `referee` (the form sets it), editions first, each with what it changes."""
    from railbird.rules.options import OPTIONS, form_options

    for game in ("10-ball", "14.1", "9-ball", "8-ball"):
        offered = form_options(game)
        want = {
            n
            for n, spec in OPTIONS.items()
            if game in spec.games and spec.default is False and n != "referee"
        }
        assert {o["name"] for o in offered} == want
        kinds = [o["kind"] for o in offered]
        assert kinds == sorted(kinds, key=lambda k: k != "edition")
        assert all(o["doc"] == OPTIONS[o["name"]].doc for o in offered)
    assert [o["name"] for o in form_options("10-ball") if o["kind"] == "edition"] == [
        "wpa2016_ten_last_ball",
        "wpa2025_no_safety_call",
    ]
