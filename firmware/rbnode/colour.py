"""Ball identity in the ball return (hardware/colour.md): three colour sensors and a
presence gate read every ball that rolls past; each pass becomes one `ball` event (the
ball's number 0-15 and a confidence 0-100, protocol/SPEC.md).

Each reading of each sensor, taken while the gate is blocked, has the ambient light
measured while the gate was clear taken off and is matched to the nearest mixture of white
with one of the eight colours of a pool ball (1 yellow, 2 blue, 3 red, 4 purple, 5
orange, 6 green, 7 maroon, 8 black): a reading's spot often covers a stripe's edge or a
number circle. A pass sums each colour's votes and the readings' white shares, and when
the gate opens:

- white on CUE_WHITE of it or more: the cue ball (0);
- otherwise the colour with the most votes is the group; black is the 8;
- white above STRIPE_WHITE: the stripe of that colour (9-15), else the solid (a solid's
  number circles show less white than a stripe's caps from three views; hardware/
  colour.md "Simulated separation");
- the confidence is the lowest of how pure the group's votes are (two balls in one pass,
  a read at the edge of the view) and how far the white share is from the thresholds.

Task code only (a poll every SAMPLE_US from the node's loop; its floats are task-code
allocations, no IRQ handler is involved). `classify` and `nearest` are pure, shared with
the simulators (rbnode.hw.simcolour, host/railbird/sim, tools/sensing_corpus).
"""

from array import array

GROUPS = 9  # surface colours: 0 white, 1..7 the colours, 8 black
# Nominal reflectance of each surface colour in the sensor's R, G, B channels (linear,
# 0..1): the calibration's starting point (`railbird calibrate` learns each table's).
NOMINAL_RGB = (
    (0.80, 0.80, 0.78),
    (0.85, 0.55, 0.03),
    (0.03, 0.10, 0.40),
    (0.60, 0.04, 0.05),
    (0.14, 0.05, 0.22),
    (0.85, 0.22, 0.02),
    (0.03, 0.25, 0.10),
    (0.20, 0.03, 0.03),
    (0.04, 0.04, 0.04),
)
STRIPE_WHITE = 0.22  # mean white share above which the ball is the stripe
STRIPE_BAND = 0.06  # confidence 100 this far from STRIPE_WHITE, 0 at it
CUE_WHITE = 0.85  # mean white share above which the ball is the cue ball
PURE = 0.85  # group share of the votes at which its confidence is 100 (50 %: 0)
MIN_READS = 6  # fewer readings in a pass: confidence 0 (a ball at the edge, a glitch)
DARK = 0.025  # brightness (of white's) below which a reading sees no ball
MIXED = 0.8  # a reading whiter than this does not vote for a colour
SAMPLE_US = 2400  # the sensors' integration time (TCS34725, ATIME 0xFF)
MAX_PASS_US = 400_000  # a ball takes 50-200 ms: longer is a ball held or two merged
# Each pass also reports the median of its readings per channel as a reflectance x 1000
# (the `ball` event's `rgb`, what `railbird calibrate` learns a table's colours from): a
# histogram of RGB_BINS bins RGB_STEP wide per channel, so a pass needs no buffer of its
# readings and the median is RGB_BITS bits a channel (ring.py packs it with the confidence)
RGB_BITS = 7
RGB_BINS = 1 << RGB_BITS
RGB_STEP = 10  # reflectance x 1000 per bin: 0..1.28 of white's counts


def reference(rgb=NOMINAL_RGB, white_counts=700):
    """The classifier's table: each colour's (R, G, B) in counts, from reflectances and the
    counts a reflectance of 1 gives (the LED, the gain)."""
    return [(c[0] * white_counts, c[1] * white_counts, c[2] * white_counts) for c in rgb]


def learn_colours(readings, white_counts=700):
    """The table's reflectances (NOMINAL_RGB's shape, for ColourStation(rgb=...)) from
    calibration readings: {colour 0..8: [(R, G, B) counts, ambient taken off]}, gathered by
    rolling the cue ball (0), each solid (1-7) and the 8 past the station. The median of each
    channel: a solid's number circles and a spot at the edge are a minority of its
    readings. A colour without readings keeps its nominal reflectance."""
    out = []
    for k in range(GROUPS):
        rs = readings.get(k)
        if not rs:
            out.append(NOMINAL_RGB[k])
            continue
        ch = []
        for i in range(3):
            vs = sorted(x[i] for x in rs)
            ch.append(vs[len(vs) // 2] / white_counts)
        out.append((ch[0], ch[1], ch[2]))
    return tuple(out)


def rgb_of(packed):
    """[R, G, B] reflectance x 1000 (each bin's middle) of a pass's packed medians."""
    m = RGB_BINS - 1
    return [(packed & m) * RGB_STEP + RGB_STEP // 2,
            ((packed >> RGB_BITS) & m) * RGB_STEP + RGB_STEP // 2,
            ((packed >> (2 * RGB_BITS)) & m) * RGB_STEP + RGB_STEP // 2]


def packed_of(rgb):
    """rgb_of's inverse (a spilt event read back): the bins of [R, G, B] x 1000."""
    m = RGB_BINS - 1
    out = 0
    for i in range(3):
        b = rgb[i] // RGB_STEP
        out |= (b if b < m else m) << (RGB_BITS * i)
    return out


def table_rgb(scaled, scale=1000):
    """The reflectances (NOMINAL_RGB's shape) of a config's `colour.rgb`: 27 ints, each
    reflectance x `scale` (rbproto.codec.COLOUR_SCALE), white, 1..7, black, R G B each."""
    return tuple((scaled[3 * k] / scale, scaled[3 * k + 1] / scale, scaled[3 * k + 2] / scale)
                 for k in range(GROUPS))


def config_rgb(rgb, scale=1000):
    """The config's `colour.rgb` (27 ints) of a table of reflectances: table_rgb's inverse,
    to 1/scale; what `railbird calibrate` publishes from learn_colours."""
    out = []
    for c in rgb:
        for x in c:
            v = int(x * scale + 0.5)
            out.append(v if v > 0 else 0)
    return out


def nearest(ref, r, g, b):
    """(colour 1..8, white share 0..1) of one reading (ambient taken off): the colour whose
    mixture with white is nearest (a reading's spot may cover a stripe's edge or a number
    circle), and how much white that mixture holds; (-1, 0.0) when the reading holds too
    little light to be a ball (the view beside the ball: the far wall's black felt, DARK
    of white's brightness; the 8 ball gives about twice that)."""
    w = ref[0]
    if r + g + b <= DARK * (w[0] + w[1] + w[2]):
        return -1, 0.0
    best = -1
    best_e = 0.0
    best_a = 0.0
    for k in range(1, GROUPS):
        c = ref[k]
        d0 = w[0] - c[0]
        d1 = w[1] - c[1]
        d2 = w[2] - c[2]
        v0 = r - c[0]
        v1 = g - c[1]
        v2 = b - c[2]
        a = (v0 * d0 + v1 * d1 + v2 * d2) / (d0 * d0 + d1 * d1 + d2 * d2)
        if a < 0.0:
            a = 0.0
        elif a > 1.0:
            a = 1.0
        e0 = v0 - a * d0
        e1 = v1 - a * d1
        e2 = v2 - a * d2
        # relative error: a dark colour's readings are as telling as a bright one's
        m = c[0] + c[1] + c[2] + a * (d0 + d1 + d2) + 30.0
        e = (e0 * e0 + e1 * e1 + e2 * e2) / (m * m)
        if best < 0 or e < best_e:
            best = k
            best_e = e
            best_a = a
    return best, best_a


def classify(votes, white, n):
    """(ball 0..15, confidence 0..100) from a pass: `votes` per colour (GROUPS long, index
    0 unused: each reading's vote, 1 - its white share, for its colour), `white` the sum
    of the readings' white shares and `n` the number of readings."""
    if n < MIN_READS:
        return 0, 0
    wf = white / n
    if wf >= CUE_WHITE:
        return 0, int(100 * min(1.0, (wf - CUE_WHITE) / (1.0 - CUE_WHITE) * 2))
    g = 1
    total = 0.0
    for k in range(1, GROUPS):
        total += votes[k]
        if votes[k] > votes[g]:
            g = k
    share = votes[g] / total if total > 0 else 0.0
    pure = 1.0 if share >= PURE else max(0.0, (share - 0.5) / (PURE - 0.5))
    cue = min(1.0, (CUE_WHITE - wf) / STRIPE_BAND)
    if g == 8:
        return 8, int(100 * min(pure, cue))
    stripe = wf >= STRIPE_WHITE
    margin = min(1.0, abs(wf - STRIPE_WHITE) / STRIPE_BAND, cue)
    return (g + 8 if stripe else g), int(100 * min(pure, margin))


class ColourStation:
    """The colour station's driver. `hw` gives colour_sensors(), colour_read(i, buf) and
    colour_gate() (rbnode.hw.hal); `emit(t_us, ball, conf, rgb)` is called in task code
    when a pass ends, with `t_us` the node time the gate closed and `rgb` the pass's median
    reflectances packed (rgb_of reads them). poll(now_us) every SAMPLE_US."""

    def __init__(self, hw, emit, rgb=None, white_counts=700):
        self.hw = hw
        self.emit = emit
        self.sensors = hw.colour_sensors()
        self.white_counts = white_counts
        self.ref = reference(rgb or NOMINAL_RGB, white_counts)
        self.votes = [0.0] * GROUPS
        self.white = 0.0
        self.n = 0
        self.start = None
        self.buf = [0, 0, 0, 0]
        # ambient (R, G, B) per sensor, fixed point x16, tracked while the gate is clear
        self.amb = [0] * (3 * self.sensors)
        self.reads = 0  # passes reported
        self.errors = 0  # sensor reads that failed (OSError: unplugged, bus stuck)
        self.long = 0  # passes longer than MAX_PASS_US (reported with confidence 0)
        self.ok = self.sensors > 0
        # the pass's readings per channel, R bins then G then B (RGB_BINS each), allocated
        # once: 768 bytes
        self.hist = array("H", range(3 * RGB_BINS))
        self._clear_hist()
        self.hn = 0  # readings in the histogram
        self.per_bin = white_counts * RGB_STEP / 1000.0  # counts per bin

    def set_rgb(self, rgb=None):
        """Read with the table's reflectances `rgb` (the config's `colour`, table_rgb), or
        the nominal ones (None): the node calls it when a config arrives and at boot."""
        self.ref = reference(rgb or NOMINAL_RGB, self.white_counts)

    def poll(self, now_us):
        hw = self.hw
        buf = self.buf
        amb = self.amb
        blocked = hw.colour_gate()
        for i in range(self.sensors):
            try:
                hw.colour_read(i, buf)
            except OSError:
                self.errors += 1
                self.ok = False
                continue
            self.ok = True
            j = 3 * i
            if blocked:
                r = buf[0] - (amb[j] >> 4)
                g = buf[1] - (amb[j + 1] >> 4)
                b = buf[2] - (amb[j + 2] >> 4)
                r = r if r > 0 else 0
                g = g if g > 0 else 0
                b = b if b > 0 else 0
                k, a = nearest(self.ref, r, g, b)
                if k >= 0:
                    self._count(r, g, b)
                    if a < MIXED:
                        self.votes[k] += 1.0 - a
                    self.white += a
                    self.n += 1
            else:
                # exponential average over ~16 readings: flicker averages out
                amb[j] += buf[0] - (amb[j] >> 4)
                amb[j + 1] += buf[1] - (amb[j + 1] >> 4)
                amb[j + 2] += buf[2] - (amb[j + 2] >> 4)
        if blocked:
            if self.start is None:
                self.start = now_us
        elif self.start is not None:
            self._end(now_us)

    def _clear_hist(self):
        h = self.hist
        for i in range(3 * RGB_BINS):
            h[i] = 0

    def _count(self, r, g, b):
        """One reading that sees the ball into the pass's histogram."""
        h = self.hist
        top = RGB_BINS - 1
        per = self.per_bin
        i = int(r / per)
        h[i if i < top else top] += 1
        i = int(g / per)
        h[RGB_BINS + (i if i < top else top)] += 1
        i = int(b / per)
        h[2 * RGB_BINS + (i if i < top else top)] += 1
        self.hn += 1

    def _medians(self):
        """The pass's median bin per channel, packed (rgb_of), and the histogram cleared."""
        h = self.hist
        half = (self.hn + 1) // 2
        out = 0
        for c in range(3):
            seen = 0
            j = c * RGB_BINS
            for i in range(RGB_BINS):
                seen += h[j + i]
                if seen >= half:
                    out |= i << (RGB_BITS * c)
                    break
        self._clear_hist()
        self.hn = 0
        return out

    def pending_since(self):
        """The node time the gate closed on the ball under the station (its read will be
        stamped then), or None: for the batch watermark."""
        return self.start

    def _end(self, now_us):
        if self.n == 0:  # the gate saw a ball no sensor read (unplugged): nothing to report
            self.start = None
            return
        ball, conf = classify(self.votes, self.white, self.n)
        if now_us - self.start > MAX_PASS_US:
            self.long += 1
            conf = 0
        t = self.start
        self.start = None
        self.n = 0
        self.white = 0.0
        for k in range(GROUPS):
            self.votes[k] = 0.0
        self.reads += 1
        self.emit(t, ball, conf, self._medians())
