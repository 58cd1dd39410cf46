"""`make bench-sensing`: simulate (or load) the corpus, stream it through `railbird assemble`
with and without the strike channel, 10 % of the strikes missed (and five more runs:
calibrated cue returns, those with a longer quiet period, knocks on the strike sensor, no
strike missed, every strike missed), score each against the ground truth and
print the figures. Exit status 0 whatever the figures: they are measurements, printed beside
the issue's targets."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from . import physics, score, sensors, stream

REPO = Path(__file__).resolve().parents[2]
# The stress run's knocks on the strike sensor, per table and hour (stream.with_knocks)
KNOCKS_PER_HOUR = 20
# A quiet period that outlasts a ball rolling on without touching a rail (one run with it)
TUNED_QUIET_MS = 6000
# The share of strokes whose strike the strike sensor misses (stream.with_missed_strikes):
# every run with the strike channel has them; one more run has none, as before issue 26
MISSED_STRIKES = 0.10


def _simulate_all(plan: list[dict], jobs: int) -> list[dict]:
    if jobs <= 1:
        return [physics.simulate(s) for s in plan]
    import multiprocessing as mp

    # the longest shots (15-ball breaks) first, so the two workers finish together
    order = sorted(plan, key=lambda s: {"break15": 0, "break10": 1}.get(s["kind"], 2))
    done = []
    with mp.get_context("spawn").Pool(jobs) as pool:
        for i, t in enumerate(pool.imap_unordered(physics.simulate, order, chunksize=2), 1):
            done.append(t)
            if i % 50 == 0 or i == len(order):
                print(f"simulated {i}/{len(order)} shots", flush=True)
    by_id = {t["spec"]["id"]: t for t in done}
    return [by_id[s["id"]] for s in plan]


def load_traces(seed: int, cache: Path, jobs: int) -> tuple[list[dict], float | None]:
    """The corpus's physics traces, from the cache when it has them -> (traces, seconds
    spent simulating or None when cached)."""
    path = cache / f"physics-seed{seed}-v{physics.PHYSICS_VERSION}.json"
    if path.exists():
        return json.loads(path.read_text()), None
    t0 = time.monotonic()
    traces = _simulate_all(physics._plan(seed), jobs)
    took = time.monotonic() - t0
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(traces))
    os.replace(tmp, path)
    return traces, took


def run_assemble(
    lines: list[str], workdir: Path, name: str, calibrated: dict | None = None, extra: str = ""
) -> tuple[list[dict], float]:
    """`railbird assemble --config <corpus tables> <file>`, the command itself -> (shots,
    seconds). `extra`: more TOML for the config (a `[shots]` section)."""
    inp = workdir / f"{name}.jsonl"
    inp.write_text("\n".join(lines) + "\n")
    cfg = workdir / f"{name}.toml"
    cfg.write_text(stream.config_toml(calibrated) + extra)
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "railbird", "assemble", "--config", str(cfg), str(inp)],
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.monotonic() - t0
    if out.returncode != 0 or out.stderr.strip():
        raise SystemExit(f"railbird assemble ({name}) failed: {out.stderr.strip()}")
    shots = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
    (workdir / f"{name}.shots.jsonl").write_text(out.stdout)
    return shots, took


def _object_ball_after_cue(t: dict) -> bool:
    balls = [b for b, _ in t["pocketed"]]
    return 0 in balls and any(b != 0 for b in balls[balls.index(0) + 1 :])


def corpus_summary(truth: list[dict]) -> dict:
    kinds = Counter(t["kind"] for t in truth)
    sizes = Counter(t["size"] for t in truth)
    scratch_pockets = Counter(p for t in truth for b, p in t["pocketed"] if b == 0)
    soft = sum(1 for t in truth if not t["rail"] and not t["pocketed"])
    after = sum(1 for t in truth if _object_ball_after_cue(t))
    return {
        "shots": len(truth),
        "kinds": dict(sorted(kinds.items())),
        "tables": dict(sorted(sizes.items())),
        "scratches_by_pocket": {p: scratch_pockets.get(p, 0) for p in sensors.POCKETS},
        "no_rail_no_pocket": soft,
        "object_ball_after_the_cue_ball": after,
        "balls_pocketed": sum(len(t["pocketed"]) for t in truth),
    }


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.sensing_corpus", description=__doc__)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--cache", default=str(REPO / "build" / "sensing-corpus"))
    ap.add_argument("--jobs", type=int, default=2, help="simulation processes (default 2)")
    ap.add_argument(
        "--missed-strikes",
        type=float,
        default=MISSED_STRIKES,
        help=f"share of strokes whose strike is not sensed (default {MISSED_STRIKES})",
    )
    args = ap.parse_args(argv)
    t_all = time.monotonic()
    cache = Path(args.cache)
    traces, sim_s = load_traces(args.seed, cache, args.jobs)
    failed = [t for t in traces if not t.get("ok")]
    sensed_all, truth = stream.timelines(traces, args.seed)
    events = stream.with_missed_strikes(sensed_all, truth, args.seed, args.missed_strikes)
    all_missed = stream.with_missed_strikes(sensed_all, truth, args.seed, 1.0)
    n_missed = sum(len(v) for v in sensed_all.values()) - sum(len(v) for v in events.values())
    work = cache / f"run-seed{args.seed}-v{physics.PHYSICS_VERSION}.{sensors.SENSOR_VERSION}"
    work.mkdir(parents=True, exist_ok=True)
    (work / "truth.json").write_text(json.dumps(truth))
    summary = corpus_summary(truth)
    results = {}
    cal = stream.calibration(args.seed)
    knocked = stream.with_knocks(events, args.seed, KNOCKS_PER_HOUR)
    n_knocks = sum(1 for evs in knocked.values() for e in evs if e["shot"] < 0)
    quiet = f"\n[shots]\nquiet_ms = {TUNED_QUIET_MS}\n"
    for name, evs, strike, calibrated, extra in (
        ("strike", events, True, None, ""),
        ("no-strike", events, False, None, ""),
        ("strike-calibrated", events, True, cal, ""),
        ("strike-calibrated-quiet", events, True, cal, quiet),
        ("strike-knocks", knocked, True, None, ""),
        ("strike-none-missed", sensed_all, True, None, ""),
        ("strike-all-missed", all_missed, True, None, ""),
        ("strike-colour", stream.with_reads(events, args.seed), True, cal, ""),
    ):
        lines = stream.assemble_input(evs, args.seed, strike=strike)
        shots, took = run_assemble(lines, work, name, calibrated, extra)
        t0 = time.monotonic()
        res = score.score(truth, evs, shots, strike=strike)
        res["assemble_s"] = round(took, 1)
        res["score_s"] = round(time.monotonic() - t0, 1)
        res["input_lines"] = len(lines)
        results[name] = res
    total = time.monotonic() - t_all
    (work / "breaks.json").write_text(json.dumps(results["strike"]["break_rows"], indent=1))
    report = {
        "seed": args.seed,
        "physics_version": physics.PHYSICS_VERSION,
        "sensor_version": sensors.SENSOR_VERSION,
        "missed_strikes": {"share": args.missed_strikes, "shots": n_missed},
        "corpus": summary,
        "simulation_failed": len(failed),
        "simulate_s": None if sim_s is None else round(sim_s, 1),
        "total_s": round(total, 1),
        "figures": {
            k: {x: y for x, y in v.items() if x not in ("rows", "break_rows")}
            for k, v in results.items()
        },
    }
    (work / "report.json").write_text(json.dumps(report, indent=1))

    print(
        f"Sensing accuracy: seed {args.seed}, physics v{physics.PHYSICS_VERSION}, "
        f"sensor model v{sensors.SENSOR_VERSION}"
    )
    print(
        f"corpus: {summary['shots']} shots {summary['kinds']} on {summary['tables']}; "
        f"{summary['balls_pocketed']} balls pocketed; scratches by pocket "
        f"{summary['scratches_by_pocket']}; {summary['object_ball_after_the_cue_ball']} scratches "
        f"with an object ball dropping after the cue ball; {summary['no_rail_no_pocket']} shots "
        f"reach no rail and pocket nothing; {len(failed)} planned shots failed to set up"
    )
    print(
        f"pace: the next stroke 2-12 s after the balls stop (3-8 s more after a scratch); "
        f"strike sensor misses {n_missed} of {summary['shots']} strokes "
        f"({pct(args.missed_strikes)} seeded) in every run with the strike channel"
    )
    hdr = f"{'':44}{'with strike':>14}{'without':>14}"
    print(hdr)
    s, o = results["strike"], results["no-strike"]

    def line(label, key, fmt=pct, target=""):
        print(f"{label:44}{fmt(s[key]):>14}{fmt(o[key]):>14}  {target}")

    line("pocketed set exact", "pocketed_exact", target="(target >= 99 %)")
    line("scratch right", "scratch", target="(target 100 %)")
    line("segmentation, counting the strike", "segmentation")
    line("  of the shots with a sensed event", "segmentation_seen", target="(target >= 99.9 %)")
    sm = [f"{r['segmentation_split']} / {r['segmentation_merged']}" for r in (s, o)]
    print(f"{'  wrong: split / merged':44}{sm[0]:>14}{sm[1]:>14}")
    line("shot starts at its strike (5 ms)", "start_at_strike")
    line("shots with no sensed event", "invisible", fmt=str)
    print(
        f"{'shot start after the strike, median / max':44}"
        f"{s['start_lag_ms']['median']!s:>6} / {s['start_lag_ms']['max']!s:<9}"
        f"{o['start_lag_ms']['median']!s:>6} / {o['start_lag_ms']['max']!s:<6} ms"
    )
    line("scratches seen (of all scratches)", "scratches_seen", fmt=str)
    c = results["strike-calibrated"]
    print(
        f"{'with railbird calibrate (strike on):':44}pocketed set exact "
        f"{pct(c['pocketed_exact'])}, scratch {pct(c['scratch'])}"
    )
    q = results["strike-calibrated-quiet"]
    print(
        f"{'... and quiet_ms = ' + str(TUNED_QUIET_MS) + ':':44}pocketed set exact "
        f"{pct(q['pocketed_exact'])}, scratch {pct(q['scratch'])}, segmentation "
        f"{pct(q['segmentation'])}"
    )
    k = results["strike-knocks"]
    print(
        f"{'with knocks on the strike sensor:':44}{n_knocks} ({KNOCKS_PER_HOUR} per table-hour): "
        f"segmentation "
        f"{pct(k['segmentation'])}, pocketed set exact {pct(k['pocketed_exact'])}, "
        f"{k['phantom_shots']} phantom shots, breaks wrong and unflagged "
        f"{k['breaks_wrong_unflagged']}"
    )
    a = results["strike-none-missed"]
    print(
        f"{'no strike missed:':44}segmentation {pct(a['segmentation'])}, pocketed set exact "
        f"{pct(a['pocketed_exact'])}, breaks wrong and unflagged {a['breaks_wrong_unflagged']}, "
        f"flagged {pct(a['breaks_flagged_share'])}"
    )
    m = results["strike-all-missed"]
    print(
        f"{'every strike missed (clicks heard):':44}segmentation {pct(m['segmentation'])}, "
        f"of the shots with a sensed event {pct(m['segmentation_seen'])} "
        f"(split / merged {m['segmentation_split']} / {m['segmentation_merged']}), "
        f"breaks wrong and unflagged {m['breaks_wrong_unflagged']}"
    )
    b = results["strike-colour"]
    print(
        f"{'ball identity (colour station, calibrated):':44}ball number exact "
        f"{pct(b['ball_exact'])} of {b['balls_pocketed']} pocketed balls (target >= 99 %), "
        f"presumed {b['ball_presumed_n']}, wrong {b['ball_wrong_n']}; without it "
        f"{pct(c['ball_exact'])} (the cue ball only); segmentation {pct(b['segmentation'])}, "
        f"of the shots with a sensed event {pct(b['segmentation_seen'])} (split / merged "
        f"{b['segmentation_split']} / {b['segmentation_merged']})"
    )
    print(f"break rulings ({s['breaks']} breaks, {s['breaks_illegal']} illegal in truth):")
    line("  wrong and unflagged", "breaks_wrong_unflagged", fmt=str, target="(target 0)")
    line("  wrong but flagged", "breaks_wrong_flagged", fmt=str)
    line("  flagged for confirmation", "breaks_flagged_share", target="(aim <= 20 %)")
    for kind, name in (("break10", "10-ball"), ("break15", "14.1")):
        g, h = s["breaks_by_game"][kind], o["breaks_by_game"][kind]
        print(
            f"  {name:8} {g['breaks']} breaks, {g['illegal']} illegal: wrong/unflagged, "
            f"wrong/flagged, flagged: {g['wrong_unflagged']}, {g['wrong_flagged']}, "
            f"{g['flagged']} (without strike {h['wrong_unflagged']}, {h['wrong_flagged']}, "
            f"{h['flagged']})"
        )
    sim = "cached" if sim_s is None else f"{sim_s:.0f} s"
    print(
        f"time: simulation {sim}, assemble "
        f"{' + '.join(str(r['assemble_s']) for r in results.values())} s, "
        f"total {total:.0f} s; details in {work}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
