"""The break model's fit (core/breakmodel.py), written by `make train-breaks`
(tools/sensing_corpus/train_breaks.py): do not edit by hand.

Training run: physics v3, 24 breaks of each kind (10-ball, 9-ball, 8-ball, 14.1) per seed,
  each assembled with and without the strike channel.
Training seeds [101, 102, 103] (288 breaks, 576 shots); validation seeds [201, 202, 203]
  (288 breaks, 576 shots); 0 breaks no shot held (not used).
Thresholds: 1.0 logit beyond the training set's most confident mistake.
POWER (10-ball, 9-ball, 8-ball): sure 2.0000/2.0000/0.9982/0.9867, unsure
  -1.0000/-1.0000/0.3245/0.0829, cue sure 2.0000; training 147 of 432 shots decided, 0
  counts and 0 cue balls wrong; validation 121 of 432 decided, 0 counts and 0 cue balls
  wrong.
SAFE (14.1): sure 2.0000/0.9760/0.9754/0.9567, unsure -1.0000/0.4723/0.1838/0.1116, cue sure
  2.0000; training 15 of 144 shots decided, 0 counts and 0 cue balls wrong; validation 13 of
  144 decided, 0 counts and 0 cue balls wrong.
Validation rulings (every break on a fresh game of its kind, as the daemon rules):
 with the strike channel:
  10-ball   72 breaks,  16 illegal: wrong and unflagged 0, wrong but flagged 8, flagged 30
    (41.7 %)
  14.1      72 breaks,  24 illegal: wrong and unflagged 0, wrong but flagged 10, flagged 71
    (98.6 %)
  9-ball    72 breaks,  14 illegal: wrong and unflagged 0, wrong but flagged 2, flagged 20
    (27.8 %)
  8-ball    72 breaks,   0 illegal: wrong and unflagged 0, wrong but flagged 0, flagged 35
    (48.6 %)
  all      288 breaks: wrong and unflagged 0, flagged 54.2 %
 without it:
  10-ball   72 breaks,  16 illegal: wrong and unflagged 0, wrong but flagged 8, flagged 30
    (41.7 %)
  14.1      72 breaks,  24 illegal: wrong and unflagged 0, wrong but flagged 10, flagged 71
    (98.6 %)
  9-ball    72 breaks,  14 illegal: wrong and unflagged 0, wrong but flagged 2, flagged 20
    (27.8 %)
  8-ball    72 breaks,   0 illegal: wrong and unflagged 0, wrong but flagged 0, flagged 35
    (48.6 %)
  all      288 breaks: wrong and unflagged 0, flagged 54.2 %
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BreakFit:
    """Coefficients and thresholds of one break model (core/breakmodel.py)."""

    weights: tuple[float, ...]  # per feature (breakmodel.FEATURES), all >= 0
    cuts: tuple[float, ...]  # per count k (breakmodel.COUNTS), increasing
    cue_weights: tuple[float, ...]  # the cue ball's model, per feature, all >= 0
    cue_bias: float
    sure: tuple[float, ...]  # per k: P(>= k) from which at least k is ruled (> 1: never)
    unsure: tuple[float, ...]  # per k: P(>= k) up to which fewer than k is ruled (< 0: never)
    cue_sure: float  # P(cue ball to a rail) from which it is ruled (> 1: never)
    x_min: tuple[float, ...]  # per feature: the least the training breaks had
    x_max: tuple[float, ...]  # per feature: the most (outside the box: nothing decided)


# every other game's power break
POWER = BreakFit(
    weights=(
        0,
        0,
        0.442788014,
        0.774482025,
        0,
        0,
        0,
        0,
        0,
        0,
        1.22888632,
        2.55711644,
        0,
        0.505410726,
    ),
    cuts=(-6.72891533, 4.69271615, 5.9219044, 7.94437433),
    cue_weights=(
        0,
        0,
        0,
        0,
        0.82098268,
        0,
        0,
        0.279747875,
        0.0669869351,
        0.0479475422,
        0,
        0,
        0,
        0.51970409,
    ),
    cue_bias=-1.37394,
    sure=(2, 2, 0.998213185, 0.986653467),
    unsure=(-1, -1, 0.32447642, 0.0829137486),
    cue_sure=2,
    x_min=(3, 1, 1, 1.09861229, 1.79175947, 1.79175947, 5.79748646, 2, 1, 0, 0, 1.38629436, 0, 0),
    x_max=(
        6,
        6,
        6,
        2.94443898,
        3.29583687,
        3.55534806,
        34.8001293,
        6,
        6,
        2.63905733,
        2.48490665,
        3.09104245,
        2.19722458,
        3,
    ),
)


# 14.1's opening safe break
SAFE = BreakFit(
    weights=(
        0,
        0,
        0.386543247,
        0,
        0,
        0,
        0,
        0.0715404163,
        0,
        0,
        0,
        0.597290508,
        0.128808321,
        1.46287296,
    ),
    cuts=(-16.9568039, -0.161163079, 1.46160476, 2.04561434),
    cue_weights=(
        0.65279051,
        0,
        0,
        1.57593712,
        6.25270105,
        0,
        0.672053036,
        3.16067366,
        1.90635417,
        0,
        0,
        1.67921532,
        1.07735219,
        0.00379909847,
    ),
    cue_bias=-25.5204,
    sure=(2, 0.976011606, 0.975380846, 0.956698196),
    unsure=(-1, 0.472252085, 0.183846172, 0.11159881),
    cue_sure=2,
    x_min=(2, 0, 0, 0, 1.09861229, 1.09861229, 2.38241701, 1, 0, 0, 0, 1.09861229, 0, 0),
    x_max=(
        6,
        4,
        3,
        2.39789527,
        2.63905733,
        3.29583687,
        16.6979517,
        4,
        6,
        2.30258509,
        2.30258509,
        3.09104245,
        1.38629436,
        2,
    ),
)
