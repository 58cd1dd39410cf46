"""`railbird hw wiring`: valid SVG naming every pin, and the committed SVGs are current."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from railbird.cli import main
from railbird.hardware import PINMAP_DIR, pinmap_core, shipped_pinmaps, wiring

SVG_NS = "{http://www.w3.org/2000/svg}"


def texts(root):
    return [t.text or "" for t in root.iter(f"{SVG_NS}text")]


@pytest.mark.parametrize("path", shipped_pinmaps(), ids=lambda p: p.stem)
def test_svg_is_valid_and_names_every_pin(path, tmp_path):
    out = tmp_path / "w.svg"
    assert main(["hw", "wiring", str(path), "-o", str(out)]) == 0
    root = ET.parse(out).getroot()  # well-formed XML
    assert root.tag == f"{SVG_NS}svg"
    all_text = texts(root)
    pm = pinmap_core.load(str(path))
    groups = {g.get("id") for g in root.iter(f"{SVG_NS}g")}
    for name, pin, *_ in pinmap_core.functions(pm):
        assert f"GPIO {pin}" in all_text, (name, pin)
        assert name in all_text and name in groups
    assert pm["id"] in " ".join(all_text)


@pytest.mark.parametrize("path", shipped_pinmaps(), ids=lambda p: p.stem)
def test_committed_svg_is_up_to_date(path):
    committed = PINMAP_DIR.parent / f"wiring-{path.stem}.svg"
    assert committed.exists(), f"run: railbird hw wiring {path.stem} -o {committed}"
    assert committed.read_text() == wiring.render(json.loads(path.read_text())), (
        f"stale: run railbird hw wiring {path.stem} -o hardware/{committed.name}"
    )


def test_svg_escapes_text_and_goes_to_stdout(capsys):
    pm = json.loads((PINMAP_DIR / "esp32-devkitc.json").read_text())
    pm["board"] = "Board <rev A> & co"
    root = ET.fromstring(wiring.render(pm).encode())
    assert any("Board <rev A> & co" in t for t in texts(root))
    assert main(["hw", "wiring", "esp32-s3-devkitc"]) == 0
    ET.fromstring(capsys.readouterr().out.encode())


def test_wiring_rejects_malformed_map(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": 1, "id": "x", "chip": "esp32"}))
    assert main(["hw", "wiring", str(bad), "-o", str(tmp_path / "o.svg")]) == 2
    assert "missing field: beams" in capsys.readouterr().err
