"""Pixel features, MR8, dense SIFT, codebooks and pyramid histograms (kcca_desc.kernels.image)."""

import cv2
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from skimage.color import rgb2lab
from sklearn.base import clone

from kcca_desc.kernels.image import codebook as codebook_module
from kcca_desc.kernels.image.codebook import Codebook, nearest_centres
from kcca_desc.kernels.image.features import as_float_grey, as_float_rgb, colour_features, grid_positions
from kcca_desc.kernels.image.histograms import n_pyramid_cells, pyramid_histograms
from kcca_desc.kernels.image.mr8 import _contrast_normalise, _rfs_responses_on_grid, mr8_responses, rfs_filter_bank, texture_features
from kcca_desc.kernels.image.sift import dense_sift

RNG = np.random.default_rng(0)
RGB8 = (RNG.random((24, 31, 3)) * 255).astype(np.uint8)


# ------------------------------------------------------------ input handling
@pytest.mark.parametrize("image", [
    RGB8,
    RGB8.astype(np.uint16) * 257,
    RGB8.astype(np.float64) / 255,
    np.concatenate([RGB8, np.full(RGB8.shape[:2] + (1,), 7, np.uint8)], axis=2),
])
def test_as_float_rgb_normalises_depths_and_alpha(image):
    np.testing.assert_allclose(as_float_rgb(image), RGB8 / 255.0, atol=1e-6)
    assert as_float_rgb(image).dtype == np.float32


def test_as_float_rgb_replicates_grey():
    grey = RGB8[:, :, 0]
    for image in (grey, grey[:, :, None]):
        out = as_float_rgb(image)
        assert out.shape == grey.shape + (3,)
        np.testing.assert_allclose(out, np.repeat(grey[:, :, None], 3, axis=2) / 255.0, atol=1e-7)


@pytest.mark.parametrize("image, message", [
    (np.zeros((4, 4, 2), np.uint8), "shape"),
    (np.zeros((2, 4, 4, 3), np.uint8), "shape"),
    (np.zeros((0, 4, 3), np.uint8), "empty"),
    (np.zeros((4, 4, 3), np.int32), "dtype"),
    (np.zeros((4, 4), bool), "dtype"),
    (np.full((4, 4), 1.5), r"\[0, 1\]"),
    (np.full((4, 4), np.nan), "NaN"),
])
def test_as_float_rgb_rejects_bad_input(image, message):
    with pytest.raises(ValueError, match=message):
        as_float_rgb(image)


def test_grid_is_centred_and_mirror_symmetric():
    rows, cols = grid_positions((10, 13), 3)
    np.testing.assert_array_equal(rows, [0, 3, 6, 9])
    np.testing.assert_array_equal(cols, [0, 3, 6, 9, 12])
    rows, cols = grid_positions((12, 224), 4)
    np.testing.assert_array_equal(rows[[0, -1]], [1, 9])  # (11 % 4) // 2 = 1
    assert cols[0] == 1 and cols[-1] == 221
    with pytest.raises(ValueError, match="step"):
        grid_positions((10, 10), 0)


# ------------------------------------------------------------------- colour
def test_colour_matches_skimage_lab():
    positions, lab = colour_features(RGB8, pixel_step=1)
    reference = rgb2lab(RGB8 / 255.0).reshape(-1, 3)
    np.testing.assert_allclose(lab, reference, atol=0.5)
    np.testing.assert_array_equal(positions[:3], [[0, 0], [0, 1], [0, 2]])


@pytest.mark.parametrize("pixel_step, width", [(1, 31), (3, 10), (2, 9)])
def test_colour_level0_histogram_is_flip_invariant(pixel_step, width):
    image = RGB8[:, :width]
    centres = np.random.default_rng(1).uniform([0, -60, -60], [100, 60, 60], (16, 3)).astype(np.float32)

    def level0(img):
        positions, lab = colour_features(img, pixel_step)
        return pyramid_histograms(nearest_centres(lab, centres), positions, img.shape[:2], 16, levels=0)

    np.testing.assert_allclose(level0(image), level0(image[:, ::-1]), atol=1e-7)


# ---------------------------------------------------------------------- MR8
def test_rfs_bank_normalisation():
    bank = rfs_filter_bank()
    assert bank.shape == (38, 49, 49)
    oriented_and_log = np.r_[0:36, 37]
    np.testing.assert_allclose(bank[oriented_and_log].sum(axis=(1, 2)), 0, atol=1e-12)
    np.testing.assert_allclose(np.abs(bank[oriented_and_log]).sum(axis=(1, 2)), 1)
    assert bank[36].min() > 0 and bank[36].sum() == pytest.approx(1)
    # The edge filter at orientation 0 is odd across rows, the bar filter even.
    np.testing.assert_allclose(bank[0], -bank[0][::-1], atol=1e-15)
    np.testing.assert_allclose(bank[18], bank[18][::-1], atol=1e-15)
    with pytest.raises(ValueError, match="odd"):
        rfs_filter_bank(48)


@settings(max_examples=15, deadline=None)
@given(height=st.integers(1, 40), width=st.integers(1, 40), step=st.integers(1, 5), seed=st.integers(0, 99))
def test_folded_fft_equals_direct_correlation(height, width, step, seed):
    grey = np.random.default_rng(seed).random((height, width))
    bank = rfs_filter_bank()
    direct = np.stack([cv2.filter2D(grey, cv2.CV_64F, f, borderType=cv2.BORDER_REFLECT_101) for f in bank])
    rows, cols = grid_positions(grey.shape, step)
    np.testing.assert_allclose(_rfs_responses_on_grid(grey, step, 49), direct[:, rows][:, :, cols], atol=1e-5)


def test_contrast_normalisation_formula():
    responses = np.random.default_rng(2).normal(size=(5, 8))
    responses[0] = 0
    out = _contrast_normalise(responses)
    for f, g in zip(responses, out):
        norm = np.sqrt(np.sum(f**2))
        expected = f * np.log(1 + norm / 0.03) / norm if norm > 0 else np.zeros(8)
        np.testing.assert_allclose(g, expected)


def _edge_and_bar(angle_degrees, size=121):
    """A soft step edge plus a dark bar, both through the centre at the given angle."""
    half = size // 2
    y, x = np.mgrid[-half:half + 1, -half:half + 1].astype(float)
    theta = np.deg2rad(angle_degrees)
    across = -np.sin(theta) * x + np.cos(theta) * y
    along = np.cos(theta) * x + np.sin(theta) * y
    return 0.5 + 0.3 * np.tanh(across / 2) - 0.3 * np.exp(-((along - 12) ** 2) / 8)


def test_mr8_invariant_to_quarter_turns():
    grey = np.random.default_rng(3).random((33, 33))
    turned = mr8_responses(np.rot90(grey))
    np.testing.assert_allclose(turned, np.rot90(mr8_responses(grey)), atol=1e-5)


@pytest.mark.parametrize("angle", [30, 60, 150])
def test_mr8_approximately_invariant_to_rotation(angle):
    centre = 60
    base = mr8_responses(_edge_and_bar(10))[centre, centre]
    rotated = mr8_responses(_edge_and_bar(10 + angle))[centre, centre]
    np.testing.assert_allclose(rotated, base, rtol=0.03, atol=0.03 * np.abs(base).max())


def test_mr8_constant_and_tiny_images():
    assert not np.any(mr8_responses(np.full((20, 20), 0.3)))
    for shape in [(1, 1), (8, 8), (3, 50)]:
        out = mr8_responses(np.random.default_rng(4).random(shape))
        assert out.shape == shape + (8,) and np.all(np.isfinite(out))


def test_texture_features_positions_follow_grid():
    positions, descriptors = texture_features(RGB8, pixel_step=2)
    rows, cols = grid_positions(RGB8.shape[:2], 2)
    assert descriptors.shape == (len(rows) * len(cols), 8) and descriptors.dtype == np.float32
    np.testing.assert_array_equal(positions[: len(cols), 1], cols)
    full = mr8_responses(as_float_grey(RGB8), pixel_step=1)
    np.testing.assert_allclose(descriptors[0], full[rows[0], cols[0]], rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------- SIFT
def test_sift_smaller_than_patch_gives_no_descriptor():
    positions, descriptors = dense_sift(np.zeros((8, 8, 3), np.uint8))
    assert positions.shape == (0, 2) and descriptors.shape == (0, 128)


def test_sift_grid_and_norms():
    image = (np.random.default_rng(5).random((40, 48)) * 65535).astype(np.uint16)
    positions, descriptors = dense_sift(image, step=8, patch_size=16)
    assert descriptors.shape == (len(positions), 128) and descriptors.dtype == np.float32
    assert positions[:, 0].min() >= 7.5 and positions[:, 0].max() <= 40 - 8.5
    np.testing.assert_allclose(np.linalg.norm(descriptors, axis=1), 1, atol=0.01)
    np.testing.assert_array_equal(dense_sift(np.full((20, 20), 0.5))[1], 0)
    np.testing.assert_array_equal(dense_sift(np.zeros((16, 16)))[0], [[7.5, 7.5]])


def test_sift_support_is_patch_size_pixels():
    # OpenCV's bins are 1.5 x KeyPoint.size wide: with size = patch/6 a 16-pixel
    # descriptor (4 px bins, bilinear spill to +-10 px, sigma-1.6 pre-smoothing
    # reaching ~6 px further) ignores every pixel 17 or more pixels from its
    # centre, while a 32-pixel one sees them.
    image = (np.random.default_rng(6).random((64, 64)) * 255).astype(np.uint8)
    y, x = np.mgrid[:64, :64]
    far = np.maximum(np.abs(y - 31.5), np.abs(x - 31.5)) >= 17
    changed = image.copy()
    changed[far] = 255 - changed[far]

    def at_centre(img, patch):
        positions, descriptors = dense_sift(img, step=4, patch_size=patch)
        return descriptors[np.flatnonzero((positions == 31.5).all(axis=1))[0]]

    np.testing.assert_array_equal(at_centre(image, 16), at_centre(changed, 16))
    assert np.abs(at_centre(image, 32) - at_centre(changed, 32)).max() > 0.05


# --------------------------------------------------------------- histograms
def _reference_pyramid(words, positions, shape, n_words, levels):
    cells = []
    for level in range(levels + 1):
        side = 2**level
        for r in range(side):
            for c in range(side):
                h = np.zeros(n_words)
                for w, (pr, pc) in zip(words, positions):
                    if int(pr * side // shape[0]) == r and int(pc * side // shape[1]) == c:
                        h[w] += 1
                cells.append(h / max(len(words), 1))
    return np.array(cells)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 60), n_words=st.integers(1, 7), levels=st.integers(0, 3),
       height=st.integers(1, 50), width=st.integers(1, 50), seed=st.integers(0, 999))
def test_pyramid_histograms_match_loops(n, n_words, levels, height, width, seed):
    rng = np.random.default_rng(seed)
    words = rng.integers(0, n_words, n)
    positions = np.column_stack([rng.uniform(0, height, n), rng.uniform(0, width, n)])
    positions = np.minimum(positions, np.nextafter([height, width], 0))
    hist = pyramid_histograms(words, positions, (height, width), n_words, levels=levels)
    assert hist.shape == (n_pyramid_cells(levels), n_words) and hist.dtype == np.float32
    np.testing.assert_allclose(hist, _reference_pyramid(words, positions, (height, width), n_words, levels),
                               atol=1e-6)
    starts = [n_pyramid_cells(level - 1) if level else 0 for level in range(levels + 2)]
    level_sums = [hist[a:b].sum() for a, b in zip(starts, starts[1:])]
    np.testing.assert_allclose(level_sums, 1.0 if n else 0.0, atol=1e-5)


@pytest.mark.parametrize("words, positions, message", [
    ([0, 3], [[0, 0], [1, 1]], "words must lie"),
    ([0, -1], [[0, 0], [1, 1]], "words must lie"),
    ([0, 1], [[0, 0], [10, 1]], "positions must lie"),
    ([0, 1], [[0, 0]], "shape"),
    ([0.5, 1], [[0, 0], [1, 1]], "integers"),
])
def test_pyramid_histograms_reject_bad_input(words, positions, message):
    with pytest.raises(ValueError, match=message):
        pyramid_histograms(np.array(words), np.array(positions), (10, 10), 3)


# ----------------------------------------------------------------- codebook
@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 50), k=st.integers(1, 9), d=st.integers(1, 6), seed=st.integers(0, 999),
       high_dim=st.booleans())
def test_nearest_centres_matches_brute_force(n, k, d, seed, high_dim):
    rng = np.random.default_rng(seed)
    X, centres = rng.normal(size=(n, d)), rng.normal(size=(k, d))
    if high_dim:  # the blocked-BLAS path
        X, centres = np.tile(X, (1, 17)), np.tile(centres, (1, 17))
    original = codebook_module._ASSIGN_BLOCK_ROWS
    codebook_module._ASSIGN_BLOCK_ROWS = 7  # exercise the blocking
    try:
        words = nearest_centres(X, centres)
    finally:
        codebook_module._ASSIGN_BLOCK_ROWS = original
    distances = ((X[:, None, :] - centres[None]) ** 2).sum(-1)
    chosen = distances[np.arange(n), words]
    np.testing.assert_allclose(chosen, distances.min(axis=1) if n else chosen, rtol=1e-4, atol=1e-4)


def _blobs(seed=0, n_images=12):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(6, 4)) * 5
    return [centres[rng.integers(0, 6, 80)] + rng.normal(size=(80, 4)) for _ in range(n_images)]


def test_codebook_is_deterministic_under_a_seed():
    data = _blobs()
    a = Codebook(n_words=6, max_samples_per_image=30, random_state=3).fit(data)
    b = Codebook(n_words=6, max_samples_per_image=30, random_state=3).fit(iter(data))
    c = Codebook(n_words=6, max_samples_per_image=30, random_state=4).fit(data)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert not np.array_equal(a.cluster_centers_, c.cluster_centers_)
    assert a.cluster_centers_.dtype == np.float32 and a.n_samples_fit_ == 12 * 30
    assert clone(a).get_params() == a.get_params()
    words = a.assign(data[0])
    assert words.shape == (80,) and words.min() >= 0 and words.max() < 6


def test_codebook_subsample_is_per_image_and_idempotent():
    book = Codebook(max_samples_per_image=10, random_state=1)
    data = _blobs()[0]
    first = book.subsample(data, 5)
    np.testing.assert_array_equal(first, book.subsample(data, 5))
    np.testing.assert_array_equal(book.subsample(first, 5), first)
    assert not np.array_equal(first, book.subsample(data, 6))
    assert len(first) == 10


def test_codebook_errors():
    with pytest.raises(ValueError, match="distinct"):
        Codebook(n_words=5).fit([np.zeros((50, 3))])
    with pytest.raises(ValueError, match="n_words"):
        Codebook(n_words=0).fit(_blobs())
    with pytest.raises(ValueError, match="dimensions differ"):
        Codebook(n_words=2).fit([np.ones((5, 3)), np.ones((5, 4))])
    book = Codebook(n_words=4).fit(_blobs())
    with pytest.raises(ValueError, match=r"\(k, 4\)"):
        book.assign(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        book.assign(np.full((3, 4), np.nan))
