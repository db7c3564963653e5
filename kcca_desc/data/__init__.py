"""Data sets, image sources, protocol views, loaders and human judgments."""

from .byod import load_karpathy_json, load_tsv
from .checks import check_dataset, check_images, drop_items, settle_problems
from .dataset import (PROTOCOLS, Dataset, MissingSplitError, RetrievalView, SplitLeakWarning, require_dataset,
                      require_view)
from .flickr8k import load_flickr8k
from .images import ArrayImages, FileImages, ImageReadError, ImageSource, decode_image_file, require_image_source
from .judgments import (
    Flickr8kJudgments,
    load_crowdflower_annotations,
    load_expert_annotations,
    load_flickr8k_judgments,
)
from .karpathy import EVALUATION_POOLS, EvaluationPool, load_coco, load_flickr30k
from .problems import DataFormatError, ProblemLog
from .registry import DATASETS, load_dataset
from .synthetic import RenderedImages, make_synthetic

__all__ = [
    "PROTOCOLS",
    "Dataset",
    "RetrievalView",
    "ImageSource",
    "FileImages",
    "ArrayImages",
    "RenderedImages",
    "ImageReadError",
    "require_image_source",
    "decode_image_file",
    "DataFormatError",
    "MissingSplitError",
    "SplitLeakWarning",
    "require_dataset",
    "require_view",
    "ProblemLog",
    "check_dataset",
    "check_images",
    "drop_items",
    "settle_problems",
    "DATASETS",
    "load_dataset",
    "load_flickr8k",
    "load_karpathy_json",
    "load_tsv",
    "load_flickr30k",
    "load_coco",
    "EvaluationPool",
    "EVALUATION_POOLS",
    "make_synthetic",
    "Flickr8kJudgments",
    "load_expert_annotations",
    "load_crowdflower_annotations",
    "load_flickr8k_judgments",
]
