"""Benchmark: the command line under bad inputs, fuzzed files, interrupts, concurrent runs and
a damaged cache.

Everything runs through ``python -m kcca_desc.fit`` (the data loaders alone for the fuzz cases)
on small generated data, and each outcome is classified as it happens, never assumed:

* **bad inputs** (corrupt, truncated, zero-byte and non-image files, a missing image, bad
  settings, malformed TSV and JSON, an unwritable output directory or cache; ``compare`` and
  ``report`` with bad options, a results file that is not UTF-8 and a missing data root; a usage
  error; an unreachable or contradictory ``--scheduler``; a full or read-only disk under the
  cache or the output, through the fault layer of :mod:`kcca_bench.faults`; a benchmark's bad
  option): *graceful* — the
  run finished (``warned`` says whether it said so), *clear* — it stopped with a one-line
  ``error:`` and a documented non-zero exit code, no traceback, *failed* — anything else
  (a traceback, a crash, a hang);
* **fuzz**: seeded random and mutated TSV / JSON files through the loaders: *handled* (loaded),
  *clear* (one of the toolkit's errors, or a ``ValueError`` / ``OSError`` with a message),
  *failed* (any other exception);
* **interrupts**: one chain of runs sharing a cache, each stopped by SIGINT or SIGTERM a moment
  into the next stage (read from the ``-v`` log), the latency from signal to exit measured;
  the chain's last run resumes from what the others kept and is compared with an
  uninterrupted run in a fresh cache;
* **concurrency**: two and then four runs with different splits and parameters started at once
  on one cache, each compared with the same run alone in a fresh cache;
* **damaged cache**: one entry of each kind of finished runs (features, codebooks, image and
  text Grams, the KCCA solver's spectra and solutions; the landmark KCCA's Zarr chunks, their
  metadata and its seal; a trainable model's checkpoint and lineage record, in full runs)
  truncated, overwritten with random bytes or with sixteen bytes flipped, each in a copy of the
  cache, then the run that wrote it repeated: each case's
  outcome (recomputed: one warning naming the entry and the clean run's figures; a silent change;
  a failure), exit code, time and message; and a killed writer's orphan temporary file, which the
  next run must remove.

Writes ``benchmarks/results/reliability.json``.

Usage::

    python benchmarks/reliability.py            # about four minutes on two idle cores
    python benchmarks/reliability.py --quick    # fewer cases on tiny data (bad inputs with bow5; runs two at a time)
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from kcca_desc import load_dataset
from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import add_output_arguments, fill_defaults, machine_info, output_path, write_results
from kcca_bench.cli import FIT, figures, interrupt_cli, run_cli
from kcca_desc._core.errors import EXIT_CODES, KccaDescError
from kcca_desc.evaluate import Result, retrieval_metrics
from kcca_desc.cli.fit import build_parser
from kcca_desc.cli.interrupts import INTERRUPT_EXIT_CODES

#: The option that drops bad items with a warning instead of stopping (tried where the command has it).
SKIP_BAD_ITEMS = "--skip-bad-items"
#: Exit codes the command documents for a clear error (kcca_desc._core.errors; argparse's 2).
DOCUMENTED = set(EXIT_CODES.values()) | {2}
#: Options that keep the image features cheap: the figures here are about behaviour, not accuracy.
LIGHT = ["--levels", "1", "--pixel-step", "4", "--colour-words", "16", "--texture-words", "16",
         "--sift-words", "16", "--n-components", "4,8", "--regs", "0.1,1", "--n-select", "2"]
#: Added to :data:`LIGHT` for the bad inputs of a quick run: the default text kernel, ``tri_sem``,
#: preprocesses its external corpus (about 6 s) in each run that finishes on a cold cache.
QUICK_TEXT_KERNEL = ["--text-kernel", "bow5"]


#: How the other commands are run.
COMPARE, REPORT = ["-m", "kcca_desc.compare"], ["-m", "kcca_desc.report"]


class Case(NamedTuple):
    """One bad input: its command (``python`` + ``command`` + ``args``), environment and faulty disk."""

    category: str
    name: str
    args: list[str]
    env: dict = {}
    command: list[str] = FIT
    disk: tuple[str, Path] | None = None
    #: Whether the main command's light defaults (:data:`LIGHT`, kcca options) come first.
    light: bool = True


# --------------------------------------------------------------------------------- running
def verdict(outcome: dict) -> str:
    """graceful (finished), clear (one-line error, documented code, no traceback) or failed."""
    stderr = outcome["stderr"]
    if outcome["rc"] == 0:
        return "graceful"
    error_lines = [line for line in stderr.splitlines() if line.startswith("error:")]
    if outcome["rc"] in DOCUMENTED and "Traceback" not in stderr and error_lines:
        return "clear"
    return "failed"


# ------------------------------------------------------------------------------ test data
def write_tsv_dataset(folder: Path, n_images: int, seed: int = 0) -> Path:
    """The synthetic data set as PNG files and a TSV file; returns the TSV's path."""
    data = load_dataset("synthetic", n_images=n_images, seed=seed)
    split_of = {i: name for name, indices in data.splits.items() for i in indices}
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    lines = ["image_path\tcaption\tsplit"]
    for i in range(len(data)):
        image = np.asarray(data.images.load(i))
        cv2.imwrite(str(images / f"img{i:04d}.png"), cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
        lines += [f"images/img{i:04d}.png\t{caption}\t{split_of[i]}" for caption in data.captions[i]]
    tsv = folder / "data.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tsv


def tsv_to_json(tsv: Path, out: Path) -> Path:
    images: dict[str, dict] = {}
    for line in tsv.read_text().splitlines()[1:]:
        path, caption, split = line.split("\t")
        images.setdefault(path, {"filename": path, "split": split, "sentences": []})["sentences"].append(
            {"raw": caption})
    out.write_text(json.dumps({"dataset": "generated", "images": list(images.values())}))
    return out


def bad_input_cases(base: Path, quick: bool) -> list[tuple[str, str, list[str], dict]]:
    """(category, name, extra CLI arguments, environment changes) of each bad input tried."""
    tsv = base / "data.tsv"
    image = base / "images" / "img0000.png"
    cases = []

    def variant(name: str, change) -> Path:
        """A copy of the data set (images linked) with one change; returns its TSV."""
        folder = base.parent / name
        if not folder.exists():
            shutil.copytree(base, folder, copy_function=os.link)
        target = folder / "images" / image.name
        target.unlink()
        change(folder, target)
        return folder / "data.tsv"

    image_damage = {
        "corrupt image (random bytes)": lambda f, t: t.write_bytes(os.urandom(5000)),
        "truncated image": lambda f, t: t.write_bytes(image.read_bytes()[: image.stat().st_size // 3]),
        "zero-byte image": lambda f, t: t.write_bytes(b""),
        "non-image file": lambda f, t: t.write_text("this is not an image\n"),
        "missing image": lambda f, t: None,
    }
    for name, change in list(image_damage.items())[:1] if quick else image_damage.items():
        damaged = ["--data", "tsv", "--data-root", str(variant(name.split(" (")[0].replace(" ", "_"), change))]
        cases.append(("images", name, damaged, {}))
        if SKIP_BAD_ITEMS in build_parser()._option_string_actions:
            cases.append(("images", f"{name}, {SKIP_BAD_ITEMS}", damaged + [SKIP_BAD_ITEMS], {}))
    good = ["--data", "tsv", "--data-root", str(tsv)]
    settings = [["--regs", "0"], ["--regs", "nan"], ["--n-components", "0"], ["--n-select", "0"],
                ["--diag", "0.5"], ["--weight-power", "nan"], ["--levels", "-1"], ["--pixel-step", "0"],
                ["--sift-step", "0"], ["--colour-words", "0"], ["--power", "0"], ["--split", "nosuch"]]
    for setting in settings[:1] if quick else settings:
        cases.append(("settings", " ".join(setting), good + setting, {}))
    lines = tsv.read_text().splitlines()
    files = {
        "TSV missing a column": ("tsv", "\n".join(line.rsplit("\t", 1)[0] for line in lines)),
        "TSV of random bytes": ("tsv", os.urandom(3000)),
        "empty TSV": ("tsv", ""),
        "TSV in UTF-16": ("tsv", "\n".join(lines).encode("utf-16")),
        "truncated JSON": ("json", tsv_to_json(tsv, base / "x.json").read_text()[:500]),
        "JSON with wrong types": ("json", json.dumps({"images": [{"filename": 3, "split": [], "sentences": "a"}]})),
    }
    for name, (kind, content) in list(files.items())[:1] if quick else files.items():
        path = base / f"bad_{len(cases)}.{kind}"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        image_root = ["--image-root", str(base)] if kind == "json" else []
        cases.append(("data files", name, ["--data", kind, "--data-root", str(path), *image_root], {}))
    # A regular file where a directory is needed: unwritable for any user, root included.
    blocker = base / "not_a_directory"
    blocker.write_text("")
    cases.append(("output", "unwritable --out directory", good + ["--out", str(blocker / "results.json")], {}))
    cases.append(("cache", "unwritable cache directory", good, {"KCCA_DESC_CACHE": str(blocker / "cache")}))
    return [Case(*case) for case in cases] + command_cases(base, good, quick)


def _results_file(path: Path, system: str, seed: int, **extras) -> str:
    """A results file of ``system`` with random per-query ranks of 20 queries (as ``fit --out`` writes)."""
    rng = np.random.default_rng(seed)
    ranks = {task: rng.integers(1, 21, 20) for task in ("annotation", "search")}
    result = Result(system=system, dataset="generated", protocol="hodosh", split="test", ranks=ranks,
                    **{task: retrieval_metrics(r) for task, r in ranks.items()})
    result.extras.update(extras)
    result.save(path, include_ranks=True)
    return str(path)


def command_cases(base: Path, good: list[str], quick: bool) -> list[Case]:
    """The other commands and the benchmarks, usage errors, the scheduler, and full or read-only disks."""
    runs = [_results_file(base / "run_a.json", "A", 0), _results_file(base / "run_b.json", "B", 1)]
    latin = base / "latin1.json"
    latin.write_bytes('{"système": 1}'.encode("latin-1"))
    moved = {"name": "tsv", "root": str(base / "moved.tsv"), "seed": 0, "n_images": None, "image_root": None}
    recorded = [_results_file(base / f"moved_{s}.json", s, i, data_source=moved) for i, s in enumerate("AB")]
    disk = base.parent / "faulty_disk"
    disk.mkdir(exist_ok=True)
    fast = ["--n-resamples", "200", "--n-permutations", "200"]
    # One case of each kind in a quick run: the others cost as much and test nothing new there.
    quick_cases = [
        Case("commands", "compare --confidence 2", [*runs, "--confidence", "2"], command=COMPARE),
        Case("disk", "compare --out on a read-only file system", [*runs, "--out", str(disk / "table")],
             command=COMPARE, disk=("EROFS", disk)),
    ]
    if quick:
        return quick_cases
    return quick_cases + [
        Case("commands", "report missing --data-root", [*runs, "--data-root", str(base / "nowhere"), "--out",
                                                         str(base / "report_nowhere")], command=REPORT),
        Case("commands", "usage error (--levels x)", ["--levels", "x"]),
        Case("commands", "compare --n-resamples 0", [*runs, "--n-resamples", "0"], command=COMPARE),
        Case("commands", "report --n-resamples 0", [*runs, "--n-resamples", "0", "--out", str(base / "report0")],
             command=REPORT),
        Case("commands", "compare, a results file not UTF-8", [runs[0], str(latin)], command=COMPARE),
        Case("commands", "report, a results file not UTF-8", [runs[0], str(latin), "--out", str(base / "report_latin")],
             command=REPORT),
        Case("commands", "report, recorded data set gone", [*recorded, *fast, "--out", str(base / "report_moved")],
             command=REPORT),
        Case("disk", "report --out on a read-only file system", [*runs, "--out", str(disk / "report")],
             command=REPORT, disk=("EROFS", disk)),
        Case("commands", "benchmark --repeats 0", ["--repeats", "0"],
             command=[str(Path(__file__).parent / "evaluation.py")]),
        Case("scheduler", "unreachable --scheduler", [*good, "--method", "kcca_scalable", "--scheduler",
                                                      "tcp://127.0.0.1:9"]),
        Case("scheduler", "--scheduler with --engine local", [*good, "--method", "kcca_scalable", "--engine", "local",
                                                              "--scheduler", "tcp://127.0.0.1:9"]),
        Case("disk", "cache on a full disk", good, {"KCCA_DESC_CACHE": str(disk / "cache")}, disk=("ENOSPC", disk)),
        Case("disk", "cache on a read-only file system", good, {"KCCA_DESC_CACHE": str(disk / "cache")},
             disk=("EROFS", disk)),
        Case("disk", "--out on a full disk", good + ["--out", str(disk / "results.json")], disk=("ENOSPC", disk)),
        Case("disk", "--out on a read-only file system", good + ["--out", str(disk / "results.json")],
             disk=("EROFS", disk)),
        # A hub id that is not in the (empty) Hugging Face cache and cannot be fetched now.
        # (without LIGHT: its kcca options are refused with --method cca.)
        Case("encoders", "hub id with HF_HUB_OFFLINE=1", [*good, "--method", "cca", "--text-encoder",
                                                          "st:all-MiniLM-L6-v2"],
             {"HF_HUB_OFFLINE": "1", "HF_HOME": str(base / "empty_hf")}, light=False),
        Case("encoders", "hub id, hub unreachable", [*good, "--method", "cca", "--text-encoder",
                                                     "hf:openai/clip-vit-base-patch32"],
             {"HF_HOME": str(base / "empty_hf"), "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"},
             light=False),
    ]


def _runs_at_once(quick: bool) -> ThreadPoolExecutor:
    """Where a section's independent runs go: two at a time in a quick run, whose times say nothing,
    and one at a time in a full run, so that each run's time is its own."""
    return ThreadPoolExecutor(max_workers=2 if quick else 1)


def bad_inputs(work: Path, quick: bool) -> dict:
    base = work / "data"
    write_tsv_dataset(base, n_images=24 if quick else 40)
    rows = []
    light = LIGHT + QUICK_TEXT_KERNEL if quick else LIGHT

    def attempt(case: Case) -> tuple[Case, dict]:
        cache = Path(case.env.get("KCCA_DESC_CACHE", work / "cache_bad_inputs"))
        # The case's own options last: they override the light defaults (of the main command).
        args = light + case.args if case.command == FIT and case.light else case.args
        return case, run_cli(args, cache, env=case.env, command=case.command, disk=case.disk)

    # Each case is mostly a process starting up; runs may share a cache.
    with _runs_at_once(quick) as pool:
        for case, outcome in pool.map(attempt, bad_input_cases(base, quick)):
            said = [line for line in outcome["stderr"].splitlines()
                    if line.startswith("error:") or "warning" in line.lower()]
            category, name = case.category, case.name
            row = {"category": category, "case": name, "verdict": verdict(outcome), "exit_code": outcome["rc"],
                   "warned": any("warning" in line.lower() for line in said), "s": round(outcome["s"], 1),
                   "message": (said[0] if said else "")[:300]}
            rows.append(row)
            print(f"  {category:10s} {name:40s} {row['verdict']:8s} exit {row['exit_code']} {row['s']:5.1f} s"
                  f"{' (warned)' if row['warned'] else ''}  {row['message'][:80]}")
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("graceful", "clear", "failed")}
    by_category = {c: {v: sum(r["verdict"] == v for r in rows if r["category"] == c)
                       for v in ("graceful", "clear", "failed")} for c in dict.fromkeys(r["category"] for r in rows)}
    return {"cases": rows, "verdicts": counts, "by_category": by_category}


# ----------------------------------------------------------------------------------- fuzz
def _mutate(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.choice(("flip", "delete", "insert", "duplicate"))
        at = rng.randrange(max(len(data), 1))
        if op == "flip" and data:
            data[at] = rng.randrange(256)
        elif op == "delete":
            del data[at:at + rng.randint(1, 40)]
        elif op == "insert":
            data[at:at] = rng.choice((b"\t", b"\n", b"\x00", b"\r\n", b"\xff\xfe", b'"', b"{", b"]", "é".encode()))
        else:
            data[at:at] = data[at:at + rng.randint(1, 200)]
    return bytes(data)


def fuzz(work: Path, n_cases: int, seed: int = 0) -> dict:
    """Random and mutated TSV / JSON files through the loaders, in-process."""
    base = work / "data"
    tsv = base / "data.tsv"
    valid = {"tsv": tsv.read_bytes(), "json": tsv_to_json(tsv, base / "valid.json").read_bytes()}
    rng = random.Random(seed)
    counts = {"handled": 0, "clear": 0, "failed": 0}
    failures = []
    path = {kind: base / f"fuzz.{kind}" for kind in valid}
    for case in range(n_cases):
        kind = rng.choice(("tsv", "json"))
        data = (bytes(rng.randrange(256) for _ in range(rng.randint(0, 400))) if case % 5 == 0
                else _mutate(valid[kind], rng))
        path[kind].write_bytes(data)
        try:
            load_dataset(kind, root=path[kind], image_root=base)
            counts["handled"] += 1
        except (KccaDescError, ValueError, OSError) as exc:
            counts["clear" if str(exc) else "failed"] += 1
        except Exception as exc:  # anything else is a bug the fuzzing found
            counts["failed"] += 1
            failures.append(f"{kind} case {case}: {type(exc).__name__}: {exc}"[:300])
    return {"cases": n_cases, "seed": seed, **counts, "failures": failures[:20]}


# ----------------------------------------------------------------------------- interrupts
def _interrupt_at(args: list[str], cache: Path, stage: str, signum: int, after: float) -> dict:
    got = interrupt_cli(args, cache, stage, signum, after)
    stderr = got.pop("stderr")
    return {"stage": stage, "signal": signal.Signals(signum).name, **got, "latency_s": round(got["latency_s"], 3),
            "expected_exit_code": got["exit_code"] == INTERRUPT_EXIT_CODES[signum],
            "message": "to resume, run the same command again" in stderr or "nothing new was written" in stderr,
            "traceback": "Traceback" in stderr}


def interrupts(work: Path, n_images: int, stages: list[str], quick: bool = False) -> dict:
    args = ["--n-images", str(n_images), "--text-kernel", "tri5", *LIGHT]
    chain = work / "cache_interrupted"
    rows = []
    for i, stage in enumerate(stages):
        signum = (signal.SIGINT, signal.SIGTERM)[i % 2]
        # Soon after the stage starts: some stages last a fraction of a second.
        row = _interrupt_at(args, chain, stage, signum, after=0.1)
        rows.append(row)
        print(f"  {row['signal']:7s} in {stage:16s} -> exit {row['exit_code']} after {row['latency_s']:.3f} s "
              f"(named stage: {row['interrupted_during']})")
    interrupted = [r for r in rows if r["exit_code"] in INTERRUPT_EXIT_CODES.values()]
    latencies = [r["latency_s"] for r in interrupted]
    # The chain's last run resumes; beside it an uninterrupted run in a fresh cache.
    # Their caches are apart.
    def finish(name: str, cache: Path) -> dict:
        return run_cli(args + ["--out", str(work / f"{name}.json")], cache, timeout=900)

    with _runs_at_once(quick) as pool:
        resumed, fresh = pool.map(finish, ("resumed", "fresh"), (chain, work / "cache_fresh"))
    identical = (resumed["rc"] == fresh["rc"] == 0
                 and figures(work / "resumed.json") == figures(work / "fresh.json"))
    print(f"  resumed run: {resumed['s']:.0f} s, uninterrupted run: {fresh['s']:.0f} s, identical figures: {identical}")
    return {"n_images": n_images, "stages": rows, "n_interrupted": len(interrupted),
            "stages_interrupted": sorted({r["interrupted_during"] for r in interrupted if r["interrupted_during"]}),
            "all_clean": all(r["expected_exit_code"] and r["message"] and not r["traceback"] for r in interrupted),
            "latency_median_s": statistics.median(latencies) if latencies else None,
            "latency_max_s": max(latencies) if latencies else None,
            "resumed_s": round(resumed["s"], 1), "uninterrupted_s": round(fresh["s"], 1),
            "resume_identical": identical, "temporary_files_left": len(list(chain.rglob("*.tmp")))}


# ---------------------------------------------------------------------------- concurrency
def concurrency(work: Path, n_images: int, sizes: tuple[int, ...], quick: bool = False) -> dict:
    base = ["--n-images", str(n_images), *LIGHT, "--text-kernel", "bow5"]
    configurations = {"test split": base, "dev split": base + ["--split", "dev"],
                      "tri5 kernel": [*base, "--text-kernel", "tri5"], "power 2": base + ["--power", "2"]}
    configurations = dict(list(configurations.items())[:max(sizes)])

    def run_alone(name: str):
        out = work / f"alone_{name.replace(' ', '_')}.json"
        done = run_cli(configurations[name] + ["--out", str(out)], work / f"cache_alone_{name.replace(' ', '_')}")
        return figures(out) if done["rc"] == 0 else None

    # Each alone in a cache of its own.
    with _runs_at_once(quick) as pool:
        alone = dict(zip(configurations, pool.map(run_alone, configurations)))
    rows = {}
    for n_runs in sizes:
        cache = work / f"cache_shared_{n_runs}"
        names = list(configurations)[:n_runs]
        outcomes: dict[str, dict] = {}

        def go(name):
            out = work / f"shared{n_runs}_{name.replace(' ', '_')}.json"
            outcomes[name] = run_cli(configurations[name] + ["--out", str(out)], cache) | {"out": out}

        threads = [threading.Thread(target=go, args=(name,)) for name in names]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        identical = sum(o["rc"] == 0 and alone[n] is not None and figures(o["out"]) == alone[n]
                        for n, o in outcomes.items())
        rows[f"{n_runs} runs"] = {"configurations": names, "completed": sum(o["rc"] == 0 for o in outcomes.values()),
                                  "identical_to_alone": identical, "wall_s": round(time.perf_counter() - start, 1),
                                  "temporary_files_left": len(list(cache.rglob("*.tmp")))}
        print(f"  {n_runs} concurrent runs: {identical} of {n_runs} finished with the figures they give alone")
    return {"n_images": n_images, "runs": rows}


# ----------------------------------------------------------------------------- damaged cache
DAMAGES = {"truncated": lambda b: b[: len(b) // 2], "random bytes": lambda b: os.urandom(len(b)),
           # Sixteen bytes inverted mid-file: the case that parsing alone does not notice.
           "flipped bytes": lambda b: b[:len(b) // 2] + bytes(x ^ 0xFF for x in b[len(b) // 2:len(b) // 2 + 16])
                                      + b[len(b) // 2 + 16:]}


#: The systems whose runs write every kind of cache entry, with their options: KCCA (features,
#: codebooks, Grams, the solver's spectra and solutions), the landmark KCCA (Zarr chunks, their
#: metadata and its seal) and a trainable model (checkpoints and lineage records; full runs only:
#: torch and its training cost a quick run more than the rest of it).
DAMAGE_SYSTEMS = {"kcca": [*LIGHT, "--text-kernel", "bow5"],
                  "kcca_scalable": [*LIGHT, "--text-kernel", "bow5", "--method", "kcca_scalable", "--engine", "local",
                                    "--rank", "16", "--chunk-size", "16"],
                  "rei": ["--method", "rei", "--train-epochs", "1"]}


def _entry_kind(cache: Path, path: Path) -> str:
    """The kind of a cache entry: its stage's sub-directory (the solver's two kinds are one level
    down), or what it is in a Zarr store or beside a checkpoint."""
    parts = path.relative_to(cache).parts
    if parts[0] == "scale":
        return ("zarr seal" if path.name.endswith(".zarr.metadata") else
                "zarr metadata" if path.name == "zarr.json" else "zarr chunk")
    if parts[0] == "checkpoints":
        return "lineage record" if path.name == "lineage.json" else "checkpoint"
    return "/".join(parts[:2]) if parts[0] == "kcca_spectra" else parts[0]


def _entries(cache: Path) -> set[Path]:
    """The cache's entries: every file but the lock files and temporaries."""
    return {p for p in cache.rglob("*") if p.is_file() and not p.name.startswith(".") and ".locks" not in p.parts}


def _store(cache: Path, path: Path) -> str:
    """The Zarr store (or checkpoint folder) of an entry, or the entry itself."""
    parts = path.relative_to(cache).parts
    return parts[1].removesuffix(".metadata") if parts[0] in ("scale", "checkpoints") else str(path)


def _pick(cache: Path, paths: list[Path], taken: set[str]) -> Path:
    """One of ``paths`` in a store no other case damages, where there is one: a store damaged twice
    is recomputed whole on its first damage, so the second would go unseen."""
    path = next((p for p in paths if _store(cache, p) not in taken), paths[0])
    taken.add(_store(cache, path))
    return path


def _damage_outcome(run: dict, entry: Path, identical: bool) -> str:
    """recomputed (one warning naming the entry, the clean run's figures), harmless, or what went wrong."""
    warned = [line for line in run["stderr"].splitlines() if "cache entry" in line and f"{entry} " in line]
    if run["rc"] != 0 or "Traceback" in run["stderr"]:
        return "failed"
    if not identical:
        return "changed figures, reported" if warned else "silent change"
    if not warned:
        return "harmless"
    return "recomputed" if len(warned) == 1 else "reported more than once"


def damaged_cache(work: Path, n_images: int, quick: bool) -> dict:
    """Each kind of entry of finished runs, damaged each way, in a copy of their cache; the run
    that wrote it, repeated on the copy, must warn once naming the entry and give the clean run's
    figures.  And a killed writer's orphan temporary file, which a run must remove.

    Each case has a copy and a run of its own; quick: one way per kind, all the cases of a system
    (and the orphan) in one copy and one run, each entry's warning told apart by its path.
    """
    clean = work / "cache_damaged"
    systems = {name: ["--n-images", str(n_images), *options] for name, options in DAMAGE_SYSTEMS.items()
               if not (quick and name == "rei")}
    by_kind: dict[str, list[Path]] = {}
    system_of: dict[str, str] = {}
    for system, args in systems.items():
        before = _entries(clean) if clean.exists() else set()
        first = run_cli(args + ["--out", str(work / f"undamaged_{system}.json")], clean)
        if first["rc"] != 0:
            raise RuntimeError(f"the clean {system} run failed: {first['stderr'][-2000:]}")
        for path in sorted(_entries(clean) - before):
            kind = _entry_kind(clean, path)
            by_kind.setdefault(kind, []).append(path)
            system_of.setdefault(kind, system)
    taken: set[str] = set()
    cases = [(f"{kind}, {damage}", _pick(clean, by_kind[kind], taken).relative_to(clean), damage, system_of[kind])
             for i, kind in enumerate(by_kind) for damage in ([list(DAMAGES)[i % len(DAMAGES)]] if quick else DAMAGES)]
    # A writer killed by SIGKILL (no handler runs) leaves its temporary file: a later run removes it.
    orphan = ("orphan temporary of a killed writer",
              by_kind["pyramid_histograms"][0].parent.relative_to(clean) / f".entry.npz.{_dead_pid()}.killed.tmp",
              None, "kcca")
    cases.append(orphan)
    runs = ([[case for case in cases if case[3] == system] for system in systems] if quick else
            [[case] for case in cases])
    rows = []
    for group in runs:
        system = group[0][3]
        cache = work / "cache_damaged_case"
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(clean, cache)
        for _, entry, damage, _ in group:
            if damage is None:
                (cache / entry).write_bytes(os.urandom(4096))
                os.utime(cache / entry, (time.time() - 3600, time.time() - 3600))
            else:
                (cache / entry).write_bytes(DAMAGES[damage]((cache / entry).read_bytes()))
        out = work / "redone.json"
        again = run_cli(systems[system] + ["--out", str(out)], cache)
        identical = again["rc"] == 0 and figures(work / f"undamaged_{system}.json") == figures(out)
        for case, entry, damage, _ in group:
            said = [line for line in again["stderr"].splitlines() if f"{cache / entry} " in line
                    or line.startswith("error:")]
            outcome = (_damage_outcome(again, cache / entry, identical) if damage is not None else
                       "removed" if again["rc"] == 0 and not (cache / entry).exists() else "left")
            rows.append({"case": case, "system": system, "entry": str(entry), "outcome": outcome,
                         "exit_code": again["rc"], "s": round(again["s"], 1), "message": (said[0] if said else "")[:300]})
            print(f"  {case:40s} {outcome:12s} exit {again['rc']}  {rows[-1]['message'][:60]}")
    damaged = [row for row in rows if row["case"] != orphan[0]]
    return {"damaged": len(damaged), "kinds": {kind: len(paths) for kind, paths in by_kind.items()},
            "systems": list(systems),
            "damages": {d: sum(r["case"].endswith(f", {d}") for r in damaged) for d in DAMAGES},
            "detected": sum(r["outcome"] in ("recomputed", "changed figures, reported", "reported more than once")
                            for r in damaged),
            "recomputed": sum(r["outcome"] == "recomputed" for r in damaged),
            "silent": sum(r["outcome"] == "silent change" for r in damaged),
            "figures_identical": all(r["outcome"] in ("recomputed", "harmless") for r in damaged),
            "orphan_removed": next(r for r in rows if r["case"] == orphan[0])["outcome"] == "removed", "cases": rows}


def _dead_pid() -> int:
    """The process id of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


# ---------------------------------------------------------------------------------- main
def main(argv=None) -> dict:
    p = benchmark_parser(__file__, __doc__.split("\n\n")[0])
    p.add_argument("--fuzz-cases", type=positive_int, help="fuzzed data files (default 400; quick 40)")
    p.add_argument("--interrupt-images", type=positive_int, help="synthetic images of the interrupted runs (default 1500; quick 60)")
    p.add_argument("--small-images", type=positive_int,
                   help="synthetic images of the concurrent and damaged-cache runs (default 120; quick 40)")
    add_output_arguments(p, "one bad input per category, 40 fuzz cases, tiny data, one interrupted stage, "
                            "two concurrent runs")
    args = fill_defaults(p.parse_args(argv), {
        "full": {"fuzz_cases": 400, "interrupt_images": 1500, "small_images": 120},
        "quick": {"fuzz_cases": 40, "interrupt_images": 60, "small_images": 40}})
    stages = (["image features"] if args.quick else
              ["text preprocess", "image features", "image gram", "text kernel fit", "text gram", "kcca fit",
               "model selection", "evaluation"])
    start = time.perf_counter()
    record = {"machine": machine_info()}
    with tempfile.TemporaryDirectory(prefix="kcca_reliability_") as tmp:
        work = Path(tmp)
        print("bad inputs through the command line:")
        record["bad_inputs"] = bad_inputs(work, args.quick)
        record["fuzz"] = fuzz(work, args.fuzz_cases)
        print(f"fuzz: {args.fuzz_cases} cases: {record['fuzz']['handled']} handled, {record['fuzz']['clear']} clear "
              f"errors, {record['fuzz']['failed']} failed")
        print("interrupts:")
        record["interrupts"] = interrupts(work, args.interrupt_images, stages, args.quick)
        print("concurrent runs on one cache:")
        record["concurrency"] = concurrency(work, args.small_images, (2,) if args.quick else (2, 4), args.quick)
        print("damaged cache entries:")
        record["damaged_cache"] = damaged_cache(work, args.small_images, args.quick)
    record["wall_s"] = round(time.perf_counter() - start, 1)
    bad = record["bad_inputs"]["verdicts"]
    interrupted = record["interrupts"]
    print(f"\nbad inputs: {sum(bad.values())} tried, {bad['graceful']} graceful, {bad['clear']} clear, "
          f"{bad['failed']} failed; by category: {json.dumps(record['bad_inputs']['by_category'])}")
    print(f"fuzz cases tried: {record['fuzz']['cases']} ({record['fuzz']['failed']} failed)")
    if interrupted["latency_max_s"] is not None:
        print(f"interrupt latency over {interrupted['n_interrupted']} interrupted runs "
              f"({len(interrupted['stages_interrupted'])} distinct stages): median "
              f"{interrupted['latency_median_s']:.3f} s, max {interrupted['latency_max_s']:.3f} s; "
              f"resumed results identical: {interrupted['resume_identical']}")
    for name, row in record["concurrency"]["runs"].items():
        print(f"concurrent {name}: {row['identical_to_alone']} of {len(row['configurations'])} identical to alone")
    d = record["damaged_cache"]
    print(f"damaged cache entries: {d['damaged']} damaged ({len(d['kinds'])} kinds), {d['detected']} detected, "
          f"{d['recomputed']} recomputed with the clean run's figures, {d['silent']} silent changes; "
          f"orphan temporary removed: {d['orphan_removed']}")
    write_results(output_path(args, __file__), record, indent=1)
    return record


if __name__ == "__main__":
    run_main(main)
