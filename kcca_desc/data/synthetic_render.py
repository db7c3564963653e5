"""Drawing synthetic scenes with NumPy masks (no per-pixel Python loops).

Each texture is a full-canvas layer computed from the pixel coordinate grid;
each shape is a boolean mask over the same grid in the object's rotated,
radius-normalised frame; an object is composited by selecting its layer under
its mask.  Colours are jittered per object and the whole image gets a
brightness change and mild noise, so that equal attribute values give similar,
not identical, pixels.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .._core.errors import ParameterError
from .synthetic_scenes import COLOURS, Scene, SceneObject

__all__ = ["render_scene", "shape_mask", "texture_layer", "TEXTURE_LAYERS", "SHAPE_MASKS"]

Grid = tuple[np.ndarray, np.ndarray]

_COLOUR_JITTER = 12.0  # per channel, in 0..255 units
_BRIGHTNESS = (0.9, 1.1)
_PIXEL_NOISE = 3.0
_GRAIN_NOISE = 40.0  # per-pixel noise of the "speckled" texture


def _contrast(rgb: np.ndarray) -> np.ndarray:
    """The second colour of a two-colour pattern: darker for light colours, lighter for dark ones."""
    luminance = rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    return rgb * 0.45 if luminance > 100 else rgb + (255.0 - rgb) * 0.55


# ------------------------------------------------------------------ textures
# Each draws a full-canvas layer (rgb, grid, rng, scale) -> (H, W, 3) float32; the two-colour
# patterns draw a random phase first, then their own parameters, from ``rng``.
def _plain(rgb: np.ndarray, grid: Grid, rng: np.random.Generator, scale: float) -> np.ndarray:
    return np.broadcast_to(rgb, grid[0].shape + (3,)).astype(np.float32)  # a writable copy


def _speckled(rgb: np.ndarray, grid: Grid, rng: np.random.Generator, scale: float) -> np.ndarray:
    noise = rng.standard_normal(grid[0].shape, dtype=np.float32) * _GRAIN_NOISE
    return rgb + noise[..., None]


def _grassy(rgb: np.ndarray, grid: Grid, rng: np.random.Generator, scale: float) -> np.ndarray:
    # Vertical blades: noise that varies fast across columns and slowly down them.
    shape = grid[0].shape
    blade_length = max(2, int(round(scale)))
    coarse = rng.uniform(-1.0, 1.0, (shape[0] // blade_length + 1, shape[1])).astype(np.float32)
    blades = np.repeat(coarse, blade_length, axis=0)[: shape[0]]
    shade = 0.75 + 0.3 * blades + 0.05 * rng.standard_normal(shape, dtype=np.float32)
    return rgb * shade[..., None]


def _stripes(ys, xs, rng: np.random.Generator, scale: float, phase_y: float, phase_x: float) -> np.ndarray:
    angle = rng.uniform(0.0, np.pi)
    u = xs * np.cos(angle) + ys * np.sin(angle) + phase_x
    return np.floor(u / (scale / 2)) % 2 == 1


def _checks(ys, xs, rng: np.random.Generator, scale: float, phase_y: float, phase_x: float) -> np.ndarray:
    return (np.floor((xs + phase_x) / scale) + np.floor((ys + phase_y) / scale)) % 2 == 1


def _dots(ys, xs, rng: np.random.Generator, scale: float, phase_y: float, phase_x: float) -> np.ndarray:
    dx = (xs + phase_x) % scale - scale / 2
    dy = (ys + phase_y) % scale - scale / 2
    return dx * dx + dy * dy <= (0.3 * scale) ** 2


def _two_colour(pattern: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """The texture of ``rgb`` with its contrast colour where ``pattern`` holds, at a random phase."""
    def layer(rgb: np.ndarray, grid: Grid, rng: np.random.Generator, scale: float) -> np.ndarray:
        ys, xs = grid
        phase_y, phase_x = rng.uniform(0.0, scale, 2)
        where_second = pattern(ys, xs, rng, scale, phase_y, phase_x)
        return np.where(where_second[..., None], _contrast(rgb), rgb).astype(np.float32)
    return layer


#: How each texture of :data:`~.synthetic_scenes.TEXTURES` is drawn:
#: ``(rgb, grid, rng, scale) -> (H, W, 3)`` float32 layer.
TEXTURE_LAYERS: dict[str, Callable[[np.ndarray, Grid, np.random.Generator, float], np.ndarray]] = {
    "plain": _plain,
    "striped": _two_colour(_stripes),
    "checked": _two_colour(_checks),
    "speckled": _speckled,
    "dotted": _two_colour(_dots),
    "grassy": _grassy,
}


def texture_layer(texture: str, rgb: np.ndarray, grid: Grid, rng: np.random.Generator, scale: float) -> np.ndarray:
    """A full-canvas ``(H, W, 3)`` float32 layer of ``texture`` in colour ``rgb``.

    ``scale`` (pixels) sets the period of stripes, checks and dots; ``grid``
    is ``(ys, xs)``, the pixel coordinates.
    """
    draw = TEXTURE_LAYERS.get(texture)
    if draw is None:
        raise ParameterError(f"unknown texture {texture!r}")
    return draw(rgb, grid, rng, scale)


# ------------------------------------------------------------------ shapes
# Each is a mask of the rotated coordinates (u, v) in units of the radius and rho2 = u² + v².
def _circle(u: np.ndarray, v: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    return rho2 <= 1.0


def _ring(u: np.ndarray, v: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    return (rho2 <= 1.0) & (rho2 >= 0.5**2)


def _square(u: np.ndarray, v: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    return np.maximum(np.abs(u), np.abs(v)) <= 0.8


def _diamond(u: np.ndarray, v: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    return np.abs(u) + np.abs(v) <= 1.0


def _cross(u: np.ndarray, v: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    au, av = np.abs(u), np.abs(v)
    return ((au <= 0.3) & (av <= 1.0)) | ((av <= 0.3) & (au <= 1.0))


def _triangle(u: np.ndarray, v: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    # Apex at v = -0.9 (up), base at v = 0.7.
    return (v >= -0.9) & (v <= 0.7) & (np.abs(u) <= (v + 0.9) * (0.95 / 1.6))


def _star(u: np.ndarray, v: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    # Five points, one pointing up: the boundary radius falls linearly from 1 at a
    # point to 0.42 half-way between two points.
    sector = 2 * np.pi / 5
    t = ((np.arctan2(v, u) + np.pi / 2) / sector) % 1.0
    return np.sqrt(rho2) <= 0.42 + 0.58 * np.abs(2 * t - 1)


#: The mask of each shape of :data:`~.synthetic_scenes.SHAPES`: ``(u, v, rho2) -> bool``, of the
#: object's rotated coordinates in units of its radius (``v`` grows downwards) and ``u² + v²``.
SHAPE_MASKS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "circle": _circle,
    "square": _square,
    "triangle": _triangle,
    "star": _star,
    "ring": _ring,
    "cross": _cross,
    "diamond": _diamond,
}


def shape_mask(obj: SceneObject, grid: Grid, side: int) -> np.ndarray:
    """Boolean ``(H, W)`` mask of the pixels covered by ``obj`` on a ``side``-pixel canvas."""
    inside = SHAPE_MASKS.get(obj.shape)
    if inside is None:
        raise ParameterError(f"unknown shape {obj.shape!r}")
    ys, xs = grid
    cx, cy = obj.centre[0] * side, obj.centre[1] * side
    r = obj.radius * side
    cos, sin = np.cos(obj.angle), np.sin(obj.angle)
    # Rotated coordinates in units of the radius; v grows downwards, as image rows do.
    u = ((xs - cx) * cos + (ys - cy) * sin) / r
    v = (-(xs - cx) * sin + (ys - cy) * cos) / r
    return inside(u, v, u * u + v * v)


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
