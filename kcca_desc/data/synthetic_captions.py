"""A small caption grammar for synthetic scenes.

Each caption names the main object (always) and the other objects (usually),
each as ``[size] [colour] [texture] shape [position]`` with every modifier
optional and every word drawn from its synonyms; the background is named by
most captions; a template varies the word order ("a red striped circle on the
left on a green field", "on a grassy background there is a big scarlet
ball").  Like human captions, the five captions of an image then share the
content words for salient attributes but not always the same words.
"""

from __future__ import annotations

import numpy as np

from .synthetic_scenes import COLOURS, POSITIONS, SHAPES, SIZES, TEXTURES, Scene, SceneObject

__all__ = ["describe_scene"]

# How often each part of a caption is said.
_P_SIZE = 0.5
_P_COLOUR = 0.8
_P_TEXTURE = 0.55
_P_PLAIN_TEXTURE = 0.15  # "plain" is rarely worth saying
_P_TEXTURE_FIRST = 0.3  # "striped red ball" rather than "red striped ball"
_P_POSITION = 0.65
_P_SECONDARY_OBJECT = 0.75
_P_BACKGROUND = 0.85
_P_BACKGROUND_COLOUR = 0.75
_P_BACKGROUND_TEXTURE = 0.7
_P_CAPITALISED = 0.5
_P_FULL_STOP = 0.5

_BACKGROUND_NOUNS = ("background", "backdrop", "surface")
_GRASS_NOUNS = ("field", "lawn", "meadow")

# {objects}, {background}; {be} agrees with the number of objects.
_TEMPLATES = (
    "{objects} on {background}",
    "{objects} against {background}",
    "on {background} there {be} {objects}",
    "{background} with {objects}",
    "a picture of {objects} in front of {background}",
    "an image showing {objects} over {background}",
    "{objects} {be} shown on {background}",
)
_NO_BACKGROUND_TEMPLATES = ("{objects}", "a picture of {objects}", "there {be} {objects}")


def _pick(rng: np.random.Generator, words) -> str:
    return words[rng.integers(len(words))]


def _with_article(words: list[str]) -> str:
    phrase = " ".join(words)
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def _object_phrase(obj: SceneObject, rng: np.random.Generator) -> str:
    modifiers = []
    if rng.random() < _P_COLOUR:
        modifiers.append(_pick(rng, COLOURS[obj.colour][1]))
    if rng.random() < (_P_PLAIN_TEXTURE if obj.texture == "plain" else _P_TEXTURE):
        texture = _pick(rng, TEXTURES[obj.texture])
        modifiers.insert(0 if rng.random() < _P_TEXTURE_FIRST else len(modifiers), texture)
    if rng.random() < _P_SIZE:
        modifiers.insert(0, _pick(rng, SIZES[obj.size][1]))
    phrase = _with_article(modifiers + [_pick(rng, SHAPES[obj.shape])])
    if rng.random() < _P_POSITION:
        phrase += " " + _pick(rng, POSITIONS[obj.position][1])
    return phrase


def _background_phrase(scene: Scene, rng: np.random.Generator) -> str:
    grass = scene.background_texture == "grassy"
    modifiers = []
    if rng.random() < _P_BACKGROUND_COLOUR:
        modifiers.append(_pick(rng, COLOURS[scene.background_colour][1]))
    if rng.random() < _P_BACKGROUND_TEXTURE:
        modifiers.append(_pick(rng, TEXTURES[scene.background_texture]))
    return _with_article(modifiers + [_pick(rng, _GRASS_NOUNS if grass else _BACKGROUND_NOUNS)])


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def describe_scene(scene: Scene, rng: np.random.Generator) -> str:
    """One random caption of ``scene``.

    The main object is the scene's first (largest) object; the others follow
    in random order, each left out with probability 1 - 0.75.
    """
    main, *others = scene.objects
    others = [others[i] for i in rng.permutation(len(others)) if rng.random() < _P_SECONDARY_OBJECT]
    objects = [main] + others
    be = "is" if len(objects) == 1 else "are"
    object_text = _join([_object_phrase(o, rng) for o in objects])
    if rng.random() < _P_BACKGROUND:
        template = _pick(rng, _TEMPLATES)
        text = template.format(objects=object_text, background=_background_phrase(scene, rng), be=be)
    else:
        text = _pick(rng, _NO_BACKGROUND_TEMPLATES).format(objects=object_text, be=be)
    if rng.random() < _P_CAPITALISED:
        text = text[0].upper() + text[1:]
    if rng.random() < _P_FULL_STOP:
        text += " ."
    return text
