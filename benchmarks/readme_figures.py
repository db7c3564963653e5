"""Write every figure of README.md and of the documentation from the benchmark results files.

Each page of :data:`PAGES` marks the passages that carry figures::

    <!-- figures:NAME -->
    ...
    <!-- /figures -->

and this script rewrites each passage with the function registered as ``NAME`` in :data:`REGIONS`,
which reads the figures from the results files (``benchmarks/results/*.json``). A figure that no
results file stores cannot appear; a results file that changes makes a page stale, which
``--check`` reports (the test suite runs it). The published figures of other papers
(:data:`PUBLISHED`) are the only ones not measured by this project.

Usage::

    python benchmarks/readme_figures.py            # rewrite README.md and the docs pages
    python benchmarks/readme_figures.py --check    # exit 1 and print a diff when a page is stale
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import sys
import textwrap
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from kcca_desc._core.profile import wall_seconds
from kcca_desc.data.dataset import PROTOCOLS
from kcca_desc.evaluate.ranks import TASKS
from kcca_desc.methods.selection import SELECTION_METRICS as RECALLS, recall_sum
from kcca_desc.methods.trainable_systems import TRAINABLE

REPOSITORY = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPOSITORY / "benchmarks" / "results"


#: Published figures (R@1, R@5, R@10, median rank) per task: the only figures of the pages that
#: this project did not measure. Both were measured on the original Flickr8K images.
PUBLISHED = {
    # Hodosh et al. 2013, appendix B: Tri5Sem, hodosh protocol (as quoted by Karpathy et al. 2014).
    "hodosh2013_tri5sem": {"annotation": (8.3, 21.6, 30.3, 34), "search": (7.6, 20.7, 30.1, 38)},
    # Kiros et al. 2014, Table 1, "Our model" with 19-layer OxfordNet features: karpathy protocol.
    "kiros2014_oxfordnet": {"annotation": (18.0, 40.9, 55.0, 8), "search": (12.5, 37.0, 51.5, 10)},
}

_REGION = re.compile(r"<!-- figures:(?P<name>[a-z_]+) -->\n(?P<body>.*?)<!-- /figures -->", re.S)


class ResultsFiles:
    """The JSON records of ``directory``, each read once, by name (``"hodosh_table"``)."""

    def __init__(self, directory: str | Path = RESULTS_DIR):
        self.directory = Path(directory)
        self._read: dict[str, object] = {}

    def __getitem__(self, name: str):
        if name not in self._read:
            path = self.directory / f"{name}.json"
            if not path.is_file():
                raise FileNotFoundError(f"{path}: no such results file; the figures of the pages need it")
            self._read[name] = json.loads(path.read_text())
        return self._read[name]


# ----------------------------------------------------------------- formats
def recall(value: float) -> str:
    """A recall (percent) at the precision of the paper's tables: one decimal."""
    return f"{value:.1f}"


def rank(value: float) -> str:
    """A median rank: whole, or with its half (the median of an even number of queries)."""
    return f"{value:g}"


def figures(metrics: Mapping[str, float]) -> str:
    """``R@1 / R@5 / R@10 (median rank)`` of one task."""
    return " / ".join(recall(metrics[k]) for k in RECALLS) + f" ({rank(metrics['median_rank'])})"


def with_interval(value: float, interval: Sequence[float] | None, fmt: Callable[[float], str] = recall,
                  mark: str = "") -> str:
    """``value`` with its interval, ``88.8 [86.9–90.6]`` (``mark`` after the value); the value alone without one."""
    text = fmt(value) + mark
    return text if interval is None else f"{text} [{fmt(interval[0])}–{fmt(interval[1])}]"


def task_figure(metrics: Mapping, name: str) -> str:
    """A task's figure (percent) with its interval, ``88.8 [86.9–90.6]``, where ``metrics`` has one."""
    return with_interval(metrics[name], metrics.get("ci", {}).get(name))


def published(name: str, task: str) -> str:
    """``R@1 / R@5 / R@10 (median rank)`` of :data:`PUBLISHED` ``name``."""
    return figures(dict(zip(RECALLS + ("median_rank",), PUBLISHED[name][task])))


def span(values: Iterable[float], fmt: Callable[[float], str] = recall) -> str:
    """``low–high`` of ``values`` as formatted, or one figure when both ends read the same."""
    values = sorted(values)
    low, high = fmt(values[0]), fmt(values[-1])
    return low if low == high else f"{low}–{high}"


def duration(seconds: float) -> str:
    """``28 min 46 s`` (whole seconds)."""
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def flags(sampling: Mapping[str, int]) -> str:
    """The command-line flags of an image-resolution row's sampling (empty: the defaults)."""
    if not sampling:
        return "the default sampling"
    return "`" + " ".join(f"--{key.replace('_', '-')} {value}" for key, value in sampling.items()) + "`"


def signed(value: float) -> str:
    """A difference of recalls with its sign, a true minus sign when negative."""
    return f"{value:+.1f}".replace("-", "−")


def paragraph(text: str, width: int = 100) -> str:
    """``text`` wrapped at ``width`` columns, never inside a `code span`."""
    text = re.sub(r"`[^`]*`", lambda m: m[0].replace(" ", "\0"), text)
    return textwrap.fill(text, width, break_long_words=False, break_on_hyphens=False).replace("\0", " ")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def sentence_list(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# ----------------------------------------------------------------- the Hodosh table
#: Label and ``hodosh_table.json`` system of each measured row, in the paper's order.
HODOSH_ROWS = (
    ("NN5 idf F1", "nn5_idf_f1"),
    ("KCCA BoW5", "bow5"),
    ("KCCA BoW5, histogram image kernel", "bow5_histo"),
    ("KCCA Tri5", "tri5"),
    ("KCCA Tri5Sem (`tri_sem`)", "tri_sem"),
)
AS_SHIPPED, DOWNSAMPLED, DENSE, EVERY_PIXEL = ("224 px (as shipped)", "112 px (downsampled x2)",
                                               "224 px, dense sampling", "224 px, every pixel")


def _hodosh_result(results: ResultsFiles, system: str) -> dict:
    return results["hodosh_table"]["systems"][system]["result"]


def _resolution_rows(results: ResultsFiles, split: str) -> dict:
    """``image_resolution[_dev].json`` rows, checked against the Tri5Sem they vary."""
    name = "image_resolution" if split == "test" else f"image_resolution_{split}"
    rows = results[name]["rows"]
    reference = (_hodosh_result(results, "tri_sem") if split == "test"
                 else results["hodosh_tuning"]["best"]["dev_fused"])
    for task in TASKS:
        if figures(rows[AS_SHIPPED][task]) != figures(reference[task]):
            raise ValueError(f"{name}.json: its {AS_SHIPPED!r} row is not the stored Tri5Sem {split} run "
                             f"({figures(rows[AS_SHIPPED][task])} vs {figures(reference[task])} for {task}); "
                             f"re-run benchmarks/image_resolution.py so its rows compare with the table")
    return rows


def _random_scores(results: ResultsFiles, protocol: str) -> dict:
    matches = [r for r in results["nn_baseline"]["flickr8k"]["results"]
               if r["system"] == "random scores" and r["protocol"] == protocol]
    if len(matches) != 1:
        raise ValueError(f"nn_baseline.json: expected one {protocol} 'random scores' result, found {len(matches)}")
    return matches[0]


def hodosh_setup(results: ResultsFiles) -> str:
    table_ = results["hodosh_table"]
    settings, tuned = table_["settings"], results["hodosh_tuning"]["best"]
    for key in ("power", "diag", "weight_power"):
        if settings[key] != tuned[key]:
            raise ValueError(f"hodosh_table.json: {key} = {settings[key]} is not the one hodosh_tuning.json "
                             f"chose on dev ({tuned[key]})")
    tri_sem = _hodosh_result(results, "tri_sem")
    if "OPENBLAS_CORETYPE" in table_["machine"].get("blas_env", {}):
        raise ValueError("hodosh_table.json: run with OPENBLAS_CORETYPE set; the pages describe a run "
                         "with OpenBLAS's own kernels")
    q = settings["weight_power"]
    return paragraph(
        "Measured with `benchmarks/hodosh_table.py` on our Flickr8K copy (square images, aspect ratio "
        "squashed, with fewer pixels than the originals), hodosh protocol, test split "
        f"({tri_sem['annotation']['n_queries']:,} images); p = {settings['power']:g}, d = {settings['diag']:g}, "
        f"dimensions weighted by ρ<sup>{q:g}</sup> (chosen on dev by `benchmarks/hodosh_tuning.py`; the CLI's "
        f"default is the paper's unweighted cosine, add `--weight-power {q:g}` for this setting). Full table "
        f"with S@K, R-precision, expert scores, BLEU/ROUGE, {tri_sem['ci_settings']['confidence']:.0%} "
        "bootstrap intervals and p-values against Tri5Sem: `benchmarks/results/hodosh_table.md` / `.json`."
    )


def hodosh_time(results: ResultsFiles) -> str:
    """The wall time of the stored table run, and of an idle one when the stored run shared its cores."""
    table_, idle = results["hodosh_table"], results["hodosh_table_blas_native"]
    n_systems = len(table_["systems"])
    if table_["wall_s_this_run"] < sum(entry["wall_s"] for entry in table_["systems"].values()):
        raise ValueError("hodosh_table.json: wall_s_this_run is shorter than its systems' own wall times "
                         "(the run resumed from an earlier one); time the whole table with --force")
    cores = table_["machine"]["cpus"]
    sentence = (f"The stored run of the whole table ({n_systems} systems and the karpathy run) took "
                f"{duration(table_['wall_s_this_run'])} on {cores} cores with OpenBLAS's own kernels")
    shared = table_.get("shared_machine")
    if shared is None:
        return paragraph(sentence + ".")
    low, high = shared["load_average_observed"]
    return paragraph(sentence + f", sharing them with other work (load averages {low:g}–{high:g}), so that is "
                     "no speed figure; an earlier run on an idle machine of this kind "
                     f"(`hodosh_table_blas_native.json`) took {duration(idle['wall_s_this_run'])}.")


def hodosh_table(results: ResultsFiles) -> str:
    rows = [(label, *(figures(_hodosh_result(results, system)[task]) for task in TASKS))
            for label, system in HODOSH_ROWS]
    dense = _resolution_rows(results, "test")[DENSE]
    rows.append((f"KCCA Tri5Sem, dense sampling ({flags(dense['sampling'])})", *(figures(dense[t]) for t in TASKS)))
    rows.append(("Hodosh et al. 2013, Tri5Sem (original images)",
                 *(published("hodosh2013_tri5sem", t) for t in TASKS)))
    random = _random_scores(results, "hodosh")
    rows.append((f"random scores (seed {random['params']['seed']})", *(figures(random[t]) for t in TASKS)))
    return table(["system", "annotation R@1 / R@5 / R@10 (median rank)",
                  "search R@1 / R@5 / R@10 (median rank)"], rows)


def _gains(rows: Mapping, base: str, variant: str) -> tuple[float, float]:
    """R@10 of ``variant`` minus R@10 of ``base``, per task."""
    return tuple(rows[variant][task]["R@10"] - rows[base][task]["R@10"] for task in TASKS)


def hodosh_notes(results: ResultsFiles) -> str:
    karpathy = results["hodosh_table"]["karpathy"]["tri_sem"]["result"]
    chance = results["nn_baseline"]["flickr8k"]["random_over_seeds"]
    test, dev = _resolution_rows(results, "test"), _resolution_rows(results, "dev")
    factor = results["image_resolution"]["factor"]
    lost_test, lost_dev = (tuple(-g for g in _gains(rows, AS_SHIPPED, DOWNSAMPLED)) for rows in (test, dev))
    dense_test, dense_dev = (_gains(rows, AS_SHIPPED, DENSE) for rows in (test, dev))
    sums = sentence_list([f"{recall(recall_sum(dev[row]))} with {flags(dev[row]['sampling'])}"
                          for row in (AS_SHIPPED, EVERY_PIXEL, DENSE)])
    best = max(dev, key=lambda row: recall_sum(dev[row]))
    if best == AS_SHIPPED:
        default = ("The default sampling, best on dev, is sparser than that of Hodosh et al. 2013 (§3.3.1), "
                   "who use every pixel (`--pixel-step 1`).")
    else:
        lead = recall_sum(dev[best]) - recall_sum(dev[AS_SHIPPED])
        default = ("The default sampling is sparser than that of Hodosh et al. 2013 (§3.3.1), who use every "
                   f"pixel (`--pixel-step 1`); on dev, {flags(dev[best]['sampling'])} leads it by "
                   f"{recall(lead)} in that sum. The default is left as it is: changing it would change "
                   "every KCCA figure of the toolkit.")
    medians = sentence_list([
        "/".join(rank(dev[row][task]["median_rank"]) for task in TASKS) + f" with {flags(dev[row]['sampling'])}"
        for row in (AS_SHIPPED, DENSE)])
    return paragraph(
        f"Tri5Sem under the karpathy protocol ({karpathy['search']['n_queries']:,} test captions): "
        f"annotation {figures(karpathy['annotation'])}, search {figures(karpathy['search'])}. "
        f"Random scores over {chance['n_seeds']} seeds: annotation R@10 "
        f"{recall(chance['annotation']['R@10']['mean'])} (median rank "
        f"{chance['annotation']['median_rank']['mean']:.0f}), search {recall(chance['search']['R@10']['mean'])} "
        f"({chance['search']['median_rank']['mean']:.0f}). Our images have fewer pixels than the originals; "
        f"dividing their side by {factor} again costs {recall(lost_test[0])} (annotation) and "
        f"{recall(lost_test[1])} (search) R@10 points on test and {recall(lost_dev[0])} and "
        f"{recall(lost_dev[1])} on dev (`benchmarks/image_resolution.py --dense [--split dev]`). Sampling them "
        f"densely ({flags(test[DENSE]['sampling'])}) changes test R@10 by {signed(dense_test[0])} (annotation) "
        f"and {signed(dense_test[1])} (search) but dev R@10 by {signed(dense_dev[0])} and "
        f"{signed(dense_dev[1])} (sum of R@1/5/10 over both tasks on dev: {sums}; median ranks {medians}). "
        + default
    )


# ----------------------------------------------------------------- neural encoders
#: Label, results file and system of each row of the neural table: the bridges and the
#: models trained on this machine's cores (``neural.json``), and those trained on a GPU
#: machine from the same image features (``neural_gpu.json``).
NEURAL_ROWS = (
    ("linear CCA, MiniLM captions × EfficientNet-Lite0 images (`cca_minilm_efficientnet`)", "neural",
     "cca_minilm_efficientnet"),
    ("RBF KCCA, same features, rank {rank:,} (`kcca_minilm_efficientnet`)", "neural", "kcca_minilm_efficientnet"),
    ("Kiros et al. VSE, `cpu` configuration, MiniLM word vectors fine-tuned (`vse`)", "neural", "vse"),
    ("the same, word vectors fixed as in the paper (`vse_freeze_word_vectorsTrue`)", "neural",
     "vse_freeze_word_vectorsTrue"),
    ("VSE++ hardest negatives, `cpu` configuration (`vse_hardest`)", "neural", "vse_hardest"),
    ("Kiros et al. VSE, `cpu` configuration, word embeddings learnt from random (`vse_word_vectorsNone`)",
     "neural", "vse_word_vectorsNone"),
    ("VSE++, the same (`vse_hardest_word_vectorsNone`)", "neural", "vse_hardest_word_vectorsNone"),
    ("Kiros et al. VSE, `paper` size, word embeddings learnt from random (`vse_paper_word_vectorsNone`)",
     "neural_gpu", "vse_paper_word_vectorsNone"),
    ("Merkx & Frank char-GRU, `paper` configuration: 1,024 units, dropout 0.2, 20 of its 32 epochs "
     "(`char_gru_paper_max_epochs20`)", "neural_gpu", "char_gru_paper_max_epochs20"),
    ("the same without dropout, stopped by the clock after 20 epochs (`char_gru_paper_dropout0`)", "neural_gpu",
     "char_gru_paper_dropout0"),
    ("Merkx & Frank char-GRU, `cpu` configuration: 512 units, dropout 0.2, batches of captions of similar "
     "length, 24 epochs (`char_gru`)", "neural", "char_gru"),
    ("the same at 256 units, 44 epochs (`char_gru_hidden_dim256_max_epochs44`)", "neural",
     "char_gru_hidden_dim256_max_epochs44"),
    ("256 units, random batches, 32 epochs (`char_gru_hidden_dim256_length_windowNone_max_epochs32`)", "neural",
     "char_gru_hidden_dim256_length_windowNone_max_epochs32"),
    ("random batches, 16 epochs (`char_gru_hidden_dim256_length_windowNone_max_epochs16`)", "neural",
     "char_gru_hidden_dim256_length_windowNone_max_epochs16"),
    ("the same without dropout (`char_gru_dropout0_hidden_dim256_length_windowNone_max_epochs16`)", "neural",
     "char_gru_dropout0_hidden_dim256_length_windowNone_max_epochs16"),
    ("Rei scorer, `cpu` configuration, MiniLM word vectors fine-tuned (`rei`)", "neural", "rei"),
    ("the same, `paper` configuration: dev patience 10 (`rei_paper`)", "neural", "rei_paper"),
    ("the same, word embeddings learnt from random, 20 epochs at most (`rei_max_epochs20_word_vectorsNone`)",
     "neural", "rei_max_epochs20_word_vectorsNone"),
)
BRIDGES = ("cca_minilm_efficientnet", "kcca_minilm_efficientnet")
#: The trained systems held to the linear bridge's figures.
HELD_TO_CCA = ("vse", "vse_freeze_word_vectorsTrue", "vse_hardest", "vse_word_vectorsNone",
               "vse_hardest_word_vectorsNone", "vse_paper_word_vectorsNone", "char_gru_paper_max_epochs20",
               "char_gru_paper_dropout0", "char_gru", "char_gru_hidden_dim256_max_epochs44",
               "char_gru_hidden_dim256_length_windowNone_max_epochs32",
               "char_gru_hidden_dim256_length_windowNone_max_epochs16",
               "char_gru_dropout0_hidden_dim256_length_windowNone_max_epochs16")


def _neural(results: ResultsFiles, name: str = "neural") -> dict[tuple[str, str], dict]:
    """The retrieval results of ``<name>.json`` by (system, protocol)."""
    return {(r["system"], r["protocol"]): r for r in results[name] if "protocol" in r}


def _tasks(results: ResultsFiles, name: str) -> dict[tuple[str, str], dict]:
    """The task results (off-topic, forced choice, vSTS) of ``<name>.json`` by (system, task)."""
    return {(r["system"], r["task"]): r["metrics"] for r in results[name] if "task" in r}


def _trained_on(result: dict) -> str:
    cost = result["params"].get("training_cost")
    if cost is None:
        return "—"
    if cost["peak_gpu_gib"] is not None:
        return "GPU (" + cost["device"].replace("NVIDIA ", "") + ")"
    # "cpu, N torch threads": the threads the training used on the 2-core machine.
    threads = int(cost["device"].split(",")[1].split()[0])
    return f"CPU, {threads} thread{'s' if threads > 1 else ''}"


def rsum(result: dict) -> float:
    """R@1 + R@5 + R@10 of both tasks."""
    return sum(result[t][k] for t in TASKS for k in RECALLS)


def neural_table(results: ResultsFiles) -> str:
    found = {name: _neural(results, name) for name in ("neural", "neural_gpu")}
    selected = {tuple(found["neural"][system, p]["params"]["selected_on_dev"]) for system in BRIDGES
                for p in PROTOCOLS}
    if len(selected) != 1:
        raise ValueError(f"neural.json: the bridges were selected on different dev views: {sorted(selected)}")
    rows = []
    for label, name, system in NEURAL_ROWS:
        result = {p: found[name][system, p] for p in PROTOCOLS}
        rows.append((label.format(**result["hodosh"]["params"]),
                     "—" if system in BRIDGES else _trained_on(result["hodosh"]),
                     *(figures(result[p][t]) for p in PROTOCOLS for t in TASKS)))
    rows.append(("Kiros et al. 2014, paper, 19-layer OxfordNet features", "", "", "",
                 *(published("kiros2014_oxfordnet", t) for t in TASKS)))
    views = sentence_list(list(selected.pop()))
    return paragraph(
        "`benchmarks/neural.py` runs encoders through the same data, protocols and metrics "
        "(`kcca_desc.adapters`; needs the `neural`, `torch` and `efficientnet` extras), over EfficientNet-Lite0 "
        "image features (the best of the offline survey below). Flickr8K test split, R@1 / R@5 / "
        "R@10 (median rank); the bridges' settings chosen on dev (R@1 + R@5 + R@10 of both tasks, summed "
        f"over the {views} dev views), the trained models' snapshots on dev. Bridges and the models "
        "trained on this machine's cores: `benchmarks/results/neural.json`; the models trained on a GPU "
        "machine from the same features (a features file, `--image-features-file`): "
        "`benchmarks/results/neural_gpu.json`:"
    ) + "\n\n" + table(["system", "trained on"] + [f"{p} {t}" for p in PROTOCOLS for t in TASKS], rows)


def vse_hardest_training(results: ResultsFiles) -> str:
    """The training time of the `cpu` VSE++ model on Flickr8K, for the kernels page's example."""
    result = _neural(results)[("vse_hardest", "karpathy")]
    if result["params"]["config"] != "cpu":
        raise ValueError(f"neural.json: vse_hardest was trained in the {result['params']['config']!r} "
                         "configuration, not 'cpu'")
    return paragraph(
        "A small model on the synthetic data (the `cpu` configuration of `TRAINABLE_VARIANTS[\"vse_hardest\"]` "
        f"trained in {duration(result['params']['train_s'])} on Flickr8K ({_trained_on(result)}); what every "
        "model cost to train is in the [benchmark notes](../benchmark_notes.md)):")


def neural_notes(results: ResultsFiles) -> str:
    found = _neural(results)
    gpu = _neural(results, "neural_gpu")
    bridges = [found[s, p] for s in BRIDGES for p in PROTOCOLS]
    confidence = {r["ci_settings"]["confidence"] for r in bridges}
    resampled = {tuple(sorted(r["ci_settings"]["resampled"].items())) for r in bridges}
    if len(confidence) != 1 or resampled != {(("annotation", "queries"), ("search", "clusters"))}:
        raise ValueError(f"neural.json: the bridges' intervals differ in kind ({confidence}, {resampled})")

    def half_widths(protocols, tasks):
        return [(r["ci"][t]["R@10"][1] - r["ci"][t]["R@10"][0]) / 2
                for r in bridges if r["protocol"] in protocols for t in tasks]

    gains = [found[BRIDGES[1], p][t][k] - found[BRIDGES[0], p][t][k]
             for p in PROTOCOLS for t in TASKS for k in RECALLS]
    above = sum(g > 0 for g in gains)
    kcca = found[BRIDGES[1], "hodosh"]["params"]
    bandwidths = {entry["params"]["gamma_scale"]: entry["params"]["factorise_s"] for entry in kcca["dev_search"]}
    cca = found[BRIDGES[0], "karpathy"]
    held = []
    for system in HELD_TO_CCA:
        result = (found if (system, "karpathy") in found else gpu)[system, "karpathy"]
        r10 = [result[t]["R@10"] - cca[t]["R@10"] for t in TASKS]
        held.append(f"`{system}` {signed(r10[0])} / {signed(r10[1])} (R-sum {signed(rsum(result) - rsum(cca))})")
    return paragraph(
        f"The benchmark stores and prints {confidence.pop():.0%} bootstrap intervals of every figure "
        "(search queries resampled by image, so the five karpathy captions of an image count once); "
        f"at R@10 the bridges' are ±{span(half_widths(PROTOCOLS[:1], TASKS))} points on hodosh, "
        f"±{span(half_widths(PROTOCOLS[1:], TASKS[:1]))} on karpathy annotation and "
        f"±{span(half_widths(PROTOCOLS[1:], TASKS[1:]))} on karpathy search. RBF KCCA is above linear CCA on "
        f"{'all' if above == len(gains) else f'{above} of the'} {len(gains)} recalls, by {span(gains)} points. "
        f"At rank {kcca['rank']:,} (`--kcca-rank`) each of the {len(bandwidths)} bandwidths on the dev grid "
        f"costs an incomplete Cholesky factorisation of {span([s / 60 for s in bandwidths.values()])} minutes. "
        "Against linear CCA over the same features, karpathy R@10 (annotation / search) and the sum of "
        f"R@1/5/10 of both tasks: {sentence_list(held)} points."
    )


# ----------------------------------------------------------------- the README's one table
#: Label and ``--method`` of each classical row of the README's table, by ``hodosh_table.json`` system.
HEADLINE_CLASSICAL = (("NN5 idf F1", "nn5_idf_f1", "`nn`"), ("KCCA BoW5", "bow5", "`kcca --text-kernel bow5`"),
                      ("KCCA Tri5Sem", "tri_sem", "`kcca`"))
#: Label, results file, system and ``--method`` of each neural row of the README's table.
HEADLINE_NEURAL = (
    ("linear CCA, MiniLM × EfficientNet-Lite0", "neural", "cca_minilm_efficientnet", "`cca`"),
    ("RBF KCCA, MiniLM × EfficientNet-Lite0", "neural", "kcca_minilm_efficientnet", "`kcca --text-encoder onnx:minilm`"),
    ("VSE++ (Faghri et al.), `cpu` configuration", "neural", "vse_hardest", "`vse_hardest`"),
    ("char-GRU (Merkx & Frank), `paper` configuration", "neural_gpu", "char_gru_paper_max_epochs20", "`char_gru`"),
    ("gated relevance scorer (Rei)", "neural", "rei", "`rei`"),
)


def headline(results: ResultsFiles) -> str:
    """One table of the toolkit's main systems on Flickr8K test, hodosh protocol, beside the paper's."""
    rows = [(label, method, *(figures(_hodosh_result(results, system)[task]) for task in TASKS))
            for label, system, method in HEADLINE_CLASSICAL]
    rows.append(("Hodosh et al. 2013, Tri5Sem (published, original images)", "",
                 *(published("hodosh2013_tri5sem", task) for task in TASKS)))
    found = {name: _neural(results, name) for name in ("neural", "neural_gpu")}
    rows += [(label, method, *(figures(found[name][system, "hodosh"][task]) for task in TASKS))
             for label, name, system, method in HEADLINE_NEURAL]
    trained = results["strongest"]["settings"]["train_images"]
    rows += [(f"{label}: {combination(mkl)}, {trained:,} training images", "`benchmarks/strongest.py`",
              *(figures(mkl["results"]["hodosh"][task]) for task in TASKS)) for label, mkl in multiple_kernel_rows(results)]
    q = results["hodosh_table"]["settings"]["weight_power"]
    return (paragraph(
        "Flickr8K test split, hodosh protocol (one caption per test image), R@1 / R@5 / R@10 (median rank); "
        f"the KCCA rows with `--weight-power {q:g}` (chosen on dev), the neural rows over EfficientNet-Lite0 "
        "image features, the multiple-kernel row's kernels, weights and settings chosen on dev. From "
        "`benchmarks/results/hodosh_table.json`, `neural.json`, `neural_gpu.json` and `strongest.json`:")
            + "\n\n" + table(["system", "`--method`", "annotation", "search"], rows))


# ----------------------------------------------------------------- the strongest classical baseline
def combination(system: Mapping) -> str:
    """``text k1 + 0.5 k2 × image k3`` of a ``strongest.json`` system (weights of 1 unwritten)."""
    def side(weights: Mapping[str, float]) -> str:
        return " + ".join(f"`{n}`" if w == 1 else f"{w:g} `{n}`" for n, w in weights.items())
    return f"{side(system['text'])} × {side(system['image'])}"


def multiple_kernel_rows(results: ResultsFiles) -> list[tuple[str, Mapping]]:
    """``(label, system)`` of the selected multiple-kernel systems of ``strongest.json``: the one
    without the trained towers (when the selection had towers), then the one with them."""
    systems = results["strongest"]["systems"]
    if "mkl_without_towers" not in systems:
        return [("multiple-kernel KCCA", systems["mkl"])]
    towers = sentence_list(sorted(results["strongest"]["towers"]))
    return [("multiple-kernel KCCA", systems["mkl_without_towers"]),
            (f"multiple-kernel KCCA with the trained {towers} towers", systems["mkl"])]


#: p-values below this mark a figure as different from the best single-kernel system's.
SIGNIFICANCE = 0.05


def retrieval_figure(result: Mapping, task: str, metric: str) -> str:
    """A retrieval figure of ``result`` with its interval, † where it differs from the best single kernel's."""
    mark = "†" if result.get("significance", {}).get(task, {}).get(metric, 1.0) < SIGNIFICANCE else ""
    return with_interval(result[task][metric], result["ci"][task][metric],
                         recall if metric.startswith("R@") else rank, mark)


def strongest_table(results: ResultsFiles, protocol: str) -> str:
    """Every system of ``strongest.json`` under ``protocol``, each figure with its interval; Klein et al. under karpathy."""
    record = results["strongest"]
    metrics = RECALLS + ("median_rank",)
    rows = []
    # This benchmark's systems first, then those copied from neural.json (stable sort).
    for name, system in sorted(record["systems"].items(), key=lambda item: "text" not in item[1]):
        label = system["label"] + (f" ({combination(system)})" if "text" in system else "")
        result = system["results"][protocol]
        rows.append((label, *(retrieval_figure(result, t, m) for t in TASKS for m in metrics)))
    for entry in record["published"].values():
        if protocol in entry:
            rows.append((entry["label"], *(cell for t in TASKS for cell in (*map(recall, entry[protocol][t]), "—"))))
    return table(["system"] + [f"{t} {m.replace('_', ' ')}" for t in TASKS for m in metrics], rows)


def _alone(record: Mapping) -> list[str]:
    """``kernel dev objective`` of each base kernel measured beside the other view's reference kernel."""
    settings = record["settings"]
    reference = {"text": settings["text_kernels"][0], "image": settings["image_kernels"][0]}
    out = []
    for side, other in (("text", "image"), ("image", "text")):
        for name in settings[f"{side}_kernels"]:
            entry = next((e for e in record["dev_candidates"].values()
                          if e[side] == {name: 1} and e[other] == {reference[other]: 1}), None)
            if entry is not None:
                out.append(f"`{name}` {entry['dev_objective']:.1f}")
    return out


def strongest_notes(results: ResultsFiles) -> str:
    """The dev curve of the greedy selection, each base kernel alone, the encoders not measured and the costs."""
    record = results["strongest"]

    def curve(name: str) -> str:
        return "; ".join(f"{combination(step)} {step['dev_objective']:.1f}" if step["added"] is None
                         else f"+ {step['added']} {step['dev_objective']:.1f}" for step in record[name])
    cost = record["cost"]
    machine = record["machine"]
    level = record["systems"]["mkl"]["results"]["karpathy"]["ci_settings"]["confidence"]
    settings = record["settings"]
    subset = settings["select_train_images"] < settings["train_images"]
    trained = (f"the first {settings['train_images']:,} of the {record['train_split_images']:,} training images"
               if settings["train_images"] < record["train_split_images"] else
               f"the {settings['train_images']:,} training images")
    where = (f"on the first {settings['select_train_images']:,} of {trained}, the chosen systems then fitted on "
             "all with their (κ, p, n) chosen again on dev" if subset else f"on {trained}")
    selected, tested = record["dev_curve"][-1], record["systems"]["mkl"]
    added = cost.get("selection_added", [])
    uncosted = len(record["dev_candidates"]) - cost["selection"]["candidates"] - sum(r["candidates"] for r in added)
    full = {name: entry["gram_s"] for name, entry in record["base_kernels"].items() if "gram_s" in entry}
    slowest = sorted(full.items(), key=lambda item: -item[1])[:2]
    # A later selection (--dev-only) whose choice is not fitted and tested yet: the rows are the earlier one's.
    pending = ("" if (selected["text"], selected["image"]) == (tested["text"], tested["image"]) else
               f" That selection now ends at {combination(selected)}, not yet fitted on all the training images "
               f"nor tested: the rows above show the system it chose before, {combination(tested)} (dev objective "
               + next(f"{e['dev_objective']:.1f}" for e in record["dev_candidates"].values()
                      if (e["text"], e["image"]) == (tested["text"], tested["image"])) + ").")
    return paragraph(
        f"Each measured figure with its {level:.0%} percentile bootstrap interval (search queries resampled by "
        "image); † marks a figure whose paired test against the best single-kernel pair "
        f"(McNemar for R@K, paired randomisation for the median rank) gives p < {SIGNIFICANCE:g}. The dev curve "
        "of the greedy forward selection (R@1 + R@5 + R@10 of both tasks, summed over both protocols' dev "
        f"views), {where}: {curve('dev_curve')}.{pending}"
        + (f" Without the trained towers: {curve('dev_curve_without_towers')}." if "dev_curve_without_towers" in record
           else "")
        + f" The selection measured {len(record['dev_candidates'])} combinations, each an exact KCCA fit and its "
        f"dev grid: its first run ({cost['selection']['candidates']} of them, and the base kernels' Gram matrices) took "
        f"{duration(cost['selection']['wall_s'])} and {cost['selection']['peak_gib']:.1f} GiB at its peak"
        + "".join(f", a later run adding {run['candidates']} combinations over new base kernels "
                  f"{duration(run['wall_s'])} and {run['peak_gib']:.1f} GiB" for run in added)
        + (f", {uncosted} more measured by a run stopped before it recorded its cost" if uncosted else "")
        + f"; the final fit of the selected system{' and its dev grid' if subset else ''} "
        f"{duration(cost['final_fit']['wall_s'])} and {cost['final_fit']['peak_gib']:.1f} GiB, "
        f"on {machine['cpus']} cores (`benchmarks/results/strongest.json`), after the Gram matrices on all "
        f"{settings['train_images']:,} training images of the base kernels the tested systems sum, "
        f"{duration(sum(full.values()))} ({', '.join(f'`{n}` {duration(t)}' for n, t in slowest)}, the longest). "
        "Each base kernel alone, beside the "
        f"other view's `{record['settings']['text_kernels'][0]}` or `{record['settings']['image_kernels'][0]}` "
        f"(dev objective): {'; '.join(_alone(record))}."
        + "".join(f" The towers of the trained `{system}` ({entry['epochs']} epochs, {duration(entry['train_s'])} of "
                  f"training by `benchmarks/neural.py`) are base kernels: "
                  f"{', '.join(f'`{n}`' for names in entry['kernels'].values() for n in names)}."
                  for system, entry in record.get("towers", {}).items())
        + "".join(f" Not measured: the {entry['what']} ({entry['reason']})."
                  for entry in record.get("not_measured", {}).values()))


#: An epoch this many times a model's median epoch was held up, not slow (the note under the table).
OUTLYING_EPOCH = 3


def trainable_models(results: ResultsFiles) -> str:
    """What each trained model cost and its text embeddings' vSTS correlation."""
    rows, stopped_early, outliers = [], [], []
    for name in ("neural", "neural_gpu"):
        tasks = _tasks(results, name)
        for (system, protocol), result in _neural(results, name).items():
            params = result["params"]
            if protocol != "karpathy" or "training_cost" not in params:
                continue
            cost = params["training_cost"]
            history = params["history"]
            memory = (f"{cost['peak_gpu_gib']:.2f} GiB GPU" if cost["peak_gpu_gib"] is not None
                      else "not recorded" if cost["peak_rss_gib"] is None else f"{cost['peak_rss_gib']:.1f} GiB")
            vsts = tasks.get((system, "vsts"), {}).get("pearson_text_cosine_test")
            if params["stopped_by"] == "time budget":
                stopped_early.append(f"`{system}` after {params['epochs']} of its {params['max_epochs']} epochs")
            median = statistics.median(h["seconds"] for h in history)
            slow = [h for h in history if h["seconds"] > OUTLYING_EPOCH * median]
            if slow:
                outliers.append(f"`{system}` epoch{'s' if len(slow) > 1 else ''} "
                                f"{sentence_list([str(h['epoch']) for h in slow])} "
                                f"({duration(sum(h['seconds'] for h in slow))}; median epoch {median:.0f} s)")
            rows.append((f"`{system}`", _trained_on(result), f"{params['epochs']} ({params['stopped_by']})",
                         str(params["best_epoch"]), f"{median:.0f} s",
                         duration(params["train_s"]), memory,
                         f"{next(h['rsum'] for h in history if h['epoch'] == params['best_epoch']):.1f}", "" if vsts is None else f"{vsts:.2f}"))
    return paragraph(
        "Training of each model (Flickr8K train, snapshots chosen on dev): epochs run (why it stopped), the "
        "best dev epoch, the median seconds per epoch, training time, peak memory (resident set on the CPU, "
        "allocated on the GPU), the dev R@1+R@5+R@10 of both tasks at the best epoch, and vSTS test Pearson r "
        "of the cosine of the model's sentence vectors (no vSTS training). The one-thread CPU models trained "
        "three at once on the 2 CPU cores, the two-thread ones mostly alone; on the GPU machine up to seven trainings "
        "shared one GPU (eleven, each on one torch thread of 16 cores, when the VSE and Rei models of "
        "`neural_gpu.json` were re-run with intervals on their task figures). Beside others, the seconds per "
        "epoch are upper bounds."
        + (" Peak memory was not yet recorded in the checkpoints some models were loaded from (it is now, "
           "per epoch)." if any("not recorded" in row for row in rows) else "")
        + (f" Stopped by the time budget of a GPU run (`--train-seconds`): {sentence_list(stopped_early)}."
           if stopped_early else "")
        + (f" Epochs held up (paused, or the machine crowded) count in the training time: {sentence_list(outliers)}."
           if outliers else "")
    ) + "\n\n" + table(["model", "trained on", "epochs", "best", "per epoch", "training", "peak memory",
                         "dev R-sum", "vSTS r"], rows)


#: The Rei ablation, in the paper's order (its Table 3), and its CCA reference.
REI_STEPS = (("baseline: cosine, hinge loss", "rei_baseline"), ("+ dropout", "rei_dropout"),
             ("+ gating", "rei_gating"), ("+ softmax loss (full model)", "rei"))
#: The ablation's runs: the configuration, where the word embeddings start, and the suffix of the
#: systems' names (the `paper` configuration; the earlier runs that learnt the embeddings from
#: random weights for 20 epochs at most, named after those settings).
REI_RUNS = (("`cpu`", "MiniLM word vectors", ""), ("`paper`", "MiniLM word vectors", "_paper"),
            ("`cpu`, 20 epochs at most", "random", "_max_epochs20_word_vectorsNone"))


def rei_ablation(results: ResultsFiles) -> str:
    files = ("neural", "neural_gpu")
    tasks = {name: _tasks(results, name) for name in files}
    retrieval = {name: _neural(results, name) for name in files}

    def holding(system):  # the file with the system's task results: with intervals first, then this machine's
        found = [n for n in files if (system, "forced_choice") in tasks[n]]
        return next((n for n in found if "ci" in tasks[n][system, "forced_choice"]), found[0])

    p_at = next(k for k in tasks[holding(BRIDGES[0])][BRIDGES[0], "off_topic"] if k.startswith("P@"))

    def row(label, config, embeddings, system):
        name = holding(system)
        choice, off = tasks[name][system, "forced_choice"], tasks[name][system, "off_topic"]
        if system in BRIDGES:
            trained = epochs = "—"
        else:
            result = retrieval[name][system, "karpathy"]
            trained, params = _trained_on(result), result["params"]
            epochs = f"{params['epochs']} ({params['best_epoch']})"
        return (label, config, embeddings, trained, epochs, task_figure(choice, "accuracy"), task_figure(off, "AP"),
                task_figure(off, p_at), task_figure(off, "accuracy"))

    rows = [row(label, config, embeddings, system + suffix)
            for config, embeddings, suffix in REI_RUNS for label, system in REI_STEPS]
    rows.append(row("linear CCA scorer (`cca_minilm_efficientnet`)", "—", "—", BRIDGES[0]))
    configs = TRAINABLE["rei"].configs
    return paragraph(
        "Rei's ablation on the Flickr8K test split: 1-of-6 forced choice (the caption of "
        "an image among five of other images) and off-topic detection (average precision, "
        f"{p_at} and leave-one-out accuracy), in the `cpu` configuration (dev patience "
        f"{configs['cpu']['patience']}, {configs['cpu']['max_epochs']} epochs at most) and the `paper` one "
        f"(patience {configs['paper']['patience']}, {configs['paper']['max_epochs']} at most; each run trained "
        "on from where its `cpu` run stopped), "
        "with the word embeddings started from the configuration's word vectors and, in earlier runs of at "
        "most 20 epochs, from random weights (`rei_max_epochs20_word_vectorsNone`, ...), beside the linear CCA "
        "bridge scoring the same pairs (`benchmarks/results/neural.json`, `neural_gpu.json`); epochs run "
        "(the best on dev, whose weights score); 95 % bootstrap intervals (the test's pairs resampled) where "
        "the record has them (runs made before the benchmark recorded them have none):"
    ) + "\n\n" + table(["step", "configuration", "word embeddings", "trained on", "epochs (best)",
                         "forced choice accuracy", "off-topic AP", f"off-topic {p_at}", "off-topic accuracy"], rows)


# ----------------------------------------------------------------- solver precision and BLAS
def solve_dtype(results: ResultsFiles) -> str:
    record = results["kcca_solve_dtype"]
    per_reg = record["per_reg"]
    return paragraph(
        "`KCCA(solve_dtype=np.float32)` (the ranker's default) finds each κ's canonical subspace in single "
        f"precision and computes the pairs in double precision: {span([r['speedup'] for r in per_reg])}× "
        f"faster per κ at n = {record['n']:,}, correlations within "
        f"{max(r['max_abs_correlation_diff'] for r in per_reg):.0e} of double precision "
        "(`benchmarks/kcca_solve_dtype.py`)."
    )


def _table_changes(current: Mapping, earlier: Mapping) -> dict:
    """What differs between two runs of ``hodosh_table.py``: R@K, median ranks, selections."""
    recalls = [(round(c["result"][t][k], 1), round(earlier[s]["result"][t][k], 1))
               for s, c in current.items() for t in TASKS for k in RECALLS]
    medians = [(c["result"][t]["median_rank"], earlier[s]["result"][t]["median_rank"])
               for s, c in current.items() for t in TASKS]
    selections = [(c["selected"], earlier[s]["selected"]) for s, c in current.items() if c["selected"]]
    changed = [abs(a - b) for a, b in recalls if a != b]
    changed_medians = [abs(a - b) for a, b in medians if a != b]
    return {
        "recalls": len(recalls), "recalls_changed": len(changed), "recall_step": max(changed, default=0.0),
        "medians": len(medians), "medians_changed": len(changed_medians),
        "median_step": max(changed_medians, default=0.0),
        "systems": len(selections),
        "reordered": sum(a != b for a, b in selections),
        "other_models": sum(sorted(map(tuple, a[t])) != sorted(map(tuple, b[t]))
                            for a, b in selections for t in TASKS),
    }


def blas(results: ResultsFiles) -> str:
    record = results["blas_kernels"]
    stages = record["speedup_per_stage"]
    own = record["configurations"]["chosen by OpenBLAS"]["blas_architectures"]
    by_kernel: dict[str, list[str]] = {}
    for entry in own:
        version, kernel = entry.split(": ")
        by_kernel.setdefault(kernel, []).append(version)
    choice = "; ".join(f"`{kernel}` in {sentence_list(versions)}" for kernel, versions in by_kernel.items())
    current, earlier = results["hodosh_table_blas_native"], results["hodosh_table_blas_haswell"]
    if "blas" in earlier["machine"]:
        raise ValueError("hodosh_table_blas_haswell.json records its BLAS kernel now; describe it from the record")
    changes = _table_changes(current["systems"], earlier["systems"])
    tri_sem = [figures(run["systems"]["tri_sem"]["result"][t]) for run in (current, earlier) for t in TASKS]
    same_tri_sem = tri_sem[:2] == tri_sem[2:]
    if changes["other_models"]:
        selection = f"{changes['other_models']} selections of a task differ in their models"
    else:
        selection = (f"every KCCA system selected the same models on dev ({changes['reordered']} of the "
                     f"{changes['systems']} in another order)")
    two_places = "{:.2f}".format
    return paragraph(
        "Some shared machines set `OPENBLAS_CORETYPE=Haswell` to protect old OpenBLAS builds: on an AVX-512 "
        f"CPU that forces AVX2 kernels. Side by side on our {record['machine']['cpus']}-core machine, "
        f"n = {record['n']:,} (`python benchmarks/blas_kernels.py`): OpenBLAS's own choice ({choice}) runs "
        f"those stages {record['speedup_total']:.2f}× as fast as forced `Haswell` (`syevd` "
        f"{span([stages['syevd_image'], stages['syevd_text']], two_places)}×, the cross product "
        f"{stages['cross_product']:.2f}×, the κ solves "
        f"{span([v for k, v in stages.items() if k.startswith('solve_')], two_places)}×), with canonical "
        f"correlations within {record['max_abs_correlation_diff']:.0e}. Codebooks and pyramid histograms came "
        "out bit-identical under both. The kernels round differently, so near-ties on dev can fall the other "
        "way: two earlier runs of the table on machines of this kind, under OpenBLAS's own kernels "
        "(`hodosh_table_blas_native.json`) and under forced `Haswell` (`hodosh_table_blas_haswell.json`, from "
        "before the kernel was recorded), differ in "
        f"{changes['recalls_changed']} of their {changes['recalls']} R@K figures, by at most "
        f"{changes['recall_step']:.1f}, and in {changes['medians_changed']} of their {changes['medians']} "
        f"median ranks, by at most {changes['median_step']:g}; {selection}; Tri5Sem's hodosh R@K and median "
        f"ranks {'are the same' if same_tri_sem else 'differ'}."
    )


# ----------------------------------------------------------------- report and compare
def report(results: ResultsFiles) -> str:
    """Build time and size of the HTML report of the Flickr8K table, and ``compare`` against its stored tests."""
    record = results["report"]
    agreement = record["stored_agreement"]
    def reproduced(count: int, difference: float, what: str) -> str:
        return (f"all {count} stored {what} exactly" if difference == 0
                else f"the {count} stored {what} to within {difference:.0e}")
    return paragraph(
        f"For the runs of the Flickr8K table (`benchmarks/results/hodosh_table.json`: {record['n_runs']} runs with "
        f"per-query ranks; `python benchmarks/report.py`), the report takes {record['build_cpu_s']:.0f} s of CPU to build "
        f"({record['build_s']:.0f} s wall on this machine's {record['machine']['cpus']} shared cores; most of it "
        f"the randomisation tests) and {record['report_dir_bytes'] / 1e6:.1f} MB on disk "
        f"({record['report_html_bytes'] / 1e6:.1f} MB for the page); `compare` on the stored ranks reproduces "
        f"{reproduced(agreement['p_values_compared'], agreement['max_abs_p_difference'], 'p-values against Tri5Sem')} "
        f"and {reproduced(agreement['intervals_compared'], agreement['max_abs_interval_difference'], 'intervals')}."
    )


# ----------------------------------------------------------------- reliability
def reliability(results: ResultsFiles) -> str:
    """The reliability benchmark's verdicts, interrupt latency, concurrency and damaged-cache counts."""
    record = results["reliability"]
    bad, fuzz = record["bad_inputs"]["verdicts"], record["fuzz"]
    stops, damaged = record["interrupts"], record["damaged_cache"]
    runs = record["concurrency"]["runs"]
    concurrent = " and ".join(f"{row['identical_to_alone']} of {len(row['configurations'])}"
                              for row in runs.values())
    return paragraph(
        f"Of {sum(bad.values())} broken inputs given to the command line "
        f"({', '.join(record['bad_inputs']['by_category'])}), {bad['graceful']} runs finished "
        f"(with a warning), {bad['clear']} stopped with a one-line error and a documented exit code, and "
        f"{bad['failed']} failed; {fuzz['cases']} fuzzed data files gave {fuzz['failed']} failures. "
        f"Ctrl-C or SIGTERM stopped a run in {stops['latency_median_s'] * 1000:.0f} ms (median; at most "
        f"{stops['latency_max_s'] * 1000:.0f} ms) over {stops['n_interrupted']} runs interrupted in "
        f"{len(stops['stages_interrupted'])} different stages, and the run resumed from what they kept gave "
        f"{'the same' if stops['resume_identical'] else 'different'} figures as an uninterrupted one. "
        f"Concurrent runs on one cache ({' and '.join(runs)}): {concurrent} gave the figures they give alone. "
        f"Of {damaged['damaged']} damaged cache entries, {damaged['detected']} were detected and "
        f"{damaged['recomputed']} recomputed (`python benchmarks/reliability.py`, "
        f"{record['machine']['cpus']} cores)."
    )


# ----------------------------------------------------------------- offline image encoders
def image_encoders(results: ResultsFiles) -> str:
    """Dev linear CCA against MiniLM captions for each offline image encoder, with its cost."""
    record = results["image_encoders"]
    dev = {(r["system"], r["protocol"]): r for r in record["dev_results"]}
    rows = []
    for encoder in record["encoders"]:
        cells = [figures(dev[(f"cca_minilm_{encoder['encoder']}", protocol)][task])
                 for protocol in PROTOCOLS for task in TASKS]
        rows.append([f"`{encoder['encoder']}` ({encoder['dim']}-d)", *cells,
                     f"{encoder['images_per_s']:.1f}", f"{encoder['weights_mb']:.0f} MB"])
    header = ["image encoder", *(f"{protocol} {task}" for protocol in PROTOCOLS for task in TASKS),
              f"images/s ({record['machine']['cpus']} threads)", "weights"]
    return (paragraph(
        f"Flickr8K dev, linear CCA against MiniLM captions trained on the first {record['n_train_images']:,} "
        "training images (regulariser chosen on dev), R@1 / R@5 / R@10 (median rank); images per second "
        "on this machine's shared cores (`benchmarks/results/image_encoders.json`):")
            + "\n\n" + table(header, rows))


# ----------------------------------------------------------------- every offline encoder
def offline_encoders(results: ResultsFiles) -> str:
    """Each system over the offline encoders' features through the command line, beside Tri5Sem."""
    record = results["offline_encoders"]
    if record["encoder_cosine"]["joint_encoders"]:
        raise ValueError("offline_encoders.json: an offline encoder is joint now; give its own cosine a row")
    tri_sem = {r["protocol"]: r for r in record["reference"]["results"]}
    stored = {"hodosh": _hodosh_result(results, "tri_sem"),
              "karpathy": results["hodosh_table"]["karpathy"]["tri_sem"]["result"]}
    if any(figures(tri_sem[p][t]) != figures(stored[p][t]) for p in PROTOCOLS for t in TASKS):
        raise ValueError("offline_encoders.json: its Tri5Sem is not the one hodosh_table.json stores now; "
                         "re-run benchmarks/offline_encoders.py")
    rows = []
    for system in record["systems"]:
        found = {r["protocol"]: r for r in system["results"]}
        rows.append([f"`--method {system['method']}`, `{system['text_encoder']}` × `{system['image_encoder']}`",
                     *(figures(found[p][t]) for p in PROTOCOLS for t in TASKS), duration(system["wall_s"])])
    rows.append(["KCCA Tri5Sem (`tri_sem`, the stored run above)", *(figures(tri_sem[p][t]) for p in PROTOCOLS
                                                                     for t in TASKS), ""])
    header = ["system", *(f"{p} {t}" for p in PROTOCOLS for t in TASKS),
              f"wall time ({record['machine']['cpus']} shared cores)"]
    embed = max(wall_seconds(r["timings_s"]["embed"]) for system in record["systems"] for r in system["results"])
    return (paragraph(
        "Every encoder that runs offline, as `python -m kcca_desc.fit` runs it with its default settings "
        "(their regulariser, weight power and RBF bandwidth are those dev chose for MiniLM × "
        "EfficientNet-Lite0 in `neural.json`, and serve the ViT features unchanged; the features are read "
        "from the cache, at most "
        f"{duration(embed)} of a fit), on the "
        "Flickr8K test split, R@1 / R@5 / R@10 (median rank), beside Tri5Sem (`benchmarks/offline_encoders.py`); "
        "no offline encoder embeds both captions and images, so none has an encoder-cosine row "
        "(`--method encoder`):")
            + "\n\n" + table(header, rows))


def cupy(results: ResultsFiles) -> str:
    record = results["image_kernels_gpu"]
    gpu, inputs = record["cupy"], record["inputs"]
    parts = [f"the {n:,} × {m:,} {label} in {gpu[key + '_cupy']['seconds']:.2f} s against "
             f"{record[key + '_numba']['seconds']:.2f} s ({gpu[key + '_cupy']['speedup_vs_numba']:.1f}×)"
             for key, label, (n, m) in (("gram", "Gram", record["gram_numba"]["shape"]),
                                        ("cross", "cross kernel", record["cross_numba"]["shape"]))]
    difference = max(gpu[k]["max_abs_difference_to_numba"] for k in ("gram_cupy", "cross_cupy"))
    return paragraph(
        f"Measured on one {gpu['device']} (`benchmarks/image_kernels.py --cupy`, "
        "`benchmarks/results/image_kernels_gpu.json`): on synthetic spatial pyramids of "
        f"{inputs['dims']:,} dimensions, CuPy computes {sentence_list(parts)} with Numba on "
        f"{record['machine']['numba_threads']} threads of the same machine (best of three, transfers "
        f"included); the two agree within {difference:.0e}."
    )


# ----------------------------------------------------------------- COCO size and Dask
def _gib(value: float) -> str:
    return f"{value:.1f} GiB"


def _section_machine(record: dict, section: str) -> dict:
    """The machine a section of ``scale.json`` ran on (sections may run separately: ``--merge``)."""
    return record.get("machines", {}).get(section, record["machine"])


def _dev_r10(row: dict) -> str:
    return f"{recall(row['dev']['annotation']['R@10'])} / {recall(row['dev']['search']['R@10'])}"


def _peak_split(coco: dict) -> str:
    """Where the largest of the recorded peaks was resident (records from before the split have none)."""
    splits = [coco.get("fit_peak_split_gib")] + [p.get("score_peak_split_gib") for p in coco["pools"].values()]
    peaks = [coco["fit_peak_gib"]] + [p["score_peak_gib"] for p in coco["pools"].values()]
    top = max(range(len(peaks)), key=peaks.__getitem__)
    split = splits[top]
    if split is None:
        return ""
    stage = "fit" if top == 0 else "scoring"
    return (f" (in the {stage}: {_gib(split['this_process'])} in the client process, "
            f"{' and '.join(_gib(g) for g in split['descendants'] if g >= 0.05)} in the others)")


def _coco_scale(record: dict) -> str:
    coco = record["coco"]
    splits = coco["splits"]
    stages = ", ".join(f"{name.replace('_', ' ')} {duration(seconds)}" for name, seconds in coco["stage_s"].items())
    pools = {name: entry.get("fold_mean", entry["folds"][0]) for name, entry in coco["pools"].items()}
    rows = [[f"COCO {name.upper()}" + (" (mean of 5 folds)" if "fold_mean" in coco["pools"][name] else ""),
             *(figures(pools[name][task]) for task in TASKS)] for name in pools]
    return (paragraph(
        f"The COCO-sized synthetic run (`python benchmarks/scale.py --sections coco`, "
        f"`benchmarks/results/scale.json`): {splits['train']:,} / {splits['dev']:,} / {splits['test']:,} "
        f"images with five captions each and a Zipfian vocabulary of {coco['vocabulary']:,} word types, "
        f"through the `{coco['text_kernel']}` system at rank {coco['rank']:,} on a local Dask cluster of "
        f"{coco['workers']} single-threaded workers ({_section_machine(record, 'coco')['cpus']} cores), "
        f"took {duration(coco['wall_s'])} end to end with a peak of {_gib(coco['peak_gib'])} "
        f"({coco['peak_gib'] * 2**30 / 1e9:.1f} GB) resident in all "
        f"processes{_peak_split(coco)} (fit {duration(coco['fit_wall_s'])}: {stages}; scoring both pools "
        f"{duration(sum(p['score_wall_s'] for p in coco['pools'].values()))}). Its figures only show that "
        "the pipeline ran end to end (the data are synthetic):")
            + "\n\n" + table(["pool", *TASKS], rows))


def _scale_series(record: dict) -> str:
    series = record["series"]
    rows = [[f"{row['n_pairs']:,}", duration(row["wall_s"]), _gib(row["peak_gib"]), _dev_r10(row)]
            for row in series["rows"]]
    return (paragraph(
        f"The landmark KCCA (fit plus the projection of a {series['rows'][0]['dev']['annotation']['n_queries']:,}-"
        f"image dev pool) at rank {record['rank']:,} on "
        "Dask, by training pairs (caption level, synthetic topic-structured kernels): time grows as "
        f"n^{series['fitted_time_exponent']:.2f} (a power law fitted to the series):")
            + "\n\n" + table(["training pairs", "wall time", "peak memory", "dev R@10 annotation / search"], rows)
            + _series_memory(series))


def _series_memory(series: dict) -> str:
    """What the series' peaks are made of: the client's and the workers' parts, smallest and largest run."""
    first, largest = series["rows"][0], series["rows"][-1]

    def parts(row):  # the client, then the workers (processes of under 0.05 GiB are not workers)
        split = row["peak_split_gib"]
        return split["this_process"], sorted((g for g in split["descendants"] if g >= 0.05), reverse=True)

    (client_first, workers_first), (client, workers) = parts(first), parts(largest)
    growth = largest["peak_gib"] / first["peak_gib"]
    return "\n\n" + paragraph(
        f"From {first['n_pairs']:,} to {largest['n_pairs']:,} pairs ({largest['n_pairs'] / first['n_pairs']:.0f} "
        f"times as many) the peak grew {growth:.2f}-fold, from {_gib(first['peak_gib'])} to "
        f"{_gib(largest['peak_gib'])}: the client {_gib(client_first)} → {_gib(client)}, the workers "
        f"{' and '.join(_gib(g) for g in workers_first)} → {' and '.join(_gib(g) for g in workers)}, over the "
        f"{_gib(series['idle_cluster_gib'])} that the idle cluster's processes hold. The series stores its "
        "training items in Zarr first, as a run over stored features does, and every worker reads the rows of "
        "its chunks, so no process holds the inputs (only the index from captions to images, "
        f"{largest['input_gib'] * 2**10:.1f} MiB at {largest['n_pairs']:,} pairs). The chunks' r × r sums "
        f"({largest['partial_sum_gib'] * 2**10:.0f} MiB each at rank {largest['rank']:,}) are added to one "
        "running sum in chunk order, at most two chunks per worker thread waiting to be added, so their number "
        f"does not grow with n ({largest['n_chunks']:,} chunks at {largest['n_pairs']:,} pairs, "
        f"{first['n_chunks']:,} at {first['n_pairs']:,}); the fixed order is what keeps the Dask path's result "
        "equal to the single-process path's. What growth remains is the client's choice of landmarks, whose "
        "kernel is over the distinct items of a sample of a fixed multiple of the rank rows: their number "
        "grows with n towards the sample's size, and stops there (`docs/design.md`, *Out of core*).")


def _scale_run(row: dict, speedup: float | None = None) -> str:
    """``1 min 2 s (1.2×, 3.4 GiB, dev R@10 a / s)`` of one timed fit of ``scale.json``."""
    extra = "" if speedup is None else f"{speedup:.2f}×, "
    return f"{duration(row['wall_s'])} ({extra}{_gib(row['peak_gib'])}, dev R@10 {_dev_r10(row)})"


def _r10_difference(tasks: dict) -> str:
    """``-1.2 (-4.7 to +2.3) / -1.1 (-2.7 to +0.6)``: a dev R@10 difference of ``scale.json`` per task."""
    return " / ".join(f"{d['difference']:+.1f} ({d['ci95'][0]:+.1f} to {d['ci95'][1]:+.1f})"
                      for d in (tasks["annotation"], tasks["search"]))


def _scale_comparisons(record: dict) -> str:
    parts = []
    if "flickr8k_sized" in record:
        f8k = record["flickr8k_sized"]
        parts.append(
            f"At {f8k['in_memory']['n_pairs']:,} caption-level pairs and rank {record['rank']:,}, the in-memory "
            f"low-rank solver took {_scale_run(f8k['in_memory'])}, the landmark path in one process "
            f"{_scale_run(f8k['local'])} and on two Dask workers {_scale_run(f8k['dask'])}.")
        if "dev_r10_minus_in_memory" in f8k:
            differences = f8k["dev_r10_minus_in_memory"]
            parts.append(
                "Dev R@10 minus the in-memory solver's, annotation / search, with 95% paired bootstrap "
                "intervals (search resampled by image): landmark path on Dask "
                f"{_r10_difference(differences['dask'])}; with its pivots chosen over all rows instead of a "
                f"sample (the in-memory solver's pivots) {_r10_difference(differences['local_all_pivots'])}, in "
                f"{duration(f8k['local_all_pivots']['wall_s'])} in one process. With those pivots the two reduce to "
                "nearly the same problem (top canonical correlations within "
                f"{f8k['all_pivots_correlation_difference']:.0e}) and differ in how new items are projected: the "
                "in-memory solver uses their kernel rows against every training item, the landmark path against "
                "the landmarks only (the Nyström extension, which keeps scoring O(rank) per item).")
    if "engines" in record:
        engines = record["engines"]
        parts.append(
            f"At {engines['one_process']['n_pairs']:,} pairs, one process took {_scale_run(engines['one_process'])}; "
            "two single-threaded Dask workers as processes "
            f"{_scale_run(engines['dask_2_processes'], engines['dask_2_processes_speedup'])} and as threads "
            f"{_scale_run(engines['dask_2_threads'], engines['dask_2_threads_speedup'])}.")
    if "landmark_choice" in record:
        rows = record["landmark_choice"]
        parts.append(
            f"Landmarks at equal rank ({rows[0]['rank']:,}, {rows[0]['n_pairs']:,} pairs), dev R@10: "
            + "; ".join(f"{row['landmarks']} {_dev_r10(row)}" for row in rows) + ".")
    return paragraph(" ".join(parts))


def _scale_multikernel(record: dict) -> str:
    """Multiple-kernel KCCA through cached landmark columns: the columns once, every weight setting after."""
    mk = record["multikernel"]
    settings = mk["settings"]
    cached = sum(row["wall_s"] for row in settings.values())
    kernels = "; ".join(f"{side}: {' and '.join(names)}" for side, names in mk["base_kernels"].items())
    return paragraph(
        "Multiple-kernel KCCA through cached landmark columns (`python benchmarks/scale.py --sections multikernel`, "
        f"the path of `--method mkl_scalable`) at {mk['n_items']:,} training items, two base kernels per view "
        f"({kernels}), rank {mk['rank']:,}: the exact solver would hold {mk['exact_gib_needed']:.0f} GiB, this path "
        f"peaked at {_gib(mk['peak_gib'])}. The base kernels' columns against the landmarks (and the dev items') "
        f"took {duration(mk['columns_s'])}, once; their centred inner products, for the alignment weights, "
        f"{duration(mk['inner_products_s'])}; and the {len(settings)} weight settings {duration(cached)} in all "
        f"({duration(cached / len(settings))} each: a landmark fit on summed columns and the dev projection), "
        f"where the uniform setting computing its kernel values itself took "
        f"{duration(mk['uncached_uniform']['wall_s'])}. Dev R@10, annotation / search, of "
        f"{mk['n_dev_images']:,} dev images: " + "; ".join(f"{name} {_dev_r10(row)}" for name, row in settings.items())
        + f"; the uniform sum with landmarks chosen on it {_dev_r10(mk['uncached_uniform'])}.")


#: Images of MS-COCO's Karpathy split (train + restval + val + test), for what feature extraction costs.
COCO_IMAGES = 123_287


def _real_images_cost(results: ResultsFiles) -> str:
    """What the real COCO images' features cost, from the measured per-image times on Flickr8K."""
    record = results["image_features"]
    per_image_ms = sum(record["per_image_ms_single_thread"].values())
    return paragraph(
        "With real images, feature extraction comes first: the classical features take "
        f"{per_image_ms:.0f} ms per image on one core at the 224 × 224 pixels of our Flickr8K copy "
        "(`benchmarks/results/image_features.json`), so COCO's "
        f"{COCO_IMAGES:,} images would take about {duration(per_image_ms * COCO_IMAGES / 1000)} of one core "
        "at that size; the time grows with the pixels (COCO's are about 640 × 480, six times as many), and "
        "the workers share it. The features are cached in chunks, so an interrupted extraction resumes.")


def scale(results: ResultsFiles) -> str:
    """The large-n solver: the COCO-sized run, the scaling series, the side-by-side comparisons and
    what real COCO images add."""
    record = results["scale"]
    parts = [builder(record) for key, builder in (("coco", _coco_scale), ("series", _scale_series))
             if key in record]
    if any(key in record for key in ("flickr8k_sized", "engines", "landmark_choice")):
        parts.append(_scale_comparisons(record))
    if "multikernel" in record:
        parts.append(_scale_multikernel(record))
    return "\n\n".join([*parts, _real_images_cost(results)])


#: What each heavy stage of ``stage_floors.json`` is, in the words of the page.
FLOOR_STAGES = {
    "image_gram": "image Gram (histogram intersection)",
    "text_gram": "text Gram",
    "eigendecompositions": "two eigendecompositions (`syevd`)",
    "cross_product": "cross product Ux'Uy",
    "canonical_solve_per_reg": "one κ's canonical solve",
    "dev_scoring": "dev scoring of the grid",
}


def stage_floors(results: ResultsFiles) -> str:
    """The hardware's rates, and each heavy stage's floor against its measured time."""
    record = results["stage_floors"]
    rates, sizes, machine = record["rates"], record["sizes"], record["machine"]
    load = machine["load_average_at_start"][0]

    def seconds(value: float) -> str:
        return f"{value:.2f}" if value < 10 else f"{value:.0f}"

    def ratio(value: float) -> str:
        return f"{value:.1f}×" if value < 10 else f"{value:.0f}×"

    rows = []
    for name, label in FLOOR_STAGES.items():
        stage = record["stages"][name]
        measured = stage["measured_s"]
        rows.append([label, f"{stage['flops'] / 1e9:,.0f}", f"{stage['bytes'] / 1e9:.2f}", stage["bound"],
                     seconds(stage["floor_s"]),
                     "" if measured is None else seconds(measured),
                     "" if measured is None else ratio(stage["measured_over_floor"])])
    text = [paragraph(
        f"`python benchmarks/stage_floors.py` on our {machine['cpus']}-core machine, {record['threads']} BLAS "
        f"threads (load average {load:.1f} at the start: it shared its cores, so the rates are what it got, "
        f"not the hardware's peak): `dgemm` {rates['dgemm_gflops']:.0f} GFLOP/s, `sgemm` "
        f"{rates['sgemm_gflops']:.0f} GFLOP/s, `syevd` at n = {rates['syevd_n']:,} in {rates['syevd_s']:.1f} s "
        f"({rates['syevd_gflops']:.0f} GFLOP/s by the 10/3 n³ flop model: the tridiagonal reduction is half "
        f"matrix-vector work, bound by memory), copy {rates['copy_gbps']:.1f} GB/s and sum "
        f"{rates['sum_gbps']:.1f} GB/s (one thread). Floors of one KCCA system at Flickr8K size "
        f"(n = {sizes['n_train']:,} training images, a dev pool of {sizes['n_dev']:,} images and captions, "
        f"the grid of {len(record['grid']['n_components'])} n × {len(record['grid']['regs'])} κ): flops at "
        "the BLAS rate or bytes at the copy bandwidth, whichever is larger, against the stage run alone "
        "with the toolkit's functions on inputs of that size (the text Gram: from the run below). The rates "
        "were measured first and the stages after them, under a load that changed (a stage "
        "measured below its floor ran when the load had fallen), so the ratios say which stages are far from "
        "their floor, not by exactly how much:"),
        "", table(["stage", "GFLOP", "GB", "bound", "floor s", "measured s", "measured / floor"], rows)]
    run = record.get("run")
    if run:
        parts = [f"{name} {seconds(stage['measured_s'])} s against a floor of {seconds(stage['floor_s'])} s "
                 f"({ratio(stage['measured_over_floor'])})" for name, stage in run["stages"].items()]
        cached = f" ({sentence_list(run['cached'])} read from the cache)" if run["cached"] else ""
        text += ["", paragraph(
            f"In a whole run, `{run['command']}`{cached}, made on the same machine under other work too, the "
            "stages of its profile against the sums of their parts' floors: " + sentence_list(parts) + ".")]
    return "\n".join(text)


#: Every region of figures, by name, and the function that writes it from the results.
REGIONS: dict[str, Callable[[ResultsFiles], str]] = {
    "headline": headline,
    "hodosh_setup": hodosh_setup,
    "hodosh_table": hodosh_table,
    "hodosh_notes": hodosh_notes,
    "hodosh_time": hodosh_time,
    "neural_table": neural_table,
    "neural_notes": neural_notes,
    "trainable_models": trainable_models,
    "vse_hardest_training": vse_hardest_training,
    "rei_ablation": rei_ablation,
    "solve_dtype": solve_dtype,
    "blas": blas,
    "report": report,
    "reliability": reliability,
    "image_encoders": image_encoders,
    "offline_encoders": offline_encoders,
    "cupy": cupy,
    "scale": scale,
    "stage_floors": stage_floors,
}

#: The pages that carry figures (paths from the repository root) and the regions each holds; every
#: region is on exactly one page.
PAGES: dict[str, tuple[str, ...]] = {
    "README.md": ("headline",),
    "docs/user_guide/hodosh.md": ("hodosh_setup", "hodosh_table", "hodosh_notes"),
    "docs/user_guide/neural.md": ("neural_table", "neural_notes", "rei_ablation", "image_encoders",
                                  "offline_encoders"),
    "docs/user_guide/solvers.md": ("solve_dtype",),
    "docs/user_guide/kernels.md": ("vse_hardest_training",),
    "docs/user_guide/reliability.md": ("reliability",),
    "docs/benchmark_notes.md": ("hodosh_time", "stage_floors", "trainable_models", "report", "scale", "blas",
                                "cupy"),
}


def render(text: str, results: ResultsFiles, page: str = "README.md") -> str:
    """``text`` (the page ``page`` of :data:`PAGES`) with every region of figures rewritten from ``results``.

    Raises
    ------
    ValueError
        When a region is not closed, is not one of the page's regions in :data:`PAGES`, appears
        twice, or one of the page's regions is missing from ``text``.
    """
    names = [m["name"] for m in _REGION.finditer(text)]
    opened = re.findall(r"<!-- figures:([^ ]*) -->", text)
    if opened != names:
        raise ValueError(f"{page}: a region of figures is not closed by <!-- /figures -->, or its name is "
                         f"not lower-case letters and underscores (regions opened: {opened})")
    expected = PAGES[page]
    unknown = sorted(set(names) - set(expected))
    missing = sorted(set(expected) - set(names))
    repeated = sorted({n for n in names if names.count(n) > 1})
    if unknown or missing or repeated:
        raise ValueError(f"{page}: regions of figures unknown {unknown}, missing {missing}, repeated {repeated}; "
                         f"this page's: {', '.join(expected)}")
    return _REGION.sub(lambda m: f"<!-- figures:{m['name']} -->\n{REGIONS[m['name']](results)}\n<!-- /figures -->",
                       text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write: print a diff and exit 1 when a page differs from the results")
    parser.add_argument("--root", type=Path, default=REPOSITORY,
                        help="the folder holding the pages (README.md, docs/...)")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="the folder of the results files")
    args = parser.parse_args(argv)
    results, stale = ResultsFiles(args.results), []
    for page in PAGES:
        path = args.root / page
        text = path.read_text()
        new = render(text, results, page)
        if args.check:
            diff = list(difflib.unified_diff(text.splitlines(keepends=True), new.splitlines(keepends=True),
                                             str(path), f"{path} from {args.results}"))
            sys.stdout.writelines(diff)
            if diff:
                stale.append(page)
        elif new != text:
            path.write_text(new)
            print(f"rewrote the figures of {path}")
    if stale:
        print(f"\nstale: {', '.join(stale)}; run python benchmarks/readme_figures.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
