"""What the report shows of individual queries: galleries, worst queries, disagreements.

A results file holds, per query, the rank of its gold item and the pool indices of the top-K
retrieved items (:attr:`~kcca_desc.evaluate.results.Result.queries`); the images and captions
themselves come from the data set, reloaded from what the results file records
(``extras["data_source"]``, written by ``python -m kcca_desc.fit``) or named by the caller.
The pool of a result is the view of its split and protocol
(:meth:`~kcca_desc.data.dataset.Dataset.view`); its ids are checked against the stored query
ids, so a gallery can never show another data set's images.

As in the demonstration of Hodosh, Young & Hockenmaier (2013), each query caption is shown with
the images a system ranks first and the gold image marked; each query image with its first
captions, the gold ones marked and, on Flickr8K, their expert and CrowdFlower judgments
(Sections 4.2.1 and 4.3.2 of the paper).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._core.errors import DataError, ParameterError
from .compare import Run
from ..data.dataset import Dataset, RetrievalView
from ..data.judgments import load_flickr8k_judgments
from ..data.problems import data_warnings_to_debug
from ..data.registry import load_dataset

__all__ = ["ReportDataError", "gallery_run", "dataset_source", "resolve_dataset", "result_view", "Thumbnails",
           "thumbnail", "caption_gallery", "image_gallery", "worst_queries", "disagreements", "load_judgments", "judged"]

#: Largest thumbnail, in pixels (width, height); twice the displayed size, for sharp screens.
THUMBNAIL_SIZE = (240, 180)


class ReportDataError(DataError):
    """The data set of a result cannot be found or does not match the result's queries."""


def gallery_run(runs: Sequence[Run], name: str | None) -> Run:
    """The run the gallery shows: the one ``name`` names, else the first run."""
    if name is None:
        return runs[0]
    matches = [run for run in runs if run.matches(name)]
    if not matches:
        raise ParameterError(f"gallery: {name!r} is none of the runs: {', '.join(run.label for run in runs)}")
    return matches[0]


def dataset_source(result, *, data: str | None = None, data_root: str | None = None,
                   image_root: str | None = None) -> dict[str, Any]:
    """The arguments of :func:`~kcca_desc.data.registry.load_dataset` that load the data set of ``result``.

    ``data``/``data_root``/``image_root`` when given, else the ``data_source`` the results file
    records, else the result's data set name with no root (the loader's default, e.g.
    ``$KCCA_DESC_FLICKR8K``).
    """
    source = dict(result.extras.get("data_source") or {})
    options = {}
    if data is None:
        options = {k: source[k] for k in ("n_images", "image_root") if source.get(k) is not None}
    if image_root is not None:
        options["image_root"] = image_root
    root = data_root if data_root is not None else (source.get("root") if data is None else None)
    return {"name": data or source.get("name") or result.dataset.split(":")[0], "root": root,
            "seed": int(source.get("seed", 0)), **options}


def resolve_dataset(result, *, dataset: Dataset | None = None, data: str | None = None,
                    data_root: str | None = None, image_root: str | None = None) -> Dataset:
    """The data set a result was measured on: ``dataset`` if given, else loaded (see :func:`dataset_source`).

    Raises
    ------
    ReportDataError
        If it cannot be loaded (naming the data set and the reason).
    """
    if dataset is not None:
        return dataset
    source = dataset_source(result, data=data, data_root=data_root, image_root=image_root)
    try:
        # The command that measured the run has warned about the data set's problems already.
        with data_warnings_to_debug():
            return load_dataset(**source)
    except (OSError, KeyError, ValueError) as exc:
        raise ReportDataError(f"cannot load data set {source['name']!r} of {result.system!r} (give --data and "
                              f"--data-root): {exc}") from None


def result_view(result, dataset: Dataset) -> RetrievalView:
    """The pools of ``result``, checked against the query ids and sizes the result records."""
    try:
        view = dataset.view(result.split, result.protocol)
    except (KeyError, ValueError) as exc:
        raise ReportDataError(f"data set {dataset.name!r} has no {result.protocol} view of split "
                              f"{result.split!r}: {exc}") from None
    sizes = (len(result.ranks["annotation"]), len(result.ranks["search"]))
    if sizes != (view.n_images, view.n_captions):
        raise ReportDataError(f"{result.system!r} ranked {sizes[0]} images and {sizes[1]} captions, but the "
                              f"{result.protocol} view of {dataset.name}:{result.split} has {view.n_images} and "
                              f"{view.n_captions}: not the data set it was measured on")
    for key, ids in (("images", view.images.ids), ("captions", view.caption_ids)):
        stored = result.queries.get(key)
        if stored is not None and list(stored) != list(ids):
            raise ReportDataError(f"{result.system!r}: the stored {key[:-1]} ids differ from those of "
                                  f"{dataset.name}:{result.split}: not the data set it was measured on")
    return view


def thumbnail(image: np.ndarray, size: tuple[int, int] = THUMBNAIL_SIZE) -> str:
    """A JPEG ``data:`` URI of ``image`` scaled to fit ``size`` (up or down, aspect kept)."""
    from PIL import Image

    image = np.asarray(image)
    if image.dtype != np.uint8:
        top = 65535.0 if image.dtype == np.uint16 else max(float(image.max()), 1.0)
        image = np.clip(image.astype(np.float64) / top * 255.0, 0, 255).astype(np.uint8)
    if image.ndim == 3 and image.shape[2] == 4:
        image = image[..., :3]
    picture = Image.fromarray(image).convert("RGB")
    scale = min(size[0] / picture.width, size[1] / picture.height)
    # Small (synthetic) images are enlarged without blurring; photographs are downsampled smoothly.
    resample = Image.Resampling.NEAREST if scale > 1 else Image.Resampling.LANCZOS
    picture = picture.resize((max(1, round(picture.width * scale)), max(1, round(picture.height * scale))), resample)
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class Thumbnails:
    """Thumbnails of a view's pool images, each decoded once."""

    def __init__(self, view: RetrievalView):
        self.view = view
        self._done: dict[int, str] = {}

    def __getitem__(self, index: int) -> str:
        index = int(index)
        if index not in self._done:
            self._done[index] = thumbnail(self.view.images.load(index))
        return self._done[index]


def load_judgments(dataset: Dataset, root: str | None):
    """Flickr8K's expert and CrowdFlower judgments, or None on another data set or without the files."""
    if not dataset.name.startswith("flickr8k"):
        return None
    try:
        return load_flickr8k_judgments(root)
    except (OSError, ValueError):
        return None


def _judgment_text(judgments, image_id: str, caption_id: str) -> dict[str, str]:
    if judgments is None:
        return {}
    out = {}
    expert = judgments.expert.get((image_id, caption_id))
    if expert is not None:
        out["expert"] = "/".join(str(s) for s in expert)
    crowd = judgments.crowdflower.get((image_id, caption_id))
    if crowd is not None:
        out["crowd"] = f"{crowd[0]:.0%} yes ({crowd[1]}/{crowd[1] + crowd[2]})"
    return out


def _sample(n_queries: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_queries, size=min(n, n_queries), replace=False))


def _top(run: Run, task: str, query: int, n_top: int) -> list[int]:
    top = run.result.queries.get("top", {}).get(task)
    return [] if top is None else [int(c) for c in top[query][:n_top]]


def caption_gallery(run: Run, view: RetrievalView, thumbs: Thumbnails, *, n: int = 6, seed: int = 0,
                    n_top: int = 5) -> list[dict[str, Any]]:
    """A seeded sample of caption queries, each with its top images, the gold image marked."""
    ranks = run.result.ranks["search"]
    items = []
    for q in _sample(view.n_captions, n, seed):
        gold = int(view.caption_image[q])
        top = _top(run, "search", q, n_top)
        items.append({
            "query": view.captions[q], "query_id": view.caption_ids[q], "rank": int(ranks[q]),
            "retrieved": [{"thumb": thumbs[c], "id": view.images.ids[c], "position": p + 1, "gold": c == gold}
                          for p, c in enumerate(top)],
            "gold": None if gold in top else {"thumb": thumbs[gold], "id": view.images.ids[gold]},
        })
    return items


def image_gallery(run: Run, view: RetrievalView, thumbs: Thumbnails, *, n: int = 6, seed: int = 0,
                  n_top: int = 5, judgments=None) -> list[dict[str, Any]]:
    """A seeded sample of image queries, each with its top captions, gold ones marked and judged."""
    ranks = run.result.ranks["annotation"]
    items = []
    for q in _sample(view.n_images, n, seed):
        image_id = view.images.ids[q]
        gold = set(np.flatnonzero(view.caption_image == q).tolist())
        top = _top(run, "annotation", q, n_top)
        items.append({
            "query_id": image_id, "thumb": thumbs[q], "rank": int(ranks[q]),
            "retrieved": [{"text": view.captions[c], "id": view.caption_ids[c], "position": p + 1,
                           "gold": c in gold, **_judgment_text(judgments, image_id, view.caption_ids[c])}
                          for p, c in enumerate(top)],
            "gold": None if gold & set(top) else [view.captions[c] for c in sorted(gold)],
        })
    return items


def _query(view: RetrievalView, thumbs: Thumbnails, task: str, q: int) -> dict[str, Any]:
    """A query and its gold item(s), for the tables of single queries."""
    if task == "search":
        gold = int(view.caption_image[q])
        return {"text": view.captions[q], "id": view.caption_ids[q], "gold_thumb": thumbs[gold],
                "gold_id": view.images.ids[gold]}
    gold = np.flatnonzero(view.caption_image == q)
    return {"thumb": thumbs[q], "id": view.images.ids[q], "gold_text": [view.captions[c] for c in gold]}


def worst_queries(run: Run, view: RetrievalView, thumbs: Thumbnails, task: str, *, n: int = 5) -> list[dict]:
    """The ``n`` queries whose gold item ``run`` ranks lowest, with what it ranked first."""
    ranks = run.result.ranks[task]
    worst = np.argsort(-ranks, kind="stable")[:n]
    out = []
    for q in worst:
        first = _top(run, task, q, 1)
        top = None
        if first:
            top = ({"thumb": thumbs[first[0]], "id": view.images.ids[first[0]]} if task == "search"
                   else {"text": view.captions[first[0]], "id": view.caption_ids[first[0]]})
        out.append({**_query(view, thumbs, task, int(q)), "rank": int(ranks[q]), "first": top})
    return out


def disagreements(a: Run, b: Run, view: RetrievalView, thumbs: Thumbnails, task: str,
                  *, n: int = 5) -> list[dict]:
    """The ``n`` queries whose gold ranks differ most between two runs, by ``|log(rank_a / rank_b)|``.

    The log ratio weighs rank 1 against rank 50 above rank 500 against rank 900, as a user sees
    it: the first is found by one system and lost by the other, the second lost by both.
    """
    ra, rb = a.result.ranks[task], b.result.ranks[task]
    gap = np.abs(np.log(ra) - np.log(rb))
    order = np.argsort(-gap, kind="stable")[:n]
    return [{**_query(view, thumbs, task, int(q)), "rank_a": int(ra[q]), "rank_b": int(rb[q])} for q in order]


def judged(items: Sequence[Mapping]) -> bool:
    """Whether any retrieved caption of an image gallery carries a judgment."""
    return any("expert" in r or "crowd" in r for item in items for r in item["retrieved"])
