"""Sensing config (SPEC.md `config`): validate against the protocol and the pin map,
persist, hash.

A config arrives on the `node/<node>/config` topic (rbnode.trust first refuses a retained
one, and on a board with a venue key one the key did not sign). `check(msg, hw, active)`
returns the full config (defaults filled in) or raises ConfigError(reason); the node then
applies it live and `save()`s it; on refusal the old config keeps running and the reason
goes into `status.config_error`. Refusals:
- anything the codec refuses (types, ranges, a channel used twice in one list);
- a channel the pin map lacks (`hw.channels("beam")`, `"rail"`, `"cue"`);
- two functions on one beam channel: `cue_ch` is a beam-input index like a pocket's `ch`
  (channels 0..beams-1), or, when the board has a dedicated cue input, the index
  `beams + i` of that input (6 on the shipped 6-beam pin maps = pinmap_core.cue_channel,
  the default in firmware/config.json; SPEC.md `config`); a cue_ch equal to a pocket's ch
  is refused;
- a `strike` input the board lacks: its `ch` is a rail input index (0..rails-1, the piezo
  wired to a rail's comparator and ADC instead of a cushion) or `rails + i` for the pin
  map's dedicated strike input i (hw.channels("strike")); the codec already refuses one on
  a configured rail's channel;
- a `colour` table (the colour station's learned reflectances, SPEC.md `config`) on a
  board whose pin map has no colour station;
- a `rev` below the active one (a stale retained config). An equal rev with the same
  content is "unchanged" (the broker re-delivers the retained config on every connect).

Persistence: `<fs_root>/rbconfig.json`, written to a temporary file and renamed, so a
power cut leaves either the old or the new file. A missing or corrupt file means the
defaults of firmware/config.json (`sensing`).
"""

import json

from rbproto import codec
from rbproto.signing import canonical  # one definition: the config hash, save()

FILE = "rbconfig.json"

FIELDS = ("rev", "pockets", "rails", "cue_ch", "strike", "colour", "debounce_us", "jam_us",
          "status_period_s", "batch_max", "batch_linger_ms")


class ConfigError(Exception):
    def __init__(self, reason):
        # super(), not Exception.__init__(self, ...): MicroPython 1.27 has no
        # Exception.__init__ attribute (a refused config raised AttributeError there)
        super().__init__(reason)
        self.reason = reason


def defaults():
    d = {"v": 1, "rev": 0, "pockets": [], "rails": []}
    for k in codec.CONFIG_DEFAULTS:
        d[k] = codec.CONFIG_DEFAULTS[k]
    return d


def crc32(data):
    try:
        import binascii
        return binascii.crc32(data) & 0xFFFFFFFF
    except (ImportError, AttributeError):  # a port built without binascii.crc32
        c = 0xFFFFFFFF
        for b in data:
            c ^= b
            for _ in range(8):
                c = (c >> 1) ^ (0xEDB88320 & -(c & 1))
        return c ^ 0xFFFFFFFF


def config_hash(cfg):
    """8 lowercase hex digits: CRC32 of the canonical JSON of the config's own fields."""
    d = {}
    for k in FIELDS:
        if k in cfg:
            d[k] = cfg[k]
    for k in ("strike", "colour"):
        if d.get(k, 0) is None:
            del d[k]  # not configured: the hash a config had before the field existed
    return "%08x" % crc32(canonical(d).encode())


def check(msg, hw, active=None):
    """-> the complete config (defaults filled in); ConfigError(reason) when refused."""
    try:
        codec.validate("config", msg)
    except codec.ProtocolError as e:
        raise ConfigError(e.reason)
    cfg = defaults()
    for k in FIELDS:
        if k in msg:
            cfg[k] = msg[k]
    nbeam = hw.channels("beam")
    nrail = hw.channels("rail")
    ncue = hw.channels("cue")
    _check_map(cfg["pockets"], "pockets", "pocket", nbeam, "beams", hw)
    _check_map(cfg["rails"], "rails", "rail", nrail, "rails", hw)
    cue = cfg["cue_ch"]
    if cue is not None:
        if cue >= nbeam + ncue:
            raise ConfigError("bad value: cue_ch: channel %d not in pin map %s"
                              % (cue, hw.pinmap_id))
        for p in cfg["pockets"]:
            if p["ch"] == cue:
                raise ConfigError("bad value: cue_ch: channel %d is also pocket %s"
                                  % (cue, p["pocket"]))
    if cfg["strike"] is not None:
        cfg["strike"] = _check_strike(cfg["strike"], nrail, hw)
    if cfg["colour"] is not None and hw.colour_sensors() == 0:
        raise ConfigError("bad value: colour: pin map %s has no colour station" % hw.pinmap_id)
    if active is not None and cfg["rev"] < active.get("rev", 0):
        raise ConfigError("bad value: rev: %d below the active %d" % (cfg["rev"], active["rev"]))
    return cfg


def _check_strike(st, nrail, hw):
    """The strike sensor `st` with its defaults filled in; refused when the board lacks its
    input (a rail input 0..nrail-1 or the pin map's dedicated strike input nrail + i)."""
    full = {}
    for k in codec.STRIKE_DEFAULTS:
        full[k] = codec.STRIKE_DEFAULTS[k]
    for k in st:
        if k in ("ch", "threshold", "refractory_us"):
            full[k] = st[k]
    nst = hw.channels("strike")
    if full["ch"] >= nrail + nst:
        raise ConfigError("bad value: strike.ch: channel %d not in pin map %s (%d rails, "
                          "%d strike inputs)" % (full["ch"], hw.pinmap_id, nrail, nst))
    return full


def _check_map(entries, field, key, n, unit, hw):
    """Refuse an entry whose channel the pin map lacks (it has n) or whose pocket/rail is
    already mapped: the codec checks the message alone, not against the board."""
    seen = set()
    i = 0
    for e in entries:
        if e["ch"] >= n:
            raise ConfigError("bad value: %s[%d].ch: channel %d not in pin map %s (%d %s)"
                              % (field, i, e["ch"], hw.pinmap_id, n, unit))
        if e[key] in seen:
            raise ConfigError("bad value: %s[%d].%s: %s mapped twice" % (field, i, key, e[key]))
        seen.add(e[key])
        i += 1


def join(root, name):
    """root + "/" + name without a doubled slash (the device's fs root is "/")."""
    return (root[:-1] if root.endswith("/") else root) + "/" + name


def path(hw):
    return join(hw.fs_root(), FILE)


def load(hw, fallback=None):
    """The persisted config, else `fallback` (checked), else defaults(); never raises."""
    try:
        with open(path(hw)) as f:
            return check(json.loads(f.read()), hw)
    except (OSError, ValueError, ConfigError):
        pass
    if fallback is not None:
        try:
            return check(fallback, hw)
        except ConfigError:
            pass
    return defaults()


def save(hw, cfg):
    import os
    p = path(hw)
    tmp = p + ".tmp"
    with open(tmp, "w") as f:
        f.write(canonical(cfg))
    try:
        os.remove(p)  # MicroPython's rename does not replace on every port
    except OSError:
        pass
    os.rename(tmp, p)
