"""The BOM adds up and the hardware docs exist and point at real files."""

import csv
from pathlib import Path

HW = Path(__file__).resolve().parents[2] / "hardware"


def test_bom_total_matches_lines():
    rows = list(csv.DictReader((HW / "bom.csv").open()))
    total = [r for r in rows if r["item"] == "Total"]
    lines = [r for r in rows if r["item"] != "Total"]
    assert len(total) == 1
    for r in lines:
        assert (
            abs(float(r["unit_usd"]) * float(r["qty_per_table"]) - float(r["extended_usd"])) < 0.01
        ), r
    assert (
        abs(sum(float(r["extended_usd"]) for r in lines) - float(total[0]["extended_usd"])) < 0.01
    )
    assert 50 < float(total[0]["extended_usd"]) < 200


def test_docs_exist_and_name_the_pin_maps():
    for name in ("README.md", "installation.md", "calibration.md", "pinmaps/README.md"):
        assert (HW / name).stat().st_size > 1000, name
    readme = (HW / "README.md").read_text()
    for f in ("wiring-esp32-devkitc.svg", "wiring-esp32-s3-devkitc.svg", "bom.csv"):
        assert f in readme and (HW / f).exists()
