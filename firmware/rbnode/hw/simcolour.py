"""A simulated colour station in the ball return (CPython and MicroPython): what the two
colour sensors and the presence gate of hardware/colour.md read while a ball rolls past.

The model (hardware/colour.md, "Simulated separation", has the figures it gives):

- ball colours: the 16 standard balls, 1-7 solid colours on 9-15 as stripes, 8 black, 0
  white; each colour as the reflectance the sensor's R, G, B channels see (linear,
  0..1), `BALL_RGB`;
- geometry: a ball of radius 28.6 mm rolls along the track past the sensors (rotation
  about the horizontal axis across the track, no slip). Sensor 0 looks down from above,
  sensors 1 and 2 from 45° up either side; each sees the spot of the ball's surface on the line
  from the ball's centre to the sensor, a spot of `SPOT_DEG` radius (a collimator tube).
  Balls lie in random orientations: a stripe ball's white caps (|latitude| > 35° from its
  stripe's axis) and a solid's two number circles (26° radius, white with dark ink) show
  in a fraction of the samples that depends on it: the stripe fraction of a read;
- gate: an IR beam 15 mm above the ball centres, blocked while a ball is under the
  sensors; two touching balls leave a gap of about 8 mm at that height, so the gate opens
  between them (`touching`: the next ball follows with no space between);
- counts: a TCS34725 at 2.4 ms integration (full scale 1024) with the station's white LED:
  white ~ `LED_COUNTS`; ambient light leaking into the return adds counts (with a 100 Hz
  flicker), Poisson-like shot noise and read noise.

Everything is a pure function of its arguments and `rnd` (a function returning a float
in [0, 1), e.g. SimHardware's or random.random).
"""

import math

from rbnode.colour import NOMINAL_RGB, SAMPLE_US, ColourStation

R_MM = 28.575
SPOT_DEG = 8.0
STRIPE_LAT = math.sin(math.radians(35.0))  # |b . s| above this: a white cap
NUMBER_COS = math.cos(math.radians(26.0))  # within this of a number axis: the circle
INK_COS = math.cos(math.radians(11.0))  # the digits' ink: the middle of the circle
SENSOR_GAP_MM = 6.0  # sensor window to ball surface at closest approach
# top, and 45° up either side (hardware/colour.md: two views leave 3 % of the stripes
# looking solid, three none)
SENSOR_DIRS = ((0.0, 0.0, 1.0), (0.0, -0.7071, 0.7071), (0.0, 0.7071, 0.7071))
VIEW_X_MM = 20.0  # the sensors see the ball while its centre is within this of them
GATE_X_MM = 22.0  # the gate is blocked while the centre is within this
LED_COUNTS = 700.0
READ_NOISE = 2.0

# the reflectance (R, G, B) of each colour group (0 white, 1 yellow, 2 blue, 3 red,
# 4 purple, 5 orange, 6 green, 7 maroon, 8 black): the nominal ones the driver starts from
GROUP_RGB = NOMINAL_RGB
WHITE = GROUP_RGB[0]
INK = (0.05, 0.05, 0.05)


def group_of(ball):
    """Colour group 0..8 of ball 0..15 (0 white, 1-7 colours, 8 black)."""
    if ball == 0 or ball == 8:
        return ball
    return ball if ball < 8 else ball - 8


def is_stripe(ball):
    return ball > 8


def _gauss(rnd):
    u = rnd()
    if u < 1e-12:
        u = 1e-12
    return math.sqrt(-2.0 * math.log(u)) * math.cos(2.0 * math.pi * rnd())


def random_axis(rnd):
    """A unit vector uniform on the sphere."""
    z = 2.0 * rnd() - 1.0
    a = 2.0 * math.pi * rnd()
    r = math.sqrt(max(0.0, 1.0 - z * z))
    return (r * math.cos(a), r * math.sin(a), z)


def _surface(ball, axis, b, rgb):
    """The reflectance at body point b (unit) of `ball` whose stripe/number axis is `axis`."""
    d = axis[0] * b[0] + axis[1] * b[1] + axis[2] * b[2]
    if ball == 0:
        return rgb[0]
    if is_stripe(ball):
        return rgb[0] if d > STRIPE_LAT or d < -STRIPE_LAT else rgb[group_of(ball)]
    ad = d if d > 0 else -d
    if ad > INK_COS:
        return INK
    if ad > NUMBER_COS:
        return rgb[0]
    return rgb[group_of(ball)]


def _spot(ball, axis, u, rgb):
    """The mean reflectance over the spot around direction u (body frame): 5 points."""
    s = math.sin(math.radians(SPOT_DEG))
    # two directions across u
    if abs(u[2]) < 0.9:
        p = (u[1], -u[0], 0.0)
    else:
        p = (0.0, u[2], -u[1])
    n = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
    p = (p[0] / n, p[1] / n, p[2] / n)
    q = (u[1] * p[2] - u[2] * p[1], u[2] * p[0] - u[0] * p[2], u[0] * p[1] - u[1] * p[0])
    acc = [0.0, 0.0, 0.0]
    pts = ((0.0, 0.0), (s, 0.0), (-s, 0.0), (0.0, s), (0.0, -s))
    for a, c in pts:
        v = (u[0] + a * p[0] + c * q[0], u[1] + a * p[1] + c * q[1], u[2] + a * p[2] + c * q[2])
        m = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        got = _surface(ball, axis, (v[0] / m, v[1] / m, v[2] / m), rgb)
        acc[0] += got[0]
        acc[1] += got[1]
        acc[2] += got[2]
    return (acc[0] / 5, acc[1] / 5, acc[2] / 5)


def counts(refl, ambient, t_us, rnd, noise=1.0):
    """(R, G, B, C) counts of one 2.4 ms reading of reflectance `refl` (None: no ball, the
    far wall's black felt) with `ambient` counts of leaking light (100 Hz flicker, half
    its level) and shot and read noise scaled by `noise`."""
    if refl is None:
        refl = (0.02, 0.02, 0.02)
    amb = ambient * (1.0 + 0.5 * math.sin(2.0 * math.pi * t_us / 10_000.0))
    out = [0, 0, 0, 0]
    total = 0.0
    for i in range(3):
        mean = LED_COUNTS * refl[i] + amb / 3.0
        v = mean + noise * (math.sqrt(mean) + READ_NOISE) * _gauss(rnd)
        out[i] = min(1024, max(0, int(v)))
        total += mean
    c = total + noise * (math.sqrt(total) + READ_NOISE) * _gauss(rnd)
    out[3] = min(1024, max(0, int(c)))
    return out


def ball_pass(ball, speed_mm_s, rnd, axis=None, rgb=GROUP_RGB):
    """One ball rolling past: [(dt_us, [refl of sensor 0, refl of sensor 1] or None, gate)]
    every SAMPLE_US from the gate closing to it opening; refl None where a sensor does not
    see the ball yet (edge of its view)."""
    if axis is None:
        axis = random_axis(rnd)
    phase0 = 2.0 * math.pi * rnd()  # the ball's roll angle as it enters
    out = []
    t = 0
    dist = SENSOR_GAP_MM + R_MM
    x = -GATE_X_MM
    while x <= GATE_X_MM:
        phi = phase0 + x / R_MM
        cp, sp = math.cos(phi), math.sin(phi)
        seen = []
        for d in SENSOR_DIRS:
            if x < -VIEW_X_MM or x > VIEW_X_MM:
                seen.append(None)
                continue
            # the sensor, above the track at (0, dy, dz) * dist; the ball centre at (x, 0, 0)
            w = (-x, d[1] * dist, d[2] * dist)
            m = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
            w = (w[0] / m, w[1] / m, w[2] / m)
            # world -> body: rotate by -phi about y
            b = (cp * w[0] - sp * w[2], w[1], sp * w[0] + cp * w[2])
            seen.append(_spot(ball, axis, b, rgb))
        out.append((t, seen))
        t += SAMPLE_US
        x += speed_mm_s * SAMPLE_US / 1e6
    return out


def gap_us(speed_mm_s, touching):
    """How long the gate stays clear between this ball and the next one that follows it
    (touching: the centres 2 R apart, the gate blocked over 2 GATE_X_MM of it)."""
    gap = 2 * R_MM - 2 * GATE_X_MM if touching else 60.0
    return int(gap / speed_mm_s * 1e6)


def table_colours(seed_rnd, spread=0.15):
    """One table's ball set and light: each colour's reflectance off the nominal by up to
    `spread` (a set's dyes, wear, the LED's tint), what `railbird calibrate` learns."""
    out = []
    for c in GROUP_RGB:
        out.append(tuple(min(0.95, v * (1.0 + spread * (2.0 * seed_rnd() - 1.0))) for v in c))
    return tuple(out)


class _PassHw:
    """The HAL's colour calls over a list of simulated readings (read_pass)."""

    def __init__(self, n):
        self.n = n
        self.gate = 0
        self.now = None

    def colour_sensors(self):
        return self.n

    def colour_gate(self):
        return self.gate

    def colour_read(self, i, buf):
        c = self.now[i]
        buf[0] = c[0]
        buf[1] = c[1]
        buf[2] = c[2]
        buf[3] = c[3]


def read_balls(balls, rnd, rgb=GROUP_RGB, ambient=40.0, noise=1.0, touching=(),
               speed=(300.0, 900.0), ref_rgb=None, cut=()):
    """What the driver (rbnode.colour.ColourStation) reports for `balls` rolling past one
    after another: [(t_us from the first gate closing, ball, conf)]. `rgb`: the table's
    true colours; `ref_rgb`: what the driver was calibrated with (None: the same);
    `touching`: indices of balls that follow the one before with no space between; `cut`:
    indices whose pass the driver misses (the sensor unplugged: no event)."""
    hw = _PassHw(len(SENSOR_DIRS))
    got = []
    st = ColourStation(hw, lambda t, b, c, rgb: got.append((t, b, c)), rgb=ref_rgb or rgb)
    t = 0
    for _ in range(24):  # the ambient average settles before the first ball
        hw.now = [counts(None, ambient, t, rnd, noise) for _ in SENSOR_DIRS]
        st.poll(t)
        t += SAMPLE_US
    t0 = t
    for i, ball in enumerate(balls):
        v = speed[0] + (speed[1] - speed[0]) * rnd()
        seq = ball_pass(ball, v, rnd, rgb=rgb)
        if i in cut:
            t += seq[-1][0] + SAMPLE_US
        else:
            hw.gate = 1
            for _dt, seen in seq:
                hw.now = [counts(s, ambient, t, rnd, noise) for s in seen]
                st.poll(t)
                t += SAMPLE_US
        hw.gate = 0
        clear = gap_us(v, (i + 1) in touching)
        end = t + clear
        while True:  # at least one reading with the gate clear: the pass ends
            hw.now = [counts(None, ambient, t, rnd, noise) for _ in SENSOR_DIRS]
            st.poll(t)
            t += SAMPLE_US
            if t >= end:
                break
    return [(tt - t0, b, c) for tt, b, c in got]
