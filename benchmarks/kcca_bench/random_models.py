"""Randomly initialised models of every encoder family, built offline in a directory.

The tests run each family's real loading code on these (``size="tiny"``: built in a second) and
``benchmarks/encoders.py`` times the adapters on them (``size="small"``: the architectures of
ViT-S/32, MiniLM-L6 and CLIP with ViT-S/32 towers).  Throughput depends on the architecture, not
on the values of the weights, so random weights time what trained ones would; nothing is
downloaded.  Each builder imports its library (the caller checks it is installed) and returns
the encoder spec (:mod:`kcca_desc.adapters.families`) that loads the model.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["WORDS", "SIZES", "open_clip_spec", "bert_dir", "sentence_transformer_dir", "clip_dir", "siglip_dir",
           "vit_dir",
           "timm_weights"]

#: The word-level vocabulary of the random text models (special tokens first).
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "an", "the", "dog", "dogs", "cat", "red", "blue",
         "green", "ball", "runs", "on", "grass", "in", "water", "man", "woman", "child", "and", "with", "is",
         "black", "white", "brown", "jumps", "over", "snow", "beach", "street", "two", "of", "at", "by"]

#: Architecture per size: text transformer (width, layers, heads), vision transformer (width, layers,
#: heads, patch, image side), joint dimension, timm model, OpenCLIP architecture.
SIZES = {
    "tiny": {"text": (32, 1, 2), "vision": (32, 1, 2, 16, 32), "joint": 16, "timm": "test_vit",
             "open_clip": "kcca-tiny"},
    "small": {"text": (384, 6, 12), "vision": (384, 12, 6, 32, 224), "joint": 384, "timm": "vit_small_patch32_224",
              "open_clip": "ViT-S-32"},
}

_OPEN_CLIP_TINY = {"embed_dim": 16,
                   "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16, "patch_size": 16},
                   "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}}


def open_clip_spec(directory: Path, size: str = "tiny") -> str:
    """The spec of a random OpenCLIP model; ``"tiny"`` registers its architecture with OpenCLIP first."""
    import open_clip

    name = SIZES[size]["open_clip"]
    if name not in open_clip.list_models():
        path = Path(directory) / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_OPEN_CLIP_TINY))
        open_clip.add_model_config(path)
    return f"open_clip:{name}@random"


def _word_tokenizer(directory: Path):
    """A BERT WordPiece tokenizer over :data:`WORDS`, saved in ``directory``."""
    from transformers import BertTokenizerFast

    vocab = Path(directory) / "vocab.txt"
    vocab.write_text("\n".join(WORDS) + "\n")
    BertTokenizerFast(vocab_file=str(vocab), model_max_length=64).save_pretrained(directory)


def _seeded(directory: Path, seed: int) -> Path:
    import torch

    torch.manual_seed(seed)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def bert_dir(directory: Path, size: str = "tiny", seed: int = 0) -> Path:
    """A random BERT with its tokenizer, saved as a transformers model directory."""
    from transformers import BertConfig, BertModel

    directory = _seeded(directory, seed)
    width, layers, heads = SIZES[size]["text"]
    config = BertConfig(vocab_size=len(WORDS), hidden_size=width, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=4 * width, max_position_embeddings=128)
    BertModel(config).save_pretrained(directory)
    _word_tokenizer(directory)
    return directory


def sentence_transformer_dir(directory: Path, size: str = "tiny") -> Path:
    """The random BERT with mean pooling and normalisation, saved as a sentence-transformers model."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    transformer = Transformer(str(bert_dir(Path(directory) / "bert", size)))
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    out = Path(directory) / "st"
    SentenceTransformer(modules=[transformer, pooling, Normalize()], device="cpu").save(str(out))
    return out


def _towers(size: str, max_positions: int, **text) -> dict:
    """The text and vision tower configurations of a dual encoder of ``size``."""
    (tw, tl, th), (vw, vl, vh, patch, side) = SIZES[size]["text"], SIZES[size]["vision"]
    return {"text_config": {"vocab_size": len(WORDS), "hidden_size": tw, "intermediate_size": 4 * tw,
                            "num_hidden_layers": tl, "num_attention_heads": th,
                            "max_position_embeddings": max_positions, "pad_token_id": 0, **text},
            "vision_config": {"image_size": side, "patch_size": patch, "hidden_size": vw,
                              "intermediate_size": 4 * vw, "num_hidden_layers": vl, "num_attention_heads": vh}}


def clip_dir(directory: Path, size: str = "tiny", seed: int = 0) -> Path:
    """A random transformers CLIP (both towers and projections) with its tokenizer and image processor."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    directory = _seeded(directory, seed)
    config = CLIPConfig(**_towers(size, 64, bos_token_id=2, eos_token_id=3), projection_dim=SIZES[size]["joint"])
    CLIPModel(config).save_pretrained(directory)
    _word_tokenizer(directory)
    side = SIZES[size]["vision"][-1]
    CLIPImageProcessor(size={"shortest_edge": side}, crop_size={"height": side, "width": side}).save_pretrained(
        directory)
    return directory


def siglip_dir(directory: Path, size: str = "tiny", seed: int = 0) -> Path:
    """A random transformers SigLIP (sigmoid-loss dual encoder), texts padded to sixteen tokens."""
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel

    directory = _seeded(directory, seed)
    SiglipModel(SiglipConfig(**_towers(size, 16))).save_pretrained(directory)
    _word_tokenizer(directory)
    side = SIZES[size]["vision"][-1]
    SiglipImageProcessor(size={"height": side, "width": side}).save_pretrained(directory)
    return directory


def vit_dir(directory: Path, size: str = "tiny", seed: int = 0) -> Path:
    """A random transformers ViT (vision only) with its image processor."""
    from transformers import ViTConfig, ViTImageProcessor, ViTModel

    directory = _seeded(directory, seed)
    width, layers, heads, patch, side = SIZES[size]["vision"]
    config = ViTConfig(image_size=side, patch_size=patch, hidden_size=width, num_hidden_layers=layers,
                       num_attention_heads=heads, intermediate_size=4 * width)
    ViTModel(config).save_pretrained(directory)
    ViTImageProcessor(size={"height": side, "width": side}).save_pretrained(directory)
    return directory


def timm_weights(directory: Path, size: str = "tiny", seed: int = 0) -> str:
    """The spec of a random timm model whose weights (classifier included) are saved as safetensors."""
    import timm
    from safetensors.torch import save_file

    directory = _seeded(directory, seed)
    name = SIZES[size]["timm"]
    model = timm.create_model(name, pretrained=False)
    path = directory / f"{name}-{seed}.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path))
    return f"timm:{name}@{path}"
