"""The ``neural.py`` arguments that run the systems of a results file again as they were run, a line each.

A feature bridge's record is re-selected over the dev grid it was selected over (read from its
``dev_search``), with its components, rank and dev protocols: ``neural.py``'s default grid may
have moved on since.  A merged record of a trainable system is named after its configuration
and the settings that differ from it (:func:`merge_results.settings_name`); this reads those
settings back from the record, so that a record can be re-run as it was made, e.g. on a GPU
machine from a features file, all at once::

    python benchmarks/rerun_records.py benchmarks/results/neural_gpu.json \\
        vse_paper_word_vectorsNone rei_max_epochs20_word_vectorsNone > commands.txt
    while read -r name args; do
        python benchmarks/neural.py --image-features efficientnet --image-features-file effnet.npz \\
            --train-device cuda $args --out "$name.json" > "$name.log" 2>&1 &
    done < commands.txt; wait
    python benchmarks/merge_results.py --top-k 5 merged.json *.json   # named as before

Where and how long a model ran (device, threads, a time budget) is not repeated. A record whose
name its settings no longer give (the configuration changed since) is refused: its run would be
merged under another name (the refusal gives the arguments that train it again under that name).

Usage::

    python benchmarks/rerun_records.py RESULTS.json [SYSTEM ...]   # default: every bridge and trainable system
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kcca_bench import benchmark_parser, run_main
from kcca_desc.methods.trainable_systems import TRAINABLE_VARIANTS
from merge_results import changed_settings, settings_name
from neural import bridge_of, option_arguments, selection_options


def trained_variant(system: str) -> str:
    """The system of ``benchmarks/neural.py --systems`` that merged name ``system`` is a run of."""
    found = [v for v in TRAINABLE_VARIANTS if system == v or system.startswith(v + "_")]
    if not found:
        raise ValueError(f"{system!r} is not a run of a trainable system ({', '.join(TRAINABLE_VARIANTS)})")
    return max(found, key=len)


def rerun_arguments(system: str, params: dict) -> list[str]:
    """``--train-config``, ``--systems`` and ``--train-params`` that train ``system`` again as ``params`` record.

    Raises
    ------
    ValueError
        When ``params`` would now name the run otherwise than ``system``.
    """
    variant = trained_variant(system)
    changed = [f"{key}={value!r}" for key, value in changed_settings(variant, params).items()]
    arguments = ["--train-config", params["config"], "--systems", variant] + (["--train-params", *changed] if changed else [])
    name = settings_name(variant, params)
    if name != system:
        raise ValueError(f"{system}: its settings now name it {name!r} (the "
                         f"configuration changed since it ran): {' '.join(arguments)} trains it again, merged "
                         "under that name")
    return arguments


def reselect_arguments(system: str, params: dict) -> list[str]:
    """``--image-features``, ``--systems`` and the selection options that select bridge ``system`` again
    as ``params`` record (:func:`neural.selection_options`)."""
    bridge, features = bridge_of(system)
    return ["--image-features", features, "--systems", bridge, *option_arguments(selection_options(system, params))]


def record_arguments(system: str, params: dict) -> list[str]:
    """The ``neural.py`` arguments that run the record ``system`` of ``params`` again."""
    return reselect_arguments(system, params) if "dev_search" in params else rerun_arguments(system, params)


def main(argv=None) -> int:
    parser = benchmark_parser(__file__, __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="a results file of neural.py runs (merged)")
    parser.add_argument("systems", nargs="*", help="the systems to re-run (default: every bridge and trainable one)")
    args = parser.parse_args(argv)
    params = {r["system"]: r["params"] for r in json.loads(args.results.read_text())
              if "protocol" in r and ("config" in r["params"] or "dev_search" in r["params"])}
    unknown = sorted(set(args.systems) - set(params))
    if unknown:
        parser.error(f"{args.results}: no bridge or trained record of {unknown}")
    refused = 0
    for system in args.systems or params:
        try:
            print(system, " ".join(record_arguments(system, params[system])))
        except ValueError as exc:
            print(f"not re-run: {exc}", file=sys.stderr)
            refused += 1
    return 1 if refused else 0


if __name__ == "__main__":
    run_main(main)
