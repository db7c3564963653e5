"""The scene model of the synthetic data set: its vocabulary and random scenes.

A scene is a textured, coloured background with one to three objects, each a
shape with a colour, a fill texture, a size and a position.  Every attribute
value comes with the words that may name it; the words of one value are
synonyms, so that an image's captions use different words for the same thing
and lexical-similarity text kernels have co-occurrences to learn from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "COLOURS",
    "SHAPES",
    "TEXTURES",
    "BACKGROUND_TEXTURES",
    "OBJECT_TEXTURES",
    "GRASS_COLOURS",
    "SIZES",
    "POSITIONS",
    "SceneObject",
    "Scene",
    "sample_scene",
]

# name -> (RGB, synonyms); the first synonym is the name itself.
COLOURS: dict[str, tuple[tuple[int, int, int], tuple[str, ...]]] = {
    "red": ((200, 30, 30), ("red", "crimson", "scarlet")),
    "green": ((40, 150, 40), ("green", "emerald", "jade")),
    "blue": ((30, 60, 200), ("blue", "azure", "cobalt")),
    "yellow": ((235, 210, 40), ("yellow", "golden", "lemon")),
    "orange": ((240, 130, 20), ("orange", "tangerine", "amber")),
    "purple": ((120, 40, 160), ("purple", "violet", "mauve")),
    "pink": ((240, 130, 180), ("pink", "rosy", "salmon")),
    "white": ((240, 240, 240), ("white", "snowy", "ivory")),
    "black": ((20, 20, 20), ("black", "ebony", "jet-black")),
    "brown": ((120, 70, 30), ("brown", "chocolate", "tan")),
    "grey": ((128, 128, 128), ("grey", "gray", "silver")),
}

SHAPES: dict[str, tuple[str, ...]] = {
    "circle": ("circle", "disc", "ball"),
    "square": ("square", "box", "block"),
    "triangle": ("triangle", "wedge", "pyramid"),
    "star": ("star", "starburst", "pentagram"),
    "ring": ("ring", "hoop", "donut"),
    "cross": ("cross", "plus sign", "crosshair"),
    "diamond": ("diamond", "rhombus", "lozenge"),
}

TEXTURES: dict[str, tuple[str, ...]] = {
    "plain": ("plain", "solid", "flat"),
    "striped": ("striped", "stripy", "lined"),
    "checked": ("checked", "checkered", "chequered"),
    "speckled": ("speckled", "grainy", "noisy"),
    "dotted": ("dotted", "spotted", "polka-dot"),
    "grassy": ("grassy", "leafy", "weedy"),
}
BACKGROUND_TEXTURES = ("plain", "striped", "checked", "speckled", "grassy")
OBJECT_TEXTURES = ("plain", "striped", "checked", "speckled", "dotted")
# Grass comes in grass colours, a correlation real captions have too ("a green field").
GRASS_COLOURS = ("green", "yellow", "brown")

# name -> ((smallest, largest) radius as a fraction of the image side, synonyms)
SIZES: dict[str, tuple[tuple[float, float], tuple[str, ...]]] = {
    "small": ((0.09, 0.13), ("small", "little", "tiny")),
    "large": ((0.17, 0.23), ("big", "large", "huge")),
}

# name -> ((x, y) centre as fractions of the image side, phrases)
POSITIONS: dict[str, tuple[tuple[float, float], tuple[str, ...]]] = {
    "left": ((0.27, 0.5), ("on the left", "at the left side", "to the left")),
    "right": ((0.73, 0.5), ("on the right", "at the right side", "to the right")),
    "top": ((0.5, 0.27), ("at the top", "near the top", "in the upper part")),
    "bottom": ((0.5, 0.73), ("at the bottom", "near the bottom", "in the lower part")),
    "centre": ((0.5, 0.5), ("in the middle", "in the centre", "in the center")),
}

_N_OBJECTS_P = (0.4, 0.35, 0.25)  # probabilities of 1, 2 and 3 objects
_POSITION_JITTER = 0.05  # fraction of the image side
_MAX_ROTATION = 0.4  # radians, for shapes that are not round


@dataclass(frozen=True)
class SceneObject:
    """One object of a scene; geometry in fractions of the image side."""

    shape: str
    colour: str
    texture: str
    size: str
    position: str
    centre: tuple[float, float]
    radius: float
    angle: float


@dataclass(frozen=True)
class Scene:
    """A background and its objects, in drawing order (later objects on top)."""

    background_colour: str
    background_texture: str
    objects: tuple[SceneObject, ...]


def _pick(rng: np.random.Generator, options) -> str:
    return options[rng.integers(len(options))]


def sample_scene(rng: np.random.Generator) -> Scene:
    """Draw a random scene: 1–3 objects at distinct positions, colours unlike the background's.

    Large objects are drawn before small ones, so a small object in front of
    a large one stays visible.
    """
    texture = _pick(rng, BACKGROUND_TEXTURES)
    background = _pick(rng, GRASS_COLOURS if texture == "grassy" else tuple(COLOURS))
    n_objects = 1 + rng.choice(len(_N_OBJECTS_P), p=_N_OBJECTS_P)
    object_colours = tuple(c for c in COLOURS if c != background)
    objects = []
    for position in rng.choice(list(POSITIONS), size=n_objects, replace=False):
        size = _pick(rng, tuple(SIZES))
        (lo, hi), _ = SIZES[size]
        (x, y), _ = POSITIONS[position]
        shape = _pick(rng, tuple(SHAPES))
        objects.append(SceneObject(
            shape=shape,
            colour=_pick(rng, object_colours),
            texture=_pick(rng, OBJECT_TEXTURES),
            size=size,
            position=str(position),
            centre=tuple(float(c) for c in np.array([x, y]) + rng.uniform(-_POSITION_JITTER, _POSITION_JITTER, 2)),
            radius=float(rng.uniform(lo, hi)),
            angle=0.0 if shape in ("circle", "ring") else float(rng.uniform(-_MAX_ROTATION, _MAX_ROTATION)),
        ))
    objects.sort(key=lambda o: o.size != "large")
    return Scene(background_colour=background, background_texture=texture, objects=tuple(objects))
