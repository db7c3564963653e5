"""The synthetic data set: determinism, parameters, drawing against slow references, caption grammar."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc.data import ArrayImages, RenderedImages, make_synthetic
from kcca_desc._core.errors import ParameterError
from kcca_desc.data.synthetic_captions import describe_scene
from kcca_desc.data.synthetic_render import SHAPE_MASKS, TEXTURE_LAYERS, render_scene, shape_mask, texture_layer
from kcca_desc.data.synthetic_scenes import (
    COLOURS,
    POSITIONS,
    SHAPES,
    SIZES,
    TEXTURES,
    Scene,
    SceneObject,
    sample_scene,
)


def image_bytes(data) -> list[bytes]:
    return [data.images.load(i).tobytes() for i in range(len(data))]


# ------------------------------------------------------------------ data set
def test_same_seed_same_bytes_other_seed_differs():
    a, b = make_synthetic(n_images=25, seed=7, image_size=32), make_synthetic(n_images=25, seed=7, image_size=32)
    assert image_bytes(a) == image_bytes(b) and a.captions == b.captions
    c = make_synthetic(n_images=25, seed=8, image_size=32)
    assert all(x != y for x, y in zip(image_bytes(a), image_bytes(c)))
    assert a.captions != c.captions


def test_image_i_depends_only_on_seed_and_i():
    small, large = make_synthetic(n_images=5, image_size=24), make_synthetic(n_images=12, image_size=24)
    assert image_bytes(small) == image_bytes(large)[:5] and small.captions == large.captions[:5]


def test_defaults_shape_and_splits():
    data = make_synthetic(n_images=50, seed=1)
    assert data.name == "synthetic" and isinstance(data.images, ArrayImages)
    image = data.images.load(0)
    assert image.shape == (96, 96, 3) and image.dtype == np.uint8
    assert not image.flags.writeable
    assert all(len(c) == 5 for c in data.captions)
    assert {s: (int(i[0]), len(i)) for s, i in data.splits.items()} == {"train": (0, 30), "dev": (30, 10),
                                                                          "test": (40, 10)}
    assert data.image_ids[3] == "synthetic_00003" and data.hodosh_caption == 2
    assert len(data.metadata["scenes"]) == 50 and data.metadata["seed"] == 1


def test_options():
    data = make_synthetic(n_images=10, image_size=20, n_captions=2, split_fractions=(0.5, 0.0, 0.3))
    assert data.images.load(9).shape == (20, 20, 3)
    assert all(len(c) == 2 for c in data.captions) and data.hodosh_caption == 1
    assert sorted(data.splits) == ["test", "train"] and len(data.splits["test"]) == 3
    assert sum(len(i) for i in data.splits.values()) == 8  # two images in no split


@pytest.mark.parametrize("kwargs, message", [
    ({"n_images": 0}, "n_images must be an integer >= 1, got 0"),
    ({"n_images": 2.5}, "n_images must be an integer"),
    ({"n_images": True}, "n_images must be an integer"),
    ({"seed": -1}, "seed must be an integer >= 0"),
    ({"seed": None}, "seed must be an integer >= 0, got None"),
    ({"image_size": 8}, "image_size must be an integer >= 16"),
    ({"n_captions": 0}, "n_captions must be an integer >= 1"),
    ({"split_fractions": (0.5, 0.5)}, "split_fractions must be 3 non-negative numbers"),
    ({"split_fractions": (0.5, -0.1, 0.2)}, "split_fractions must be 3 non-negative numbers"),
    ({"split_fractions": (0.5, float("nan"), 0.2)}, "split_fractions must be 3 non-negative numbers"),
    ({"split_fractions": (0.6, 0.3, 0.3)}, "must sum to at most 1"),
    ({"n_images": 2, "split_fractions": (0.8, 0.1, 0.1)}, "too few for split_fractions.*dev, test would be empty"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_synthetic(**kwargs)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.integers(16, 40))
def test_any_seed_gives_valid_images(seed, size):
    data = make_synthetic(n_images=3, seed=seed, image_size=size, split_fractions=(1.0, 0.0, 0.0))
    for i in range(3):
        image = data.images.load(i)
        assert image.shape == (size, size, 3) and image.dtype == np.uint8
        assert image.std() > 0  # something was drawn
    assert all(c.strip() for caps in data.captions for c in caps)


# ------------------------------------------------------------------ scenes
def test_scene_constraints():
    rng = np.random.default_rng(0)
    for _ in range(300):
        scene = sample_scene(rng)
        assert 1 <= len(scene.objects) <= 3
        assert len({o.position for o in scene.objects}) == len(scene.objects)
        assert all(o.colour != scene.background_colour for o in scene.objects)
        sizes = [o.size for o in scene.objects]
        assert sizes == sorted(sizes, key=lambda s: s != "large")  # large ones drawn first
        for o in scene.objects:
            (lo, hi), _ = SIZES[o.size]
            assert lo <= o.radius <= hi


# ------------------------------------------------------------------ drawing
def reference_inside(shape: str, u: float, v: float) -> bool:
    """Per-point membership, written geometrically (slow and obvious)."""
    if shape == "circle":
        return math.hypot(u, v) <= 1
    if shape == "ring":
        return 0.5 <= math.hypot(u, v) <= 1
    if shape == "square":
        return -0.8 <= u <= 0.8 and -0.8 <= v <= 0.8
    if shape == "diamond":
        return abs(u) + abs(v) <= 1
    if shape == "cross":
        return (abs(u) <= 0.3 and abs(v) <= 1) or (abs(v) <= 0.3 and abs(u) <= 1)
    if shape == "triangle":
        # Inside iff on the same side of all three edges of apex (0, -0.9), base corners (±0.95, 0.7).
        corners = [(0.0, -0.9), (0.95, 0.7), (-0.95, 0.7)]
        signs = []
        for (x1, y1), (x2, y2) in zip(corners, corners[1:] + corners[:1]):
            signs.append((x2 - x1) * (v - y1) - (y2 - y1) * (u - x1))
        return all(s >= -1e-9 for s in signs) or all(s <= 1e-9 for s in signs)
    if shape == "star":
        angle = (math.degrees(math.atan2(v, u)) + 90) % 72  # degrees past the nearest point clockwise
        boundary = 0.42 + 0.58 * abs(angle / 36 - 1)
        return math.hypot(u, v) <= boundary
    raise AssertionError(shape)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_shape_mask_matches_pointwise_reference(shape):
    # Irrational-looking geometry keeps pixel centres off the boundaries, where float32
    # and float64 could disagree.
    side, cx_frac, cy_frac, r_frac = 40, 0.4513, 0.5471, 0.3037
    obj = SceneObject(shape, "red", "plain", "large", "centre", centre=(cx_frac, cy_frac), radius=r_frac, angle=0.3)
    mask = shape_mask(obj, tuple(np.indices((side, side), dtype=np.float32)), side)
    cx, cy, r = cx_frac * side, cy_frac * side, r_frac * side
    expected = np.zeros_like(mask)
    for y in range(side):
        for x in range(side):
            dx, dy = x - cx, y - cy
            u = (dx * math.cos(0.3) + dy * math.sin(0.3)) / r
            v = (-dx * math.sin(0.3) + dy * math.cos(0.3)) / r
            expected[y, x] = reference_inside(shape, u, v)
    assert np.array_equal(mask, expected)
    assert expected.sum() > 20


@pytest.mark.parametrize("shape, area", [
    ("circle", math.pi), ("ring", math.pi * 0.75), ("square", 1.6**2), ("diamond", 2.0),
    ("cross", 2 * 0.6 * 2 - 0.6**2), ("triangle", 0.95 * 1.6),
])
def test_shape_areas(shape, area):
    side, radius = 400, 0.2
    obj = SceneObject(shape, "red", "plain", "large", "centre", centre=(0.5, 0.5), radius=radius, angle=0.2)
    mask = shape_mask(obj, tuple(np.indices((side, side), dtype=np.float32)), side)
    assert mask.sum() / (radius * side) ** 2 == pytest.approx(area, rel=0.02)


@pytest.mark.parametrize("texture, second_share", [("plain", 0.0), ("striped", 0.5), ("checked", 0.5),
                                                   ("dotted", math.pi * 0.09)])
def test_two_colour_textures(texture, second_share):
    rgb = np.array([200.0, 30.0, 30.0], np.float32)
    layer = texture_layer(texture, rgb, tuple(np.indices((120, 120), dtype=np.float32)),
                          np.random.default_rng(0), scale=12.0)
    is_base = np.all(layer == rgb, axis=-1)
    colours = np.unique(layer.reshape(-1, 3), axis=0)
    assert len(colours) == (1 if texture == "plain" else 2)
    assert 1 - is_base.mean() == pytest.approx(second_share, abs=0.05)


def test_rendered_colours_follow_the_scene():
    obj = SceneObject("square", "blue", "plain", "large", "centre", centre=(0.5, 0.5), radius=0.25, angle=0.0)
    scene = Scene("yellow", "plain", (obj,))
    image = render_scene(scene, 64, np.random.default_rng(3)).astype(float)
    inside = image[28:36, 28:36].reshape(-1, 3).mean(axis=0)
    outside = image[:6, :6].reshape(-1, 3).mean(axis=0)
    assert np.abs(inside - COLOURS["blue"][0]).max() < 40
    assert np.abs(outside - COLOURS["yellow"][0]).max() < 40


def test_every_shape_and_texture_is_drawn_and_others_are_refused():
    assert list(SHAPE_MASKS) == list(SHAPES) and list(TEXTURE_LAYERS) == list(TEXTURES)
    grid = tuple(np.indices((8, 8), dtype=np.float32))
    obj = SceneObject("hexagon", "red", "plain", "large", "centre", centre=(0.5, 0.5), radius=0.3, angle=0.0)
    with pytest.raises(ParameterError, match="^unknown shape 'hexagon'$"):
        shape_mask(obj, grid, 8)
    with pytest.raises(ParameterError, match="^unknown texture 'wavy'$"):
        texture_layer("wavy", np.zeros(3, np.float32), grid, np.random.default_rng(0), scale=4.0)


# ------------------------------------------------------------------ captions
FUNCTION_WORDS = set("a an of and on in with there is are shown picture image showing front over against the".split())
VOCABULARY = (
    FUNCTION_WORDS
    | {w for _, words in COLOURS.values() for s in words for w in s.split()}
    | {w for words in SHAPES.values() for s in words for w in s.split()}
    | {w for words in TEXTURES.values() for s in words for w in s.split()}
    | {w for _, words in SIZES.values() for s in words for w in s.split()}
    | {w for _, words in POSITIONS.values() for s in words for w in s.split()}
    | {"background", "backdrop", "surface", "field", "lawn", "meadow"}
)


@pytest.fixture(scope="module")
def captioned():
    return make_synthetic(n_images=150, image_size=16, seed=11)


def tokens(caption: str) -> list[str]:
    return re.findall(r"[a-z-]+", caption.lower())


def test_captions_use_only_the_grammar_vocabulary(captioned):
    words = {w for caps in captioned.captions for c in caps for w in tokens(c)}
    assert words <= VOCABULARY, words - VOCABULARY


def test_every_caption_names_the_main_object(captioned):
    for scene, caps in zip(captioned.metadata["scenes"], captioned.captions):
        synonyms = SHAPES[scene.objects[0].shape]
        for caption in caps:
            assert any(re.search(rf"\b{s}\b", caption.lower()) for s in synonyms), (caption, scene)


def test_colour_words_are_true_and_synonyms_all_used(captioned):
    used = set()
    for scene, caps in zip(captioned.metadata["scenes"], captioned.captions):
        true_colours = {scene.background_colour} | {o.colour for o in scene.objects}
        allowed = {w for c in true_colours for w in COLOURS[c][1]}
        all_colour_words = {w for _, words in COLOURS.values() for w in words}
        for caption in caps:
            said = set(tokens(caption)) & all_colour_words
            assert said <= allowed, (caption, scene)
            used |= said
    assert used == {w for _, words in COLOURS.values() for w in words}


def test_captions_of_an_image_vary():
    scene = sample_scene(np.random.default_rng(5))
    rng = np.random.default_rng(6)
    assert len({describe_scene(scene, rng) for _ in range(20)}) > 10


@given(seed=st.integers(0, 2**32 - 1), n_images=st.integers(5, 9), vocabulary=st.sampled_from([None, 50]))
@settings(max_examples=15, deadline=None)
def test_rendered_images_equal_held_images(seed, n_images, vocabulary):
    held = make_synthetic(n_images=n_images, seed=seed, image_size=16, vocabulary=vocabulary)
    rendered = make_synthetic(n_images=n_images, seed=seed, image_size=16, vocabulary=vocabulary,
                              keep_images=False)
    assert isinstance(rendered.images, RenderedImages) and rendered.captions == held.captions
    assert image_bytes(rendered) == image_bytes(held)
    assert [rendered.images.key(i) for i in range(n_images)] == [held.images.key(i) for i in range(n_images)]
    assert not rendered.images.load(0).flags.writeable and rendered.images.check(0) is None
    picked = [n_images - 1, 0]
    sub, held_sub = rendered.images.subset(picked), held.images.subset(picked)
    assert sub.ids == held_sub.ids and sub.load(0).tobytes() == held_sub.load(0).tobytes()
    assert sub.key(1) == held_sub.key(1)


def test_rendered_images_check_their_lengths_and_keep_images_is_a_bool():
    with pytest.raises(ValueError, match="differ in length"):
        RenderedImages(0, 16, [0, 1], ["a"], ["k0", "k1"])
    with pytest.raises(ParameterError, match="keep_images must be True or False, got 'no'"):
        make_synthetic(n_images=10, keep_images="no")
