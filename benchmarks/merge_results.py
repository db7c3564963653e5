"""Merge the results files of several ``neural.py`` runs into one, naming each system by its settings.

Runs of the trainable systems go in parallel on a GPU machine, each writing its own file (one
file per process: concurrent ``--merge`` into one file would race).  This tool joins them.  A
trainable system trained with settings other than its configuration's
(:data:`kcca_desc.methods.trainable_systems.TRAINABLE`) is renamed after them, so that
the runs of one system in several settings stay apart: ``vse`` in the ``paper`` configuration
becomes ``vse_paper``, with ``--train-params dropout=0.5`` ``vse_dropout0.5``.  Where and how
long a model ran (device, threads, a time budget) does not rename it.  Every record of
an input file (retrieval results and task results alike) is renamed the same way.

Usage::

    python benchmarks/merge_results.py [--top-k K] OUT.json IN.json [IN.json ...]

How ``benchmarks/results/neural_gpu.json`` was made (the images stay behind: their
EfficientNet-Lite0 features travel in a features file)::

    # here: the features of all 8,091 images, float16
    python -c "import numpy as np; from kcca_desc.data.flickr8k import load_flickr8k; \\
      from kcca_desc.adapters import EfficientNetLiteImageEncoder; \\
      from kcca_desc.adapters.precomputed import save_image_features; \\
      save_image_features('effnet.npz', EfficientNetLiteImageEncoder(), load_flickr8k().images, np.float16)"
    # on the GPU machine (the repository not installed there: `ln -sfn ../kernels kcca_desc/kernels`,
    # PYTHONPATH=.), with the caption and split files copied beside empty stand-ins for the image
    # files (the loader checks that each captioned image exists; ls images/ | xargs touch), and
    # --flickr8k pointing there; one process per line, in parallel
    python benchmarks/neural.py --image-features efficientnet --image-features-file effnet.npz \\
        --train-device cuda --train-config paper --systems char_gru --train-seconds 390 --out char_gru_paper.json
    ...  --train-config cpu --systems char_gru --train-seconds 390 --out char_gru_cpu.json   (beside it; both
         replaced an earlier 13-epoch char_gru_paper record, removed from the merged file first)
    ...  --train-config paper --systems vse vse_hardest --out vse_paper.json
    ...  --train-config cpu --systems rei_baseline --out rei_baseline.json   (and each Rei step, VSE++,
         and VSE with --train-params dropout=0.2 / dropout=0.5 / dropout=0.5 lr=3e-4,
         and --train-config paper --train-params dropout=0.5; VSE's cpu configuration was then at
         batch 128 and learnt its word embeddings from random weights, so these records are named
         vse_batch_size128_word_vectorsNone..., vse_paper_word_vectorsNone; Rei's steps likewise
         rei_baseline_max_epochs20_word_vectorsNone, ... (Rei's then stopped after 20 epochs at most);
         char-GRU's cpu configuration was then without dropout, so the record of --train-config cpu
         --systems char_gru was char_gru_batch_size128_dropout0_max_epochs12, since trained again on a CPU
         and moved to neural.json as char_gru_batch_size128_dropout0_hidden_dim256_length_windowNone_max_epochs12)
    ...  --train-config paper --systems char_gru --train-params dropout=0.2 --train-epochs 20 --train-seconds 490
         (alone; char-GRU's paper configuration then took dropout 0.2, so this record is
         char_gru_paper_max_epochs20 and the earlier char_gru_paper became char_gru_paper_dropout0)
    # here
    python benchmarks/merge_results.py --top-k 5 benchmarks/results/neural_gpu.json *.json

The eleven VSE and Rei records were re-run on an H200 on 2026-11-29, eleven processes at once (one
torch thread each), so that their off-topic, forced-choice and vSTS figures have bootstrap
intervals (their records from before had none; ``rei_gating_max_epochs20_word_vectorsNone`` and
``rei_max_epochs20_word_vectorsNone`` had no task records at all).  Each command repeats its
record's settings (``benchmarks/rerun_records.py`` prints them, e.g. ``--train-config cpu
--systems rei_baseline --train-params max_epochs=20 word_vectors=None``); here the runs were
merged with ``--top-k 5``, each system's records replacing its old ones in ``neural_gpu.json``.

The GPU's sums are not deterministic, so the runs differ: 220 of the 224 earlier retrieval figures
(R@K and median ranks) lie within the new runs' 95 % intervals; the four others are of
``rei_gating_max_epochs20_word_vectorsNone``, whose earlier run dev patience stopped after 16
epochs and this one ran all 20 (annotation R@1 17.1 then, 21.2 [18.6-23.7] now, karpathy).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kcca_desc.neural.training import PARAMETERS_ADDED_LATER
from kcca_desc.cli.options import positive_int
from kcca_bench import benchmark_parser, run_main
from kcca_bench import write_results
from kcca_desc.methods.trainable_systems import TRAINABLE_VARIANTS

#: Settings of where and how long a model ran, which do not change what it is.
RUNTIME = {"image_encoder", "n_threads", "device", "checkpoint", "max_train_seconds"}


def changed_settings(system: str, params: dict) -> dict:
    """The settings of a run of ``system`` recorded in ``params`` that differ from its configuration's
    (``params["config"]``), where and how long it ran (:data:`RUNTIME`) left out."""
    expected = TRAINABLE_VARIANTS[system].build(params["config"]).get_params()
    # A record written before a parameter existed ran at the behaviour the parameter's old value keeps.
    recorded = {**PARAMETERS_ADDED_LATER, **params}
    return {key: recorded[key] for key in sorted(expected)
            if key not in RUNTIME and key in recorded and recorded[key] != expected[key]}


def settings_name(system: str, params: dict) -> str:
    """``system`` named after its configuration and the settings that differ from it."""
    if system not in TRAINABLE_VARIANTS or "config" not in params:
        return system
    config = params["config"]
    changed = [f"{key}{value:g}" if isinstance(value, float) else f"{key}{value}"
               for key, value in changed_settings(system, params).items()]
    return "_".join([system] + ([config] if config != "cpu" else []) + changed)


def merge(paths: list[Path], top_k: int | None = None) -> list[dict]:
    """The records of every file at ``paths``, renamed by :func:`settings_name`, each query's
    retrieved list cut to its first ``top_k`` items (None: kept whole).

    Raises
    ------
    ValueError
        When two files hold a record of the same renamed system and task.
    """
    merged, seen = [], {}
    for path in paths:
        records = json.loads(path.read_text())
        names = {r["system"]: settings_name(r["system"], r["params"]) for r in records if "protocol" in r}
        for record in records:
            record["system"] = names.get(record["system"], record["system"])
            if top_k is not None:
                top = record.get("queries", {}).get("top", {})
                for task, rows in top.items():
                    top[task] = [row[:top_k] for row in rows]
            key = (record["system"], record.get("protocol", record.get("task")), record["split"])
            if key in seen:
                raise ValueError(f"{path}: {key} is also in {seen[key]}")
            seen[key] = path
            merged.append(record)
    return merged


def main(argv=None) -> None:
    parser = benchmark_parser(__file__, __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("inputs", type=Path, nargs="+")
    parser.add_argument("--top-k", type=positive_int, default=None,
                        help="keep each query's first K retrieved items (default: as the runs wrote them)")
    args = parser.parse_args(argv)
    records = merge(args.inputs, args.top_k)
    write_results(args.out, records, indent=1, default=float)
    for record in records:
        if "protocol" in record:
            print(record["system"], record["protocol"], record["split"])


if __name__ == "__main__":
    run_main(main)
