"""The tables ``tools/bench_engines.py`` prints: each model's verdicts against Jolt's and
Rapier's per lane and per lane kind, the agreement rows of issue 20's targets, each preset
against its own engine on every lane (issue 26), where each walker ended on the lips, and
the steps per second of all in one run. ``results`` are ``bench_engines.run``'s:
``{kind: {"lanes", "ours": {model: [Outcome]}, "jolt"/"rapier": [Outcome]}}`` per rate."""

from __future__ import annotations

import numpy as np
from engine_lanes import KINDS, LIMIT_KINDS

ENGINES = ("jolt", "rapier")
MODELS = ("exact", "jolt", "rapier")
END_AGREE = 0.1  # metres: end positions "agree" within this (issue 20's target)


def agreement(results, model, engine, kinds) -> tuple:
    """(lanes where ``model``'s verdict equals ``engine``'s, lanes, of those the ones whose
    end positions are within END_AGREE, and the largest end distance where verdicts agree)."""
    same = total = close = 0
    worst = 0.0
    for kind in kinds:
        r = results[kind]
        if engine not in r:
            continue
        for o, e in zip(r["ours"][model], r[engine]):
            total += 1
            if o.verdict == e.verdict:
                same += 1
                d = float(np.linalg.norm(o.end - e.end))
                worst = max(worst, d)
                close += d <= END_AGREE
    return same, total, close, worst


def both_against_us(results, model, kinds) -> list:
    """Lanes where Jolt and Rapier agree with each other and ``model`` differs from both."""
    bad = []
    for kind in kinds:
        r = results[kind]
        if not all(e in r for e in ENGINES):
            continue
        for lane, o, j, p in zip(r["lanes"], r["ours"][model], r["jolt"], r["rapier"]):
            if j.verdict == p.verdict != o.verdict:
                bad.append(lane.name)
    return bad


def print_lanes(results, kinds, out=print):
    for kind in kinds:
        r = results[kind]
        out(f"\n### {kind}\n")
        cols = [f"ours ({m})" for m in MODELS] + [e for e in ENGINES if e in r]
        out("| lane | " + " | ".join(cols) + " | end distance (jolt, rapier model) |")
        out("|---" * (len(cols) + 2) + "|")
        for i, lane in enumerate(r["lanes"]):
            cells = [_cell(r["ours"][m][i]) for m in MODELS]
            cells += [_cell(r[e][i], engine=True) for e in ENGINES if e in r]
            dist = [f"{np.linalg.norm(r['ours'][e][i].end - r[e][i].end):.2f}"
                    for e in ENGINES if e in r]
            out(f"| {lane.name} | " + " | ".join(cells) + f" | {', '.join(dist)} |")


def _cell(o, engine=False) -> str:
    if engine or o.verdict == "reached" or not o.detail:
        return o.verdict
    return f"{o.verdict} ({o.detail})"


PRESET_TARGET = 0.97  # issue 26: each preset equals its engine's verdict on this share of lanes


def preset_differences(results, model, kinds) -> tuple:
    """Lanes of ``kinds`` where the ``model`` preset and its engine (``model``) differ:
    (lanes compared, [(name, ours, engine's) verdicts differ], [(name, metres) verdicts
    equal, ends farther apart than END_AGREE])."""
    total, verdict, far = 0, [], []
    for kind in kinds:
        r = results[kind]
        if model not in r:
            continue
        for lane, o, e in zip(r["lanes"], r["ours"][model], r[model]):
            total += 1
            if o.verdict != e.verdict:
                verdict.append((lane.name, o.verdict, e.verdict))
            elif float(np.linalg.norm(o.end - e.end)) > END_AGREE:
                far.append((lane.name, float(np.linalg.norm(o.end - e.end))))
    return total, verdict, far


def print_presets(results, rates, out=print):
    """Issue 26's targets on every lane walked: each preset against its own engine, the
    lanes where the verdicts differ and those where they agree but the ends do not."""
    out(f"\n## Each preset against its engine, every lane (target: verdicts equal on "
        f"{PRESET_TARGET:.0%}, ends within {END_AGREE} m where equal)\n")
    out("| rate | preset | lanes | verdicts equal | ends within | verdicts differ | "
        "ends apart (m) |")
    out("|---|---|---|---|---|---|---|")
    for hz in rates:
        kinds = [k for k in results[hz] if k in KINDS]
        for model in ENGINES:
            n, verdict, far = preset_differences(results[hz], model, kinds)
            if not n:
                continue
            same = n - len(verdict)
            out(f"| {hz} Hz | {model} | {n} | {same} ({same / n:.1%}"
                f"{'' if same >= PRESET_TARGET * n else ', below target'}) | "
                f"{same - len(far)} | "
                + "; ".join(f"{name}: {o} / {e}" for name, o, e in verdict) + " | "
                + "; ".join(f"{name} {d:.2f}" for name, d in far) + " |")


def print_summary(results, rates, out=print):
    limit = [k for k in LIMIT_KINDS if k in results[rates[0]]]
    out("\n## Agreement on the limit lanes (verdicts equal; of those, ends within "
        f"{END_AGREE} m; largest end distance)\n")
    out("| rate | model | vs Jolt | vs Rapier | differs from both engines where they agree |")
    out("|---|---|---|---|---|")
    for hz in rates:
        for model in MODELS:
            cells = []
            for eng in ENGINES:
                s, n, c, w = agreement(results[hz], model, eng, limit)
                cells.append(f"{s}/{n} ({c} within, {w:.2f} m)" if n else "n/a")
            bad = both_against_us(results[hz], model, limit)
            out(f"| {hz} Hz | {model} | {cells[0]} | {cells[1]} | {len(bad)} "
                f"{', '.join(bad[:6])}{' ...' if len(bad) > 6 else ''} |")
    print_kinds(results, rates, out)


def print_kinds(results, rates, out=print):
    """Verdicts equal per lane kind: each model against Jolt / Rapier."""
    kinds = [k for k in results[rates[0]] if k in KINDS]
    out("\n## Agreement per lane kind (model: equal to Jolt / equal to Rapier, of lanes)\n")
    out("| rate | kind | " + " | ".join(MODELS) + " |")
    out("|---" * (len(MODELS) + 2) + "|")
    for hz in rates:
        for kind in kinds:
            cells = []
            for model in MODELS:
                got = [agreement(results[hz], model, e, [kind])[:2] for e in ENGINES]
                n = max(t for _, t in got)
                cells.append(" / ".join(f"{s}" if t else "n/a" for s, t in got) + f" of {n}"
                             if n else "n/a")
            out(f"| {hz} Hz | {kind} | " + " | ".join(cells) + " |")


def lip_place(o) -> str:
    """Where a ``lips`` walk ended: on the slope it started on, on the lip, fallen off the
    lip to the floor 20 m below (engine_lanes.lips), or off the lip and still on its way
    down (more than 1 m below it) when the walk ended."""
    z = float(o.end[2])
    if z < -10.0:
        return "below"
    return "slope" if z > 0.5 else "lip" if z > -1.0 else "falling"


def print_lips(results, rates, out=print):
    """Issue 20's lips: where each walker ended (slope / lip / below) and at what height."""
    if "lips" not in results[rates[0]]:
        return
    out("\n## Lips: where each walk ended (height of the foot, m; the lip is at 0, the floor "
        "below at -20)\n")
    cols = [f"ours ({m})" for m in MODELS] + list(ENGINES)
    out("| rate | lane | " + " | ".join(cols) + " |")
    out("|---" * (len(cols) + 2) + "|")
    for hz in rates:
        r = results[hz]["lips"]
        for i, lane in enumerate(r["lanes"]):
            cells = [r["ours"][m][i] for m in MODELS] + [r[e][i] for e in ENGINES if e in r]
            out(f"| {hz} Hz | {lane.name} | "
                + " | ".join(f"{lip_place(o)} {o.end[2]:.2f}" for o in cells) + " |")
    out("\n| rate | " + " | ".join(f"{m} model = {e}" for m, e in zip(MODELS[1:], ENGINES))
        + " | exact: on the lip |")
    out("|---|---|---|---|")
    for hz in rates:
        r = results[hz]["lips"]
        n = len(r["lanes"])
        same = [sum(lip_place(a) == lip_place(b) for a, b in zip(r["ours"][m], r[e]))
                if e in r else None for m, e in zip(MODELS[1:], ENGINES)]
        exact = sum(lip_place(o) == "lip" for o in r["ours"]["exact"])
        out(f"| {hz} Hz | " + " | ".join("n/a" if x is None else f"{x}/{n}" for x in same)
            + f" | {exact}/{n} |")


def print_speed(speed, out=print):
    out("\n## Speed (same run, the first rate, every lane but issue 26's walked once)\n")
    out("| walker | frames | seconds | steps/s | ratio to Jolt |")
    out("|---|---|---|---|---|")
    jolt = speed["jolt"][0] / speed["jolt"][1] if speed["jolt"][1] else None
    for k, label in (("batched", "ours, walkthrough_many (exact), one batch per lane kind"),
                     ("one_batch", "ours, walkthrough_many (exact), every lane in one batch "
                                   "(one level)"),
                     ("single", "ours, one walkthrough per lane (exact)"),
                     ("jolt", "Jolt CharacterVirtual (wasm)"),
                     ("rapier", "Rapier KinematicCharacterController "
                                f"({speed.get('rapier_runner', 'wasm')})")):
        frames, sec = speed.get(k, (0, 0.0))
        if not sec:
            continue
        rate = frames / sec
        ratio = f"{rate / jolt:.2f}" if jolt else "n/a"
        out(f"| {label} | {frames} | {sec:.2f} | {rate:,.0f} | {ratio} |")
    if "one_batch_same" in speed:
        same, n = speed["one_batch_same"]
        out(f"\nEvery lane in one batch: {same}/{n} verdicts equal to the batches per kind.")


# ---------------------------------------------------------------- the engines' own spread
def end_spread(copies) -> float:
    """The largest distance between two copies' ends (metres; ``copies``: [Outcome], ends in
    the lane's frame)."""
    ends = np.array([c.end for c in copies])
    d = ends[:, None, :] - ends[None, :, :]
    return float(np.sqrt((d * d).sum(-1)).max())


def majority(copies) -> str:
    """The verdict of more than half the copies, else "split"."""
    verdicts = [c.verdict for c in copies]
    best = max(set(verdicts), key=verdicts.count)
    return best if 2 * verdicts.count(best) > len(verdicts) else "split"


def spread_rows(results, copies, model, kinds) -> list:
    """Per lane of ``kinds`` where the ``model`` preset's verdict equals its engine's (the
    usual single copy): (name, the two ends' distance, the engine's verdicts over its copies,
    its self-spread, the preset's distance to the nearest copy's end), metres."""
    rows = []
    for kind in kinds:
        r, c = results[kind], copies.get(kind, {})
        if model not in r or model not in c:
            continue
        for lane, o, e, cs in zip(r["lanes"], r["ours"][model], r[model], c[model]):
            if o.verdict != e.verdict:
                continue
            near = min(float(np.linalg.norm(o.end - x.end)) for x in cs)
            rows.append((lane.name, float(np.linalg.norm(o.end - e.end)), verdict_counts(cs),
                         end_spread(cs), near))
    return rows


def verdict_counts(copies) -> str:
    """"blocked 6, reached 2": each verdict among ``copies`` and how many copies gave it."""
    verdicts = [c.verdict for c in copies]
    return ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))


def majority_agreement(results, copies, model, kinds) -> tuple:
    """(lanes where the ``model`` preset's verdict is its engine's majority over the copies,
    lanes where the copies split evenly, lanes, [(name, preset's verdict, the engine's
    usual single copy's, its copies' verdict counts)] where the preset's is not the
    majority)."""
    same = split = total = 0
    other = []
    for kind in kinds:
        r, c = results[kind], copies.get(kind, {})
        if model not in c:
            continue
        for lane, o, e, cs in zip(r["lanes"], r["ours"][model], r[model], c[model]):
            m = majority(cs)
            total += 1
            same += m == o.verdict
            split += m == "split"
            if m != o.verdict:
                other.append((lane.name, o.verdict, e.verdict, verdict_counts(cs)))
    return same, split, total, other


def print_spread(results, copies, rates, n, lanes=True, out=print):
    """``--copies``: each preset against its engine walked ``n`` times (``copies``,
    ``bench_engines.run_copies``): per lane where the verdicts agree (usual single copy),
    and per rate the lanes whose ends are more than END_AGREE apart, split by the engine's
    own spread."""
    if lanes:
        print_spread_lanes(results, copies, rates, n, out)
    out(f"\n## Ends against the engine's own spread ({n} copies per lane; single copy: the "
        "usual placement)\n")
    out(f"| rate | preset | verdicts equal | ends > {END_AGREE} m apart | of those, engine "
        f"self-spread > {END_AGREE} m | of those, preset within {END_AGREE} m of a copy | "
        f"equal lanes with self-spread > {END_AGREE} m | preset = engine's majority (split) |")
    out("|---|---|---|---|---|---|---|---|")
    for hz in rates:
        kinds = [k for k in copies[hz] if k in KINDS]
        for model in ENGINES:
            rows = spread_rows(results[hz], copies[hz], model, kinds)
            same, split, total, _other = majority_agreement(results[hz], copies[hz], model,
                                                            kinds)
            if not total:
                continue
            far = [r for r in rows if r[1] > END_AGREE]
            out(f"| {hz} Hz | {model} | {len(rows)} | {len(far)} | "
                f"{sum(r[3] > END_AGREE for r in far)} | "
                f"{sum(r[4] <= END_AGREE for r in far)} | "
                f"{sum(r[3] > END_AGREE for r in rows)} | {same}/{total} ({split}) |")
    print_majority(results, copies, rates, out)


def print_spread_lanes(results, copies, rates, n, out=print):
    """Per rate and preset, each lane where the preset's verdict equals its engine's."""
    for hz in rates:
        kinds = [k for k in copies[hz] if k in KINDS]
        for model in ENGINES:
            rows = spread_rows(results[hz], copies[hz], model, kinds)
            if not rows:
                continue
            out(f"\n### {hz} Hz, {model} preset against {model} x {n} (verdicts equal)\n")
            out("| lane | ends apart | engine's copies | self-spread | preset to nearest "
                f"copy | within {END_AGREE} m |")
            out("|---|---|---|---|---|---|")
            for name, d, counts, spread, near in rows:
                out(f"| {name} | {d:.2f} | {counts} | {spread:.2f} | {near:.2f} | "
                    f"{'yes' if near <= END_AGREE else 'no'} |")


def print_majority(results, copies, rates, out=print):
    """The lanes where a preset's verdict is not its engine's majority over the copies."""
    out("\n## Where a preset's verdict is not its engine's majority over the copies\n")
    out("| rate | preset | lane: preset / engine's usual single copy / its copies |")
    out("|---|---|---|")
    for hz in rates:
        kinds = [k for k in copies[hz] if k in KINDS]
        for model in ENGINES:
            *_n, other = majority_agreement(results[hz], copies[hz], model, kinds)
            if other:
                out(f"| {hz} Hz | {model} | "
                    + "; ".join(f"{name}: {o} / {e} / {c}" for name, o, e, c in other) + " |")
