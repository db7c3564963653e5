"""Drawing synthetic scenes with NumPy masks (no per-pixel Python loops).

Each texture is a full-canvas layer computed from the pixel coordinate grid;
each shape is a boolean mask over the same grid in the object's rotated,
radius-normalised frame; an object is composited by selecting its layer under
its mask.  Colours are jittered per object and the whole image gets a
brightness change and mild noise, so that equal attribute values give similar,
not identical, pixels.
"""

from __future__ import annotations

import numpy as np

from .._core.errors import ParameterError
from .synthetic_scenes import COLOURS, Scene, SceneObject

__all__ = ["render_scene", "shape_mask", "texture_layer"]

_COLOUR_JITTER = 12.0  # per channel, in 0..255 units
_BRIGHTNESS = (0.9, 1.1)
_PIXEL_NOISE = 3.0
_GRAIN_NOISE = 40.0  # per-pixel noise of the "speckled" texture


def _contrast(rgb: np.ndarray) -> np.ndarray:
    """The second colour of a two-colour pattern: darker for light colours, lighter for dark ones."""
    luminance = rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    return rgb * 0.45 if luminance > 100 else rgb + (255.0 - rgb) * 0.55


def texture_layer(
    texture: str, rgb: np.ndarray, grid: tuple[np.ndarray, np.ndarray], rng: np.random.Generator, scale: float
) -> np.ndarray:
    """A full-canvas ``(H, W, 3)`` float32 layer of ``texture`` in colour ``rgb``.

    ``scale`` (pixels) sets the period of stripes, checks and dots; ``grid``
    is ``(ys, xs)``, the pixel coordinates.
    """
    ys, xs = grid
    second = _contrast(rgb)
    if texture == "plain":
        return np.broadcast_to(rgb, ys.shape + (3,)).astype(np.float32)  # a writable copy
    if texture == "speckled":
        noise = rng.standard_normal(ys.shape, dtype=np.float32) * _GRAIN_NOISE
        return rgb + noise[..., None]
    if texture == "grassy":
        # Vertical blades: noise that varies fast across columns and slowly down them.
        blade_length = max(2, int(round(scale)))
        coarse = rng.uniform(-1.0, 1.0, (ys.shape[0] // blade_length + 1, ys.shape[1])).astype(np.float32)
        blades = np.repeat(coarse, blade_length, axis=0)[: ys.shape[0]]
        shade = 0.75 + 0.3 * blades + 0.05 * rng.standard_normal(ys.shape, dtype=np.float32)
        return rgb * shade[..., None]
    phase_y, phase_x = rng.uniform(0.0, scale, 2)
    if texture == "striped":
        angle = rng.uniform(0.0, np.pi)
        u = xs * np.cos(angle) + ys * np.sin(angle) + phase_x
        pattern = np.floor(u / (scale / 2)) % 2 == 1
    elif texture == "checked":
        pattern = (np.floor((xs + phase_x) / scale) + np.floor((ys + phase_y) / scale)) % 2 == 1
    elif texture == "dotted":
        dx = (xs + phase_x) % scale - scale / 2
        dy = (ys + phase_y) % scale - scale / 2
        pattern = dx * dx + dy * dy <= (0.3 * scale) ** 2
    else:
        raise ParameterError(f"unknown texture {texture!r}")
    return np.where(pattern[..., None], second, rgb).astype(np.float32)


def shape_mask(obj: SceneObject, grid: tuple[np.ndarray, np.ndarray], side: int) -> np.ndarray:
    """Boolean ``(H, W)`` mask of the pixels covered by ``obj`` on a ``side``-pixel canvas."""
    ys, xs = grid
    cx, cy = obj.centre[0] * side, obj.centre[1] * side
    r = obj.radius * side
    cos, sin = np.cos(obj.angle), np.sin(obj.angle)
    # Rotated coordinates in units of the radius; v grows downwards, as image rows do.
    u = ((xs - cx) * cos + (ys - cy) * sin) / r
    v = (-(xs - cx) * sin + (ys - cy) * cos) / r
    rho2 = u * u + v * v
    if obj.shape == "circle":
        return rho2 <= 1.0
    if obj.shape == "ring":
        return (rho2 <= 1.0) & (rho2 >= 0.5**2)
    if obj.shape == "square":
        return np.maximum(np.abs(u), np.abs(v)) <= 0.8
    if obj.shape == "diamond":
        return np.abs(u) + np.abs(v) <= 1.0
    if obj.shape == "cross":
        au, av = np.abs(u), np.abs(v)
        return ((au <= 0.3) & (av <= 1.0)) | ((av <= 0.3) & (au <= 1.0))
    if obj.shape == "triangle":
        # Apex at v = -0.9 (up), base at v = 0.7.
        return (v >= -0.9) & (v <= 0.7) & (np.abs(u) <= (v + 0.9) * (0.95 / 1.6))
    if obj.shape == "star":
        # Five points, one pointing up: the boundary radius falls linearly from 1 at a
        # point to 0.42 half-way between two points.
        sector = 2 * np.pi / 5
        t = ((np.arctan2(v, u) + np.pi / 2) / sector) % 1.0
        return np.sqrt(rho2) <= 0.42 + 0.58 * np.abs(2 * t - 1)
    raise ParameterError(f"unknown shape {obj.shape!r}")


def _jittered(colour: str, rng: np.random.Generator) -> np.ndarray:
    rgb = np.asarray(COLOURS[colour][0], dtype=np.float32)
    return rgb + rng.uniform(-_COLOUR_JITTER, _COLOUR_JITTER, 3).astype(np.float32)


def render_scene(scene: Scene, side: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``scene`` as a ``(side, side, 3)`` uint8 RGB image."""
    grid = tuple(np.indices((side, side), dtype=np.float32))
    image = texture_layer(
        scene.background_texture, _jittered(scene.background_colour, rng), grid, rng, scale=side / 8
    )
    for obj in scene.objects:
        mask = shape_mask(obj, grid, side)
        layer = texture_layer(obj.texture, _jittered(obj.colour, rng), grid, rng, scale=max(3.0, side / 16))
        np.copyto(image, layer, where=mask[..., None])
    image *= rng.uniform(*_BRIGHTNESS)
    image += _PIXEL_NOISE * rng.standard_normal(image.shape, dtype=np.float32)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)
