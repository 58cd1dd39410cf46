"""The physics half of the corpus: seeded shots simulated with pooltool-billiards, each
reduced to a plain trace of what happened on the table (strike, ball-ball contacts, cushion
impacts with the rail and impact speed, balls pocketed) that the sensor model reads.

pooltool is imported only here and only when a trace is simulated, so the sensor model, the
stream writer and the scorer (and their test) run without it.

Coordinates are pooltool's: x across the table (0 = the left side seen from the head), y
along it (0 = the head rail, the breaking end). Pocket and rail names are Railbird's
(docs/architecture.md, "Conventions").
"""

from __future__ import annotations

import math
import random

# What a cached trace was made with: bump it whenever a change here changes the traces.
PHYSICS_VERSION = 3

# Playing surfaces (m): 7 ft 78 x 39 in, 8 ft 88 x 44 in, 9 ft 100 x 50 in.
TABLES = {
    "7ft": (1.9812, 0.9906),
    "8ft": (2.2352, 1.1176),
    "9ft": (2.54, 1.27),
}
# Break kinds -> the rack's rows (`_rack`): the corpus has break10 and break15 (14.1's
# opening safe break); break9 and break8 (power breaks) are for the break model's training
# (tools/sensing_corpus/breaks.py).
BREAK_RACKS = {"break10": 4, "break15": 5, "break9": 0, "break8": 5}
# pooltool's pocket ids: l/r = x = 0 / w; b/c/t = the head, side and foot pockets.
POCKET_NAMES = {"lb": "HL", "rb": "HR", "lc": "SL", "rc": "SR", "lt": "FL", "rt": "FR"}


def rail_at(x: float, y: float, w: float, length: float) -> str:
    """The rail (cushion segment between two pockets) nearest a point of the table."""
    d = {"L": x, "R": w - x, "H": y, "F": length - y}
    side = min(d, key=d.get)
    if side in ("H", "F"):
        return side
    return side + ("H" if y < length / 2 else "F")


def _plan(seed: int) -> list[dict]:
    """The seeded list of shots to simulate: kind, table and every random choice but the
    rack's own wiggle (seeded per shot)."""
    rng = random.Random(f"plan-{seed}")
    sizes = ("7ft", "8ft", "9ft")
    plan: list[dict] = []

    def add(kind, table, **kw):
        plan.append(
            {
                "id": len(plan),
                "kind": kind,
                "table": table,
                "rack_seed": rng.randrange(1 << 30),
                **kw,
            }
        )

    for i in range(60):  # 10-ball breaks, soft to hard (a soft one is often illegal)
        add(
            "break10",
            sizes[i % 3],
            cue_x=rng.uniform(0.25, 0.75),
            cue_y=rng.uniform(0.12, 0.24),
            speed=rng.uniform(3.5, 10.5),
            aim=rng.gauss(0, 0.4),
            b=rng.uniform(-0.3, 0.3),
        )
    for i in range(40):  # 14.1 opening breaks: a safe break clipping a back corner ball
        add(
            "break15",
            sizes[i % 3],
            side=rng.choice((-1, 1)),
            cue_x=rng.uniform(0.55, 0.8),
            cue_y=rng.uniform(0.12, 0.24),
            speed=rng.uniform(1.8, 4.5),
            cut=rng.uniform(55, 78),
            b=rng.uniform(-0.1, 0.4),
        )
    pockets = ("HL", "HR", "SL", "SR", "FL", "FR")
    for i in range(6 * 16):  # in-off attempts: the cue ball follows the tangent into a pocket
        add(
            "scratch",
            sizes[i % 3],
            pocket=pockets[(i // 3) % 6],
            attempt=i,
            cut=rng.uniform(25, 65),
            dist=rng.uniform(0.25, 0.9),
            speed=rng.uniform(1.2, 4.0),
            b=rng.uniform(-0.35, -0.05),
        )
    for i in range(150):  # pot attempts with a few balls on the table
        add(
            "pot",
            sizes[i % 3],
            n_balls=rng.randint(2, 8),
            speed=rng.uniform(0.8, 5.0),
            error=rng.gauss(0, 0.6),
            b=rng.uniform(-0.4, 0.4),
        )
    for i in range(24):  # soft safeties: roll up to a ball, reach no rail
        add("safety", sizes[i % 3], n_balls=rng.randint(2, 6), speed=rng.uniform(0.15, 0.45))
    return plan


# -- simulation (pooltool) ----------------------------------------------------------------
def _pt():
    import pooltool as pt

    return pt


def _table(pt, size: str):
    from pooltool.objects.table.specs import PocketTableSpecs

    length, w = TABLES[size]
    return pt.Table.from_table_specs(PocketTableSpecs(l=length, w=w))


def _rack(pt, table, rows: int, seed: int):
    """A rack on the foot spot: 4 rows (10-ball), 5 (fifteen balls: 14.1, 8-ball) or 0, the
    9-ball diamond (rows of 1, 2, 3, 2, 1)."""
    from pooltool.layouts import BallPos, Jump, ball_cluster_blueprint, generate_layout

    # Each position gets one ball id, shuffled here: pooltool's own choice among allowed ids
    # iterates a set of strings, whose order changes with the interpreter's hash seed.
    rng = random.Random(f"rack-{seed}")
    if rows == 0:  # 9-ball: the 1 at the apex, the 9 in the middle
        others = [str(i) for i in range(2, 9)]
        rng.shuffle(others)
        ids = ["1", others[0], others[1], others[2], "9", *others[3:]]
        moves = [Jump.UPLEFT(), Jump.RIGHT(), Jump.UPRIGHT(), Jump.LEFT(), Jump.LEFT()]
        moves += [Jump.UPRIGHT(), Jump.RIGHT(), Jump.UPLEFT()]
    elif rows == 4:  # 10-ball: the 1 on the foot spot, the 10 in the middle of the third row
        others = [str(i) for i in range(2, 10)]
        rng.shuffle(others)
        ids = ["1", others[0], others[1], others[2], "10", *others[3:]]
        moves = [Jump.UPLEFT(), Jump.RIGHT(), Jump.UPRIGHT(), Jump.LEFT(), Jump.LEFT()]
        moves += [Jump.UPLEFT()] + [Jump.RIGHT()] * 3
    else:  # 14.1: fifteen balls in any order
        ids = [str(i) for i in range(1, 16)]
        rng.shuffle(ids)
        moves = [Jump.UPLEFT(), Jump.RIGHT(), Jump.UPRIGHT(), Jump.LEFT(), Jump.LEFT()]
        moves += [Jump.UPLEFT()] + [Jump.RIGHT()] * 3
        moves += [Jump.UPRIGHT()] + [Jump.LEFT()] * 4
    seq = [(m, {i}) for m, i in zip(moves, ids[1:], strict=True)]
    bp = ball_cluster_blueprint(seed=BallPos([], (0.5, 0.75), {ids[0]}), jump_sequence=seq)
    bp += [BallPos([], (0.5, 0.2), {"cue"})]
    return generate_layout(bp, table, seed=seed, spacing_factor=1e-3)


def _ball(pt, bid: str, x: float, y: float):
    return pt.Ball.create(bid, xy=(x, y))


def _free_spot(rng, placed, w, length, margin=0.09, gap=0.07):
    for _ in range(200):
        x, y = rng.uniform(margin, w - margin), rng.uniform(margin, length - margin)
        if all(math.hypot(x - px, y - py) > gap for px, py in placed):
            return x, y
    return None


def _pocket_xy(table, name: str):
    inv = {v: k for k, v in POCKET_NAMES.items()}
    c = table.pockets[inv[name]].center
    return float(c[0]), float(c[1])


def _setup(pt, spec: dict):
    """(system, note) for one planned shot, or (None, reason) when its geometry fails."""
    table = _table(pt, spec["table"])
    length, w = table.l, table.w
    rng = random.Random(spec["rack_seed"])
    kind = spec["kind"]
    cue = pt.Cue(cue_ball_id="cue")
    R = 0.028575
    if kind in BREAK_RACKS:
        balls = _rack(pt, table, BREAK_RACKS[kind], spec["rack_seed"])
        balls["cue"] = _ball(pt, "cue", spec["cue_x"] * w, spec["cue_y"] * length)
        system = pt.System(table=table, balls=balls, cue=cue)
        if kind != "break15":  # a power break at the head ball
            # the 1 heads a rotation rack; 8-ball's is any ball: the one nearest the cue ball
            objs = [b for b in balls if b != "cue"]
            apex = "1" if kind != "break8" else min(objs, key=lambda b: balls[b].state.rvw[0][1])
            phi = pt.aim.at_ball(system, apex) + spec["aim"]
            system.cue.set_state(V0=spec["speed"], phi=phi, theta=0, a=0, b=spec["b"])
        else:
            # the back-row corner ball on the chosen side, clipped on its outer half
            objs = [b for b in balls if b != "cue"]
            top = max(balls[b].state.rvw[0][1] for b in objs)
            row = [b for b in objs if balls[b].state.rvw[0][1] > top - R]
            corner = (max if spec["side"] > 0 else min)(row, key=lambda b: balls[b].state.rvw[0][0])
            cut = spec["cut"] * (-1 if spec["side"] > 0 else 1)
            phi = pt.aim.at_ball(system, corner, cut=cut)
            system.cue.set_state(V0=spec["speed"], phi=phi, theta=0, a=0, b=spec["b"])
        return system, None
    if kind == "scratch":
        # ghost-ball point G; the cue ball leaves it along the tangent line toward the
        # pocket, the object ball along the normal (a stun shot's 90 degrees; draw keeps it
        # near that at short range)
        px, py = _pocket_xy(table, spec["pocket"])
        for _ in range(100):
            gx, gy = rng.uniform(0.15, w - 0.15), rng.uniform(0.15, length - 0.15)
            dx, dy = px - gx, py - gy
            dd = math.hypot(dx, dy)
            if dd < 0.3 or dd > 1.2:
                continue
            tx, ty = dx / dd, dy / dd
            s = rng.choice((-1, 1))
            nx, ny = -ty * s, tx * s
            ox, oy = gx + 2 * R * nx, gy + 2 * R * ny
            a = math.radians(spec["cut"])
            ux, uy = math.cos(a) * nx + math.sin(a) * tx, math.cos(a) * ny + math.sin(a) * ty
            cx, cy = gx - spec["dist"] * ux, gy - spec["dist"] * uy
            inside = all(0.06 < v < lim - 0.06 for v, lim in ((ox, w), (cx, w)))
            inside = inside and all(0.06 < v < length - 0.06 for v in (oy, cy))
            if inside:
                break
        else:
            return None, "no geometry"
        balls = {"cue": _ball(pt, "cue", cx, cy), "1": _ball(pt, "1", ox, oy)}
        placed = [(cx, cy), (ox, oy), (gx, gy)]
        for i in range(2, 2 + rng.randint(0, 4)):
            spot = _free_spot(rng, placed, w, length)
            if spot:
                placed.append(spot)
                balls[str(i)] = _ball(pt, str(i), *spot)
        system = pt.System(table=table, balls=balls, cue=cue)
        phi = pt.aim.at_pos(system, (gx, gy, R))
        system.cue.set_state(V0=spec["speed"], phi=phi, theta=0, a=0, b=spec["b"])
        return system, None
    # pot and safety: a few balls anywhere, the cue ball at a target ball
    placed: list = []
    balls = {}
    for i in range(spec["n_balls"] + 1):
        spot = _free_spot(rng, placed, w, length)
        if spot is None:
            return None, "no room"
        placed.append(spot)
        bid = "cue" if i == 0 else str(i)
        balls[bid] = _ball(pt, bid, *spot)
    if kind == "safety":
        # a target within 0.15-0.5 m of the cue ball, moved there if none is
        cx, cy = placed[0]
        ang = rng.uniform(0, 2 * math.pi)
        d = rng.uniform(0.15, 0.5)
        tx, ty = cx + d * math.cos(ang), cy + d * math.sin(ang)
        if not (0.15 < tx < w - 0.15 and 0.15 < ty < length - 0.15):
            tx, ty = cx - d * math.cos(ang), cy - d * math.sin(ang)
        if not (0.15 < tx < w - 0.15 and 0.15 < ty < length - 0.15):
            return None, "no room"
        balls["1"] = _ball(pt, "1", tx, ty)
        system = pt.System(table=table, balls=balls, cue=cue)
        system.cue.set_state(
            V0=spec["speed"],
            phi=pt.aim.at_ball(system, "1", cut=rng.uniform(-30, 30)),
            theta=0,
            a=0,
            b=0,
        )
        return system, None
    target = str(rng.randint(1, spec["n_balls"]))
    pocket = rng.choice(list(POCKET_NAMES.values()))
    px, py = _pocket_xy(table, pocket)
    ox, oy = balls[target].state.rvw[0][:2]
    dx, dy = px - ox, py - oy
    dd = math.hypot(dx, dy) or 1.0
    gx, gy = ox - 2 * R * dx / dd, oy - 2 * R * dy / dd
    system = pt.System(table=table, balls=balls, cue=cue)
    phi = pt.aim.at_pos(system, (gx, gy, R)) + spec["error"]
    system.cue.set_state(V0=spec["speed"], phi=phi, theta=0, a=0, b=spec["b"])
    return system, None


def simulate(spec: dict) -> dict:
    """One planned shot -> its trace: {"spec", "ok", "duration", "events": [...]} with
    times in seconds from the strike. Event items:
      {"t", "type": "strike", "speed"}            the cue tip on the cue ball (V0, m/s)
      {"t", "type": "ball", "balls": [a, b], "dv"} a ball-ball contact (speed change, m/s)
      {"t", "type": "cushion", "ball", "rail", "dv", "x", "y"}
      {"t", "type": "pocket", "ball", "pocket"}
    Ball ids are numbers, 0 the cue ball."""
    pt = _pt()
    system, why = _setup(pt, spec)
    if system is None:
        return {"spec": spec, "ok": False, "why": why}
    try:
        pt.simulate(system, inplace=True, max_events=20000)
    except Exception as e:  # noqa: BLE001 - a physics failure drops the shot, with its reason
        return {"spec": spec, "ok": False, "why": f"simulate: {type(e).__name__}: {e}"}
    w, length = system.table.w, system.table.l
    out = []
    last = 0.0

    def num(bid):
        return 0 if bid == "cue" else int(bid)

    for e in system.events:
        typ = str(e.event_type)
        t = float(e.time)
        last = max(last, t)
        if typ == "stick_ball":
            out.append({"t": t, "type": "strike", "speed": float(system.cue.V0)})
        elif typ == "ball_ball":
            a, b = e.agents
            v0 = a.initial.state.rvw[1]
            v1 = a.final.state.rvw[1]
            dv = float(math.dist(v0[:2], v1[:2]))
            out.append({"t": t, "type": "ball", "balls": [num(a.id), num(b.id)], "dv": dv})
        elif typ in ("ball_linear_cushion", "ball_circular_cushion"):
            a = e.agents[0]
            r, v0 = a.initial.state.rvw[0], a.initial.state.rvw[1]
            v1 = a.final.state.rvw[1]
            x, y = float(r[0]), float(r[1])
            out.append(
                {
                    "t": t,
                    "type": "cushion",
                    "ball": num(a.id),
                    "rail": rail_at(x, y, w, length),
                    "dv": float(math.dist(v0[:2], v1[:2])),
                    "x": round(x, 4),
                    "y": round(y, 4),
                }
            )
        elif typ == "ball_pocket":
            a, p = e.agents
            out.append({"t": t, "type": "pocket", "ball": num(a.id), "pocket": POCKET_NAMES[p.id]})
    return {"spec": spec, "ok": True, "duration": last, "events": out}
