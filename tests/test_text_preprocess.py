"""Caption preprocessing: each switch, determinism, tag alignment, caching."""

import importlib.util

import pytest

from kcca_desc.text.preprocess import COMPOUNDS, KEPT_WORDS, STOP_WORDS, Preprocessor

CAPTION = "Two Dogs run in FRONT of a snow-covered T-shirt stand ."


def run(text, **switches):
    tokens, tags = Preprocessor(cache=False, **switches).process([text])
    return tokens[0], None if tags is None else tags[0]


def test_default_pipeline():
    tokens, tags = run(CAPTION)
    assert tokens == ["two", "dog", "run", "front", "snow", "cover", "tshirt", "stand"]
    assert len(tags) == len(tokens)
    assert tags[1].startswith("NN") and tags[0] == "CD"


@pytest.mark.parametrize("variant", ["t shirt", "tee shirt", "t-shirt", "tee-shirt", "tshirt", "T-Shirt"])
def test_compound_spellings_normalise(variant):
    assert run(f"a man in a {variant}")[0] == ["man", "tshirt"]
    assert run(f"two {variant}s", lemmatise=False)[0] == ["two", "tshirts"]


def test_switches_off_keep_the_raw_tokens():
    tokens, tags = run(CAPTION, lowercase=False, strip_punctuation=False, split_hyphens=False,
                       normalise_compounds=False, stop_words=False, lemmatise=False, pos_tags=False)
    assert tokens == ["Two", "Dogs", "run", "in", "FRONT", "of", "a", "snow-covered", "T-shirt", "stand", "."]
    assert tags is None


def test_each_switch_changes_only_its_step():
    base = dict(stop_words=False, lemmatise=False, pos_tags=False)
    assert run("A dog's ball", **base)[0] == ["a", "dog", "ball"]
    assert run("A dog's ball", strip_punctuation=False, **base)[0] == ["a", "dog", "'s", "ball"]
    assert run("snow-covered hill", **base)[0] == ["snow", "covered", "hill"]
    assert run("snow-covered hill", split_hyphens=False, **base)[0] == ["snow-covered", "hill"]
    assert run("the children are swimming", lemmatise=False)[0] == ["children", "swimming"]
    assert run("the children are swimming")[0] == ["child", "swim"]


def test_tags_are_computed_before_stop_words_and_stay_aligned():
    tokens, tags = run("The man is riding a bike down the hill")
    assert tokens == ["man", "ride", "bike", "down", "hill"]
    assert tags == ["NN", "VBG", "NN", "RB", "NN"]


def test_stop_list_keeps_content_words():
    assert KEPT_WORDS <= {w for w in KEPT_WORDS if w not in STOP_WORDS}
    assert {"back", "front", "up", "two", "fire"}.isdisjoint(STOP_WORDS)
    assert {"the", "a", "is", "of"} <= STOP_WORDS
    assert run("a dog jumps up on the back of a sofa")[0] == ["dog", "jump", "up", "back", "sofa"]


def test_empty_and_stop_word_only_captions():
    tokens, tags = Preprocessor(cache=False).process(["", "the of a .", "!!!"])
    assert tokens == [[], [], []] and tags == [[], [], []]


def test_deterministic_and_memoised():
    pre = Preprocessor(cache=False)
    first = pre.process([CAPTION, "a cat"])
    assert pre.process([CAPTION, "a cat"]) == first
    assert Preprocessor(cache=False).process([CAPTION, "a cat"]) == first
    pre.stop_words = False  # a changed switch is not served from the memo
    assert pre.process([CAPTION])[0][0] != first[0][0]


def test_disk_cache_round_trip():
    texts = [f"a dog number {i} runs" for i in range(1001)]
    first = Preprocessor().process(texts)
    second = Preprocessor().process(texts)
    assert first == second
    assert first[0][0] == ["dog", "number", "0", "run"]


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="not one string"):
        Preprocessor().process("a dog")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        Preprocessor().process(["a dog", 3])


def test_compound_table_is_documented_regexes():
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in COMPOUNDS.items())


def test_spelling_correction_is_an_optional_extra():
    if importlib.util.find_spec("spellchecker") is None:
        with pytest.raises(ImportError, match="pip install pyspellchecker"):
            run("a dgo runs", spelling=True)
    else:
        assert run("a dgo runs", spelling=True, lemmatise=False)[0][0] in {"dog", "ego", "go", "do"}


def test_process_items_groups_like_the_input():
    pre = Preprocessor(cache=False)
    items = [["A dog runs .", "Two dogs play"], [], ["A red T-shirt"]]
    tokens, tags = pre.process_items(items)
    assert [len(t) for t in tokens] == [2, 0, 1]
    flat_tokens, flat_tags = pre.process([c for caps in items for c in caps])
    assert [s for item in tokens for s in item] == flat_tokens
    assert [s for item in tags for s in item] == flat_tags
    assert "pos_tags=True" in repr(pre)
