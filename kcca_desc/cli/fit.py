"""Command line: fit a system, evaluate it and print a paper-style results table.

The choices it offers by name (data sets, systems, text and image kernels, feature types,
evaluation tasks) are the entries of their registries, so a registered addition shows up in
``--help`` and is accepted here without changing this module.

Examples
--------
The paper's best system on the embedded synthetic data (the default)::

    python -m kcca_desc.fit --text-kernel tri_sem

On Flickr8K, both protocols, the nearest-neighbour baseline, with the forced-choice task::

    python -m kcca_desc.fit --data flickr8k --data-root /path/to/flickr8k --method nn --protocol both \\
        --task retrieval,forced_choice
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys
import time
from collections.abc import Collection
from pathlib import Path
from typing import Sequence

from .._core.cache import atomic_write_text
from .errors import exits_cleanly
from ..data.dataset import PROTOCOLS
from ..data.registry import DATASETS
from ..evaluate.harness import evaluate_fitted
from ..evaluate.results import format_table, to_csv, to_latex, to_markdown, save_results
from ..image.features import FEATURE_TYPES, ImageFeaturizer
from ..image.kernel import IMAGE_KERNELS
from .._core.profile import format_profile, profiled, recording
from .._core.progress import LINE_FORMAT, TIME_FORMAT, set_stage, watched_stage
from .._core.registry import did_you_mean
from .interrupts import run_command
from .options import add_system_options, check_applicable, command_parser, method_form, output_path
from .outputs import keep_earlier_report, keep_earlier_run, version_note, write_or_keep
from ..methods.base_kernels import base_kernel_names
from ..methods.multikernel import parse_kernel_sum
from ..methods.registry import SYSTEMS
from .._core.settings import Setting
from .preflight import add_options as add_preflight_options
from .preflight import data_seed, prepare_run, settings_error
from .._core.progress import set_quiet
from .._core.errors import ParameterError
from .._core.validation import InvalidParameterError
from ..tasks.registry import RETRIEVAL, TASKS
from ..text.named_kernels import TEXT_KERNELS

__all__ = ["main", "build_parser"]

_LOGGER = logging.getLogger(__name__)

# The featurizer's own sampling defaults, so the CLI cannot drift from them.
_SAMPLING = {name: ImageFeaturizer().get_params()[name] for name in ("pixel_step", "sift_step")}


def _choice(kind: str, available: Collection[str]):
    """argparse type that rejects unknown names with the list of available ones.

    ``available`` may be a registry: it is read when an argument is parsed.
    """
    def parse(value: str) -> str:
        if value not in available:
            raise argparse.ArgumentTypeError(
                f"unknown {kind} {value!r}; available: {', '.join(available)}{did_you_mean(value, available)}")
        return value
    parse.__name__ = kind
    return parse


def _kernel_choice(side: str, named: Collection[str]):
    """argparse type of ``--text-kernel`` / ``--image-kernel``: a named kernel, or base kernels joined by ``+``.

    An unknown name is refused here, before any work, with the list of the ``side`` base kernels.
    """
    def parse(value: str) -> str:
        if value not in named:
            try:
                parse_kernel_sum(value, side)
            except ParameterError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None
        return value
    parse.__name__ = f"{side} kernel"
    return parse


def _check_kernel_sums(args: argparse.Namespace, system) -> None:
    """Refuse a sum of base kernels (or a feature kernel) for a system over one named kernel."""
    if any(setting.name == "kernel_weights" for setting in system.settings):
        return
    for option, value, named in (("--text-kernel", args.text_kernel, TEXT_KERNELS),
                                 ("--image-kernel", args.image_kernel, IMAGE_KERNELS)):
        if value not in named:
            raise ParameterError(f"{option} {value}: sums of base kernels and feature kernels are for "
                                 f"--method mkl or mkl_scalable; --method {args.method} takes one of {', '.join(named)}")


# The options of the paper's kernels, by the shared setting of System.build they make up.
_KERNEL_OPTIONS = {"text_kernel": ("text_kernel",), "image_kernel": ("image_kernel",),
                   "image_kernel_params": ("levels", *(f"{name}_words" for name in FEATURE_TYPES),
                                           "pixel_step", "sift_step")}


def _check_kernel_options(args: argparse.Namespace, parser: argparse.ArgumentParser, system) -> None:
    """Refuse the options of the paper's kernels for a system over none of them: they would be ignored.

    So is ``--text-kernel`` for ``nn`` without ``--nn-text kernel``, the one way ``nn`` reads it.

    Such a system (``cca``, ``encoder``, ``kcca`` or ``nn`` with an encoder named, a trainable one)
    works on an encoder's features; an option counts as given when its value differs from its default.
    """
    if system is SYSTEMS["nn"] and args.nn_text != "kernel" and args.text_kernel != parser.get_default("text_kernel"):
        # nn takes the image kernel's options, so the check below passes it, but a text kernel only
        # through --nn-text kernel: else its run is NN5 idf F1 under a label that omits the kernel asked for.
        raise ParameterError(f"--text-kernel {args.text_kernel}: --method nn reads it only with --nn-text kernel "
                             f"(its text similarity is --nn-text, here {args.nn_text}): add --nn-text kernel, or "
                             "drop --text-kernel")
    if any(system.takes(setting) for setting in _KERNEL_OPTIONS):
        return
    given = [f"--{dest.replace('_', '-')}" for dests in _KERNEL_OPTIONS.values() for dest in dests
             if getattr(args, dest) != parser.get_default(dest)]
    if given:
        kernel_systems = [name for name, entry in SYSTEMS.items() if any(map(entry.takes, _KERNEL_OPTIONS))]
        raise ParameterError(f"{', '.join(given)}: {'options' if len(given) > 1 else 'an option'} of the systems "
                             f"over the paper's kernels ({', '.join(kernel_systems)}, without an encoder), not of "
                             f"{method_form(vars(args), args.method, SYSTEMS)}: drop {'them' if len(given) > 1 else 'it'}")


def _labelled_settings(parser: argparse.ArgumentParser) -> tuple[Setting, ...]:
    """The shared options a run's default label shows when they differ from their defaults (:meth:`System.label`).

    The options of the paper's image kernel (given only to a system over it, :func:`_check_kernel_options`),
    in a compact notation (``L=1 words=colour:64``), ``--seed``, which draws the synthetic data as
    well as every random choice of the fit, and ``--data-seed`` where it is not ``--seed``'s.  The data options are not in the label: each result
    records its data set, split and protocol (the tables show the protocol) and compare and report
    refuse to compare runs on different data.  The defaults are the parser's, so they cannot drift.
    """
    words = {name: parser.get_default(f"{name}_words") for name in FEATURE_TYPES}

    def words_label(n_words: dict) -> str:
        return "words=" + ",".join(f"{name}:{n}" for name, n in n_words.items() if n != words[name])

    return (Setting("levels", int, parser.get_default("levels"), label=lambda levels: f"L={levels}"),
            Setting("n_words", dict, words, label=words_label),
            *(Setting(dest, int, parser.get_default(dest)) for dest in ("pixel_step", "sift_step", "seed")),
            Setting("data_seed", int, None))


# The settings a fit cuts to what the data support (a grid of n above the training images), which a
# default label shows as asked and as used.  The others a fit resolves (the kernel weights an MKL
# strategy chose) are choices, not cuts, and too long for a label: params.chosen records them.
_CUT_TO_THE_DATA = frozenset({"n_components"})


def _default_label(args: argparse.Namespace, parser: argparse.ArgumentParser, system, method) -> str:
    """The run's label without ``--name``: the system's name and every setting that differs from its default.

    A setting the fit cut to the data (:func:`_resolved`, also in ``params.chosen``) shows the value
    asked for and the one used, ``n=16,500→16``: the figures are those of the second.
    """
    values = {**vars(args), "n_words": {name: getattr(args, f"{name}_words") for name in FEATURE_TYPES},
              # The data seed is --seed's unless given otherwise: shown only then (data_seed=0 after seed=1).
              "data_seed": None if args.data_seed in (None, args.seed) else args.data_seed}
    used = {name: value for name, value in _resolved(system, method).items() if name in _CUT_TO_THE_DATA}
    return system.label(method, values, shared=_labelled_settings(parser), used=used)


def _task_list(value: str) -> list[str]:
    """argparse type of a comma-separated list of registered task names."""
    return [_choice("task", TASKS)(name.strip()) for name in value.split(",") if name.strip()]


#: The installed script of this command (setup.cfg's console_scripts).
_SCRIPT = "kcca-desc"


def _prog() -> str:
    """The command's name in its usage and error lines: as it was started, the installed script or ``python -m``."""
    return _SCRIPT if Path(sys.argv[0]).name == _SCRIPT else "python -m kcca_desc.fit"


def build_parser() -> argparse.ArgumentParser:
    p = command_parser(_prog(),
                       "Fit an image-sentence ranking system (Hodosh, Young & Hockenmaier 2013), "
                       "evaluate it on a retrieval protocol and print a results table.",
                       examples=["# the paper's best system on the embedded synthetic data",
                                 "python -m kcca_desc.fit --text-kernel tri_sem",
                                 "# Flickr8K, both protocols, the nearest-neighbour baseline, results kept for compare/report",
                                 "python -m kcca_desc.fit --data flickr8k --data-root /data/flickr8k --method nn "
                                 "--protocol both --out nn.json",
                                 "# your own images and captions (a TSV of image<TAB>caption<TAB>split, one caption a line), a named run",
                                 "python -m kcca_desc.fit --data tsv --data-root captions.tsv --image-root images/ "
                                 "--name 'KCCA on my data'",
                                 "# multiple-kernel KCCA: sums of base kernels, weights aligned on train",
                                 "python -m kcca_desc.fit --method mkl --text-kernel tri_sem+minilm_rbf "
                                 "--image-kernel pyramid+efficientnet_rbf --kernel-weights alignf"])
    g = p.add_argument_group("data")
    g.add_argument("--data", type=_choice("data set", DATASETS), default="synthetic",
                   help="data set: " + DATASETS.describe())
    g.add_argument("--data-root", default=None,
                   help="Flickr8K directory (else $KCCA_DESC_FLICKR8K), or the JSON/TSV file for json/tsv, "
                        "or Karpathy's split file for flickr30k/coco")
    g.add_argument("--image-root", default=None,
                   help="image directory for --data json, flickr30k and coco (required) or tsv (optional)")
    g.add_argument("--n-images", type=int, default=None,
                   help="synthetic data set size (default: the generator's, 1000 images)")
    g.add_argument("--protocol", type=_choice("protocol", PROTOCOLS + ("both",)), default="hodosh",
                   help="evaluation protocol: hodosh (caption #2 only), karpathy (all 5 captions) or both")
    g.add_argument("--split", default="test", help="split to evaluate on")

    g = p.add_argument_group("system")
    g.add_argument("--method", type=_choice("method", SYSTEMS), default="kcca", help=SYSTEMS.describe())
    g.add_argument("--text-kernel", type=_kernel_choice("text", TEXT_KERNELS), default="tri_sem",
                   help="text kernel for kcca (and for nn with --nn-text kernel): " + ", ".join(TEXT_KERNELS)
                        + "; for mkl and mkl_scalable, base kernels joined by + (e.g. tri_sem+minilm_rbf): "
                        + ", ".join(base_kernel_names("text")))
    g.add_argument("--image-kernel", type=_kernel_choice("image", IMAGE_KERNELS), default="pyramid",
                   help="image kernel: " + IMAGE_KERNELS.describe() + "; for mkl and mkl_scalable, base kernels "
                        "joined by + (e.g. pyramid+efficientnet_rbf): " + ", ".join(base_kernel_names("image")))
    g.add_argument("--levels", type=int, default=2, help="spatial pyramid levels L")
    for name, feature in FEATURE_TYPES.items():
        g.add_argument(f"--{name}-words", type=int, default=feature.n_words, help=f"{name} codebook size")
    g.add_argument("--pixel-step", type=int, default=_SAMPLING["pixel_step"],
                   help="colour and texture sampled every this many pixels (1: every pixel, ~4x slower, "
                        "better on small images)")
    g.add_argument("--sift-step", type=int, default=_SAMPLING["sift_step"], help="dense SIFT grid spacing in pixels")
    g.add_argument("--seed", type=int, default=0,
                   help="seed of every random choice: the model's (random_state) and, unless --data-seed is "
                        "given, the data's")
    g.add_argument("--data-seed", type=int, default=None,
                   help="seed of the data alone (the synthetic data set drawn, the items the further tasks "
                        "sample), so that --seed can vary the model over fixed data (default: --seed)")
    g.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk cache")
    add_system_options(p, SYSTEMS.items())

    g = p.add_argument_group("output")
    g.add_argument("--name", default=None,
                   help="the run's label in tables, results and reports (default: the system's name and "
                        "every setting that differs from its default, the system's own and --levels, --*-words, "
                        "--pixel-step, --sift-step, --seed and a --data-seed other than --seed, e.g. "
                        "'KCCA bow5 (pyramid) ρ² L=1 seed=1'; the data set, split and protocol are recorded "
                        "beside it)")
    g.add_argument("--task", type=_task_list, default=[RETRIEVAL],
                   help=f"evaluation tasks, comma-separated; {RETRIEVAL} makes the table and always runs, "
                        "the others' metrics, with bootstrap intervals, are printed as a second table and written "
                        "under 'tasks' in --out: " + TASKS.describe())
    g.add_argument("--out", default=None, metavar="FILE.json",
                   help="write results as JSON to this file, plus .md, .csv and .tex tables beside it; an earlier "
                        "run there of other settings or data is kept as FILE.1.json (the next free number, "
                        "tables too), one of the same settings and data is replaced; a line says which")
    g.add_argument("--top-k", type=int, default=10,
                   help="retrieved items kept per query in --out (for galleries and later comparisons)")
    g.add_argument("--report", type=output_path, default=None, metavar="DIR",
                   help="write an HTML report (figures, retrieval gallery) to this directory; an earlier report "
                        "there of other settings or data is kept as DIR.1 (the next free number), one of the same "
                        "is replaced, as with --out")
    verbosity = g.add_mutually_exclusive_group()
    verbosity.add_argument("-v", "--verbose", action="store_true", help="log progress")
    verbosity.add_argument("-q", "--quiet", action="store_true", help="no progress bars or progress lines")
    add_preflight_options(g)
    return p


def _make_method(args):
    """The system of ``args.method``, built from the parsed options."""
    image_params = {"levels": args.levels,
                    "n_words": {name: getattr(args, f"{name}_words") for name in FEATURE_TYPES}}
    sampling = {"pixel_step": args.pixel_step, "sift_step": args.sift_step}
    if sampling != _SAMPLING:
        # Only non-default sampling enters the parameters, so default runs share cached features.
        image_params["featurizer_params"] = sampling
    shared = {"image_kernel": args.image_kernel, "text_kernel": args.text_kernel,
              "image_kernel_params": image_params, "random_state": args.seed, "cache": not args.no_cache}
    # With an encoder named, kcca and nn run over its features (System.over_features).
    settings = vars(args)
    return SYSTEMS[args.method].resolve(settings).build(settings, shared)


def _check_report_option(parser: argparse.ArgumentParser, directory: Path) -> None:
    """Refuse ``--report`` before any work when the report could not be written."""
    missing = [name for name in ("matplotlib", "jinja2") if importlib.util.find_spec(name) is None]
    if missing:
        parser.error(f"--report needs {' and '.join(missing)}: pip install 'kcca_desc[report]'")
    if directory.exists() and not directory.is_dir():
        parser.error(f"--report {directory}: exists and is not a directory")


def _check_out(out: str | None) -> None:
    """Refuse an ``--out`` that is not a ``.json`` file before any work.

    The tables are written beside the results file under the suffixes .md, .csv and .tex: a
    results file named with one of them would be overwritten by its own table, and any other name
    would leave a JSON file that does not say what it is.  An empty name would write nothing.  An
    existing directory is left to :func:`~.preflight.check_writable`, which says that it is one.
    """
    if out is not None and Path(out).suffix != ".json" and not (out and Path(out).is_dir()):
        raise ParameterError(f"--out {out!r}: name the results file, ending in .json (e.g. runs/nn.json); "
                             "its .md, .csv and .tex tables are written beside it")


def _check_n_select(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Refuse an ``--n-select`` given above the number of (n, reg) settings: each metric would keep them all."""
    n_settings = len(args.n_components) * len(args.regs)
    if args.n_select > n_settings and args.n_select != parser.get_default("n_select"):
        raise ParameterError(f"--n-select {args.n_select} is more than the {n_settings} (n, reg) settings of "
                             "--n-components and --regs, each of which every selection metric keeps already; "
                             f"give at most {n_settings}")


@exits_cleanly
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; a data or settings problem exits with the code :mod:`kcca_desc._core.errors` documents."""
    parser = build_parser()
    args = parser.parse_args(argv)
    set_quiet(args.quiet)
    _check_out(args.out)
    if args.report:
        _check_report_option(parser, Path(args.report))
    # The progress lines' format: -v mixed "2026-11-30 20:06:56,679 kcca_desc.stages: ..." with them.
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format=LINE_FORMAT,
                        datefmt=TIME_FORMAT)
    protocols = PROTOCOLS if args.protocol == "both" else (args.protocol,)
    check_applicable(vars(args), args.method, SYSTEMS)
    system = SYSTEMS[args.method].resolve(vars(args))
    _check_kernel_sums(args, system)
    _check_kernel_options(args, parser, system)
    if any(setting.name == "n_select" for setting in system.settings):
        _check_n_select(args, parser)
    start = time.perf_counter()
    with recording() as run_profile:
        # Settings, outputs, cache and every image and caption are checked before any work.
        with profiled("data loading"):
            method, dataset = prepare_run(args, parser, _make_method, system, protocols)
        t0 = time.perf_counter()
        set_stage(f"fitting {args.method}")
        # Systems that select models do so on dev under the first protocol evaluated.
        try:
            with watched_stage(f"fitting {args.method}"):
                system.fit(method, dataset, protocols[0])
        except InvalidParameterError as exc:
            # A setting the data cannot support (more KCCA dimensions than training images...).
            raise settings_error(exc.errors, parser, settings=system.settings) from None
        fit_s = time.perf_counter() - t0

        # The retrieval task is the table; the other tasks add their metrics to each result.
        further = [name for name in dict.fromkeys(args.task) if name != RETRIEVAL]
        results = []
        label = args.name or _default_label(args, parser, system, method)
        for protocol in protocols:
            set_stage(f"evaluation ({args.split}, {protocol})")
            view = dataset.view(args.split, protocol)
            # params: the estimator's own, fully resolved (only what applies to this system).
            with watched_stage(f"evaluation ({args.split}, {protocol})"):
                result = evaluate_fitted(method, view, name=label,
                                         timings={"fit": fit_s, **getattr(method, "timings_s_", {})}, top_k=args.top_k)
            result.extras["command"] = {"argv": list(sys.argv[1:] if argv is None else argv),
                                        "method": args.method, "settings": system.applied(vars(args)),
                                        "resolved": _resolved(system, method),
                                        # The model's seed is also params.random_state, the data's data_source.seed.
                                        "seeds": {"seed": args.seed, "data_seed": data_seed(args)}}
            # What reloads the data set, so that a report drawn from the results file can show the images.
            result.extras["data_source"] = {"name": args.data, "root": args.data_root, "seed": data_seed(args),
                                            "n_images": args.n_images, "image_root": args.image_root,
                                            "fingerprint": dataset.fingerprint()}
            if further:
                # The items a task samples are part of the data evaluated on: drawn from the data seed.
                result.extras["tasks"] = {name: TASKS[name](method, view, seed=data_seed(args)) for name in further}
            results.append(result)
        for result in results:
            # The file records the run's profile up to here: the report stage is still to come.
            result.add_timings(run_profile.table())
        # The other tasks' figures come as a second table, with their bootstrap intervals (the
        # retrieval figures have none here: the tables show intervals only when the tasks have some).
        ci = any("ci" in figures for r in results for figures in r.extras.get("tasks", {}).values())
        print(format_table(results, ci=ci))
        with profiled("report"):
            _write_outputs(args, results, dataset, ci=ci)
    _LOGGER.info("stage profile of the run:\n%s",
                 format_profile(run_profile.table(), total_s=time.perf_counter() - start))
    return 0


def _resolved(system, method) -> dict:
    """The values the fit used for the system's settings it resolves from the data, by setting name.

    A grid of ``--n-components`` is cut to what the training set supports: the results file keeps
    the grid asked for under ``settings`` and the one used here (``method.chosen_params_``).
    """
    chosen = getattr(method, "chosen_params_", None) or {}
    return {setting.name: chosen[setting.sets] for setting in system.settings if setting.sets in chosen}


def _write_outputs(args: argparse.Namespace, results: list, dataset, *, ci: bool) -> None:
    """The results file and its tables (``--out``) and the HTML report (``--report``)."""
    if args.out:
        tables = (".md", ".csv", ".tex")

        def write(out: Path) -> tuple[Path, Path | None]:
            # An earlier run of other settings or data there is kept as out.<n>.json (+ tables), never lost.
            earlier = keep_earlier_run(out, [result.to_dict() for result in results], siblings=tables)
            # The per-query ranks go in too, so every figure can be recomputed and tested from the file.
            save_results(results, out, include_ranks=True)
            atomic_write_text(out.with_suffix(".md"), to_markdown(results, ci=ci))
            atomic_write_text(out.with_suffix(".csv"), to_csv(results, ci=ci))
            atomic_write_text(out.with_suffix(".tex"), to_latex(results, ci=ci))
            return out, earlier

        out, earlier = write_or_keep(args.out, write)
        note = version_note(out, earlier, "run", "settings and data", "settings or data",
                            tables=f" (+ {', '.join(tables)})")
        print(*filter(None, [note, None if earlier == out else f"wrote {out} (+ {', '.join(tables)})"]), sep="\n")
    if args.report:
        # Imported here: Matplotlib and Jinja2 load only when a report is asked for.
        from ..report import build_report
        from ..report.compare import Run, comparison_inputs

        def write_report(folder: Path) -> tuple[Path, Path | None]:
            # An earlier report there of other settings or data is kept as DIR.<n>; one of the same replaced.
            earlier = keep_earlier_report(folder, comparison_inputs([Run(result, "") for result in results]))
            return build_report(results, folder, dataset=dataset), earlier

        page, earlier = write_or_keep(args.report, write_report)
        note = version_note(Path(args.report), earlier, "report", "settings and data", "settings or data")
        print(*filter(None, [note, f"report: {page}"]), sep="\n")


def cli(argv: Sequence[str] | None = None) -> int:
    """The command's entry point: :func:`main`, which Ctrl-C and SIGTERM stop within a moment.

    On either signal it prints the stage that was running, what the run kept in the cache and
    how to resume, and exits with 130 (SIGINT) or 143 (SIGTERM); see :mod:`kcca_desc.cli.interrupts`.
    """
    return run_command(main, argv)


if __name__ == "__main__":
    sys.exit(cli())
