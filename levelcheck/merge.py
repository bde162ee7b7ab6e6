"""``--merge``: the outputs of the N shards of one run combined into the outputs of a single
run (report.json, junit.xml and every picture).

Each shard's report.json records its run (``run``: the shard K/N, the number of levels on
the command line and a fingerprint of the command's levels and options). The merge refuses
(exit status 2) a set that is not exactly shards 1..N of one run: a missing or duplicated
shard, shards of different runs, or a folder that is not a shard's output.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..core.checks.report import REPORT_FORMAT
from .levels import UsageError, read_json

OWN_FILES = ("report.json", "junit.xml")


def fingerprint(all_keys, *options) -> str:
    """What makes two shards parts of one run: every level's key in command-line order and
    the options that change verdicts."""
    text = json.dumps([list(all_keys), *options], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _shard_of(folder):
    doc = read_json(os.path.join(folder, "report.json"), "--merge")
    if not isinstance(doc, dict) or doc.get("format") != REPORT_FORMAT:
        raise UsageError(f"--merge {folder}: report.json is not a levelcheck report")
    run = doc.get("run") or {}
    shard = run.get("shard")
    if not shard:
        raise UsageError(f"--merge {folder}: not the output of a --shard K/N run")
    return doc, run, tuple(shard)


def merge(folders) -> tuple[list, dict, dict]:
    """(level reports, {picture name: path}, run) of shard output ``folders``."""
    shards, seen, levels, pictures = {}, {}, [], {}
    for folder in folders:
        doc, run, (k, n) = _shard_of(folder)
        if k in shards:
            raise UsageError(f"--merge {folder}: shard {k}/{n} given twice (also {shards[k]})")
        first = next(iter(seen.values()), None)
        if first is not None and (run.get("fingerprint"), n) != first:
            raise UsageError(f"--merge {folder}: shard {k}/{n} comes from another run than "
                             f"{next(iter(shards.values()))} (other levels or options)")
        shards[k] = folder
        seen[k] = (run.get("fingerprint"), n)
        levels.extend(doc["levels"])
        for name in sorted(os.listdir(folder)):
            if name not in OWN_FILES and not name.startswith("."):
                pictures[name] = os.path.join(folder, name)
    n = next(iter(seen.values()))[1]
    missing = sorted(set(range(1, n + 1)) - set(shards))
    if missing:
        raise UsageError(f"--merge: shard(s) {', '.join(f'{k}/{n}' for k in missing)} "
                         "missing: an incomplete set would pass what it never checked")
    return levels, pictures, {"merged": n, "shard": None, "root": run.get("root"),
                              "levels": run.get("levels"), "fingerprint": run.get("fingerprint")}
