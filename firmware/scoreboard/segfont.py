"""7-segment font for the MAX7219 in no-decode mode (common subset).

Bit order of a digit register: DP A B C D E F G (bit 7 .. bit 0).
Letters 7 segments cannot draw (K M V W X) are approximations; S shares 5's glyph,
O shares 0's, Z shares 2's. protocol/SCOREBOARD.md lists the screens that use them.
"""

DP = 0x80

GLYPHS = {
    " ": 0x00, "-": 0x01, "_": 0x08, "=": 0x09, "'": 0x02,
    "0": 0x7E, "1": 0x30, "2": 0x6D, "3": 0x79, "4": 0x33,
    "5": 0x5B, "6": 0x5F, "7": 0x70, "8": 0x7F, "9": 0x7B,
    "A": 0x77, "B": 0x1F, "C": 0x4E, "D": 0x3D, "E": 0x4F, "F": 0x47, "G": 0x5E,
    "H": 0x37, "I": 0x06, "J": 0x3C, "K": 0x57, "L": 0x0E, "M": 0x55, "N": 0x15,
    "O": 0x7E, "P": 0x67, "Q": 0x73, "R": 0x05, "S": 0x5B, "T": 0x0F, "U": 0x3E,
    "V": 0x1C, "W": 0x2A, "X": 0x37, "Y": 0x3B, "Z": 0x6D,
}

# glyph -> preferred character, for reading a display back as text
_REVERSE = {}
for _ch in "0123456789 -_='ABCDEFGHIJKLMNPQRTUVWY":
    if GLYPHS[_ch] not in _REVERSE:
        _REVERSE[GLYPHS[_ch]] = _ch


def render(text, width):
    """Text -> list of `width` segment bytes, left to right. A '.' lights the decimal
    point of the character before it. Longer text is cut, shorter is padded with blanks.
    Unknown characters show as '-'."""
    out = []
    for ch in text.upper():
        if ch == ".":
            if out and not out[-1] & DP:
                out[-1] |= DP
            else:
                out.append(DP)
            continue
        out.append(GLYPHS.get(ch, 0x01))
    out = out[:width]
    while len(out) < width:
        out.append(0)
    return out


def to_text(segs):
    """Segment bytes -> text (the inverse of render for the preferred characters)."""
    s = ""
    for g in segs:
        s += _REVERSE.get(g & 0x7F, "?")
        if g & DP:
            s += "."
    return s
