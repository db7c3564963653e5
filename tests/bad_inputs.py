"""Image-file data sets on disk, good and broken, for the tests of checks, errors and fuzzing.

Kept out of the test modules so that tests in several folders share them (``tests/`` is on
``sys.path`` through its ``conftest.py``).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from kcca_desc.data import make_synthetic

__all__ = ["write_tsv_dataset", "ODD_IMAGES", "BROKEN_IMAGES", "write_odd_image"]


def write_tsv_dataset(root: Path, n_images: int = 30, n_captions: int = 5, seed: int = 0,
                      splits: tuple[float, float, float] = (0.6, 0.2, 0.2), image_size: int = 48) -> Path:
    """Write ``n_images`` synthetic scenes as PNG files and a TSV of their captions; return the TSV.

    The first ``splits[0]`` of the images are train, then dev, then test (fractions); a fraction of
    0 leaves that split out.
    """
    data = make_synthetic(n_images=n_images, image_size=image_size, seed=seed, n_captions=n_captions)
    (root / "images").mkdir(parents=True, exist_ok=True)
    bounds = np.rint(np.cumsum((0.0,) + tuple(splits)) * n_images).astype(int)
    lines = []
    for i in range(n_images):
        name = f"images/{i:04d}.png"
        cv2.imwrite(str(root / name), np.ascontiguousarray(data.images.load(i)[:, :, ::-1]))
        split = ("train", "dev", "test")[int(np.searchsorted(bounds, i, side="right")) - 1]
        lines += [f"{name}\t{caption}\t{split}" for caption in data.captions[i][:n_captions]]
    path = root / "data.tsv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _encode(image: np.ndarray, suffix: str, *params: int) -> bytes:
    ok, buffer = cv2.imencode(suffix, image, list(params))
    assert ok
    return buffer.tobytes()


def _gif_bytes() -> bytes:
    from PIL import Image

    import io

    image = Image.fromarray(np.arange(64, dtype=np.uint8).reshape(8, 8) * 4, mode="L").convert("P")
    out = io.BytesIO()
    image.save(out, format="GIF")
    return out.getvalue()


def _cmyk_jpeg() -> bytes:
    from PIL import Image

    import io

    rng = np.random.default_rng(0)
    image = Image.fromarray(rng.integers(0, 256, (32, 32, 4), dtype=np.uint8), mode="CMYK")
    out = io.BytesIO()
    image.save(out, format="JPEG")
    return out.getvalue()


_RNG = np.random.default_rng(1)
#: Odd but valid image files: name -> bytes factory.  Each decodes, and each is featurised.
ODD_IMAGES = {
    "grey.png": lambda: _encode(_RNG.integers(0, 256, (40, 40), dtype=np.uint8), ".png"),
    "rgba.png": lambda: _encode(_RNG.integers(0, 256, (40, 40, 4), dtype=np.uint8), ".png"),
    "deep16.png": lambda: _encode(_RNG.integers(0, 65536, (40, 40, 3), dtype=np.uint16), ".png"),
    "cmyk.jpg": _cmyk_jpeg,
    "palette.gif": _gif_bytes,
    "one.png": lambda: _encode(np.full((1, 1, 3), 128, np.uint8), ".png"),
    "eight.jpg": lambda: _encode(_RNG.integers(0, 256, (8, 8, 3), dtype=np.uint8), ".jpg"),
    "strip.png": lambda: _encode(_RNG.integers(0, 256, (6, 3000, 3), dtype=np.uint8), ".png"),
}


def _truncated_jpeg() -> bytes:
    whole = _encode(_RNG.integers(0, 256, (64, 64, 3), dtype=np.uint8), ".jpg")
    return whole[: len(whole) // 3]


#: Files that are no image a decoder can read: name -> bytes factory.
BROKEN_IMAGES = {
    "empty.jpg": lambda: b"",
    "text.jpg": lambda: b"this is not an image\n",
    "garbage.png": lambda: bytes(_RNG.integers(0, 256, 500, dtype=np.uint8)),
    "header_only.png": lambda: b"\x89PNG\r\n\x1a\n" + bytes(20),
    "cut.jpg": _truncated_jpeg,
}


def write_odd_image(folder: Path, name: str, table: dict = ODD_IMAGES) -> Path:
    """Write the file ``name`` of ``table`` into ``folder``; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(table[name]())
    return folder / name
