"""Caption preprocessing: each switch, determinism, tag alignment, caching."""

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from kcca_desc._core.validation import InvalidParameterError
from kcca_desc.text.preprocess import COMPOUNDS, KEPT_WORDS, STOP_WORDS, Preprocessor, _normalise_compounds

CAPTION = "Two Dogs run in FRONT of a snow-covered T-shirt stand ."


def run(text, **switches):
    tokens, tags = Preprocessor(cache=False, **switches).process([text])
    return tokens[0], None if tags is None else tags[0]


def test_default_pipeline():
    tokens, tags = run(CAPTION)
    assert tokens == ["two", "dog", "run", "front", "snow", "cover", "tshirt", "stand"]
    assert tags == ["CD", "NNS", "VB", "NN", "NN", "VBN", "NN", "VB"]


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


# Tokens as the tokeniser makes them (no whitespace): words, some tagged by their neighbours
# ("to run", "the run"), numbers, hyphenated words and single punctuation marks, the slash the
# tagger's string format escapes among them.
_TOKENS = st.one_of(st.sampled_from(["dog", "runs", "run", "to", "the", "can", "play", "water", "jumps", "a", "red",
                                     "ball", "in", "park", "quickly", "two", "snow-covered", "Man", "'s", "/", ".",
                                     ",", "42", "&", "tshirt"]),
                    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789-/&", min_size=1, max_size=8))


@settings(max_examples=200, deadline=None)
@given(st.lists(_TOKENS, min_size=1, max_size=15))
def test_tags_equal_the_pattern_taggers_on_the_joined_tokens(tokens):
    from textblob.en.taggers import PatternTagger

    expected = [tag for _, tag in PatternTagger().tag(" ".join(tokens), tokenize=False)]
    assert Preprocessor()._tag(tokens) == expected


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
    assert pre.process([CAPTION])[0][0] == ["two", "dog", "run", "in", "front", "of", "a", "snow", "cover", "tshirt",
                                            "stand"]


def test_disk_cache_round_trip():
    texts = [f"a dog number {i} runs" for i in range(1001)]
    first = Preprocessor().process(texts)
    second = Preprocessor().process(texts)
    assert first == second
    assert first[0][0] == ["dog", "number", "0", "run"]


def test_cached_preprocessing_is_keyed_by_the_versions_of_its_libraries(monkeypatch, tmp_path, request):
    # An upgrade of lemminflect that lemmatises a word otherwise must not be served the tokens of
    # the old release, nor the text Grams keyed by cache_params.
    import lemminflect

    from kcca_desc.text import preprocess

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    texts = [f"a dog is running in field {i}" for i in range(1001)]  # large enough for the disk cache
    before, params = Preprocessor().process(texts)[0], Preprocessor().cache_params()
    real_lemma, real_version = lemminflect.getLemma, preprocess._library_version
    monkeypatch.setattr(lemminflect, "getLemma", lambda word, upos, lemmatize_oov=True:
                        ("ran",) if word == "running" else real_lemma(word, upos, lemmatize_oov))
    monkeypatch.setattr(preprocess, "_library_version", lambda name: "99.0" if name == "lemminflect"
                        else real_version(name))
    preprocess._lemma.cache_clear()
    request.addfinalizer(preprocess._lemma.cache_clear)  # no lemma of the fake release outlives the test
    served, fresh = Preprocessor().process(texts)[0], Preprocessor(cache=False).process(texts)[0]
    assert before[0] == ["dog", "run", "field", "0"] and fresh[0] == ["dog", "ran", "field", "0"]
    assert served == fresh
    assert Preprocessor().cache_params() != params


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="not one string"):
        Preprocessor().process("a dog")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        Preprocessor().process(["a dog", 3])


def test_settings_make_a_scikit_learn_estimator():
    pre = Preprocessor(cache=False, stop_words=False)
    copied = clone(pre)
    assert copied is not pre and copied.get_params() == pre.get_params()
    assert copied.set_params(stop_words=True) is copied
    assert copied.process([CAPTION])[0][0] == run(CAPTION)[0]
    assert repr(pre).startswith("Preprocessor(lowercase=True,")
    with pytest.raises(TypeError):
        Preprocessor(False)  # keyword-only


def test_a_bad_setting_is_named_before_any_work(monkeypatch):
    monkeypatch.setattr(Preprocessor, "_process_all", lambda self, texts: pytest.fail("work started"))
    with pytest.raises(InvalidParameterError, match=r"^The 'lemmatise' parameter of Preprocessor must be"):
        Preprocessor(lemmatise="yes").process(["a dog"])


# Every entry of COMPOUNDS: spellings with a space and a hyphen -> (singular, a suffixed form).
COMPOUND_CASES = {
    "tee shirt": ("tshirt", "tee-shirts", "tshirts"),
    "wet suit": ("wetsuit", "wet-suits", "wetsuits"),
    "sweat shirt": ("sweatshirt", "sweat-shirts", "sweatshirts"),
    "four wheeler": ("fourwheeler", "four-wheelers", "fourwheelers"),
    "half pipe": ("halfpipe", "half-pipes", "halfpipes"),
    "hula hoop": ("hulahoop", "hula-hoops", "hulahoops"),
    "merry go round": ("merrygoround", "merry-go-rounds", "merrygorounds"),
    "spider man": ("spiderman", "Spider-Man", "spiderman"),
    "skate board": ("skateboard", "skate-boarders", "skateboarders"),
    "snow board": ("snowboard", "snow-boarding", "snowboarding"),
    "surf board": ("surfboard", "surf-boards", "surfboards"),
    "speed boat": ("speedboat", "speed-boats", "speedboats"),
    "bow tie": ("bowtie", "bow-ties", "bowties"),
}
RAW = dict(stop_words=False, lemmatise=False, pos_tags=False)


@pytest.mark.parametrize("spaced, expected", COMPOUND_CASES.items())
def test_every_compound_joins_its_spellings(spaced, expected):
    token, suffixed, suffixed_token = expected
    assert run(spaced, **RAW)[0] == [token]
    assert run(spaced.replace(" ", "-"), **RAW)[0] == [token]
    assert run(spaced.replace(" ", ""), **RAW)[0] == [token]
    assert run(suffixed, **RAW)[0] == [suffixed_token]
    # Only whole words: a longer word that merely contains the spelling is left alone.
    assert run(f"x{spaced}", **RAW)[0] == f"x{spaced}".split()


def test_compound_cases_cover_the_table():
    assert len(COMPOUND_CASES) == len(COMPOUNDS)
    assert {token for token, _, _ in COMPOUND_CASES.values()} == {
        replacement.replace("\\1", "") for replacement in COMPOUNDS.values()}


def _every_substitution(text):
    """The compounds normalised the slow, obviously correct way: every entry's substitution, in order."""
    for pattern, replacement in COMPOUNDS.items():
        text = re.sub(pattern, replacement, text)
    return text


# Words and separators that form the table's spellings (and near misses), so that drawn texts
# hold compounds, parts of them and longer words that contain them.
_PIECES = sorted({piece for spaced in COMPOUND_CASES for piece in spaced.split()}
                 | {"shirts", "boarders", "t", "xsurf", "dog", "in", "a"})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from([" ", "-", "", "  ", ". "])), max_size=12))
def test_compound_normalisation_equals_every_substitution(parts):
    text = "".join(word + separator for word, separator in parts)
    assert _normalise_compounds(text) == _every_substitution(text)


def test_spelling_correction_corrects_known_typos():
    pytest.importorskip("spellchecker", reason="spelling correction needs the optional extra pyspellchecker")
    assert run("an elephnt walks", spelling=True, lemmatise=False)[0] == ["elephant", "walks"]
    assert run("a brwn dog", spelling=True)[0] == ["brown", "dog"]


def test_spelling_correction_without_the_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "spellchecker", None)  # the import fails as when not installed
    with pytest.raises(ImportError, match=r"install it with `pip install \"kcca_desc\[spelling\]\"` \(from a clone of kcca_desc: `pip install -e \"\.\[spelling\]\"`\)"):
        run("a zqxwv runs", spelling=True)


def test_process_items_groups_like_the_input():
    pre = Preprocessor(cache=False)
    items = [["A dog runs .", "Two dogs play"], [], ["A red T-shirt"]]
    tokens, tags = pre.process_items(items)
    assert tokens == [[["dog", "run"], ["two", "dog", "play"]], [], [["red", "tshirt"]]]
    assert tags == [[["NN", "VBZ"], ["CD", "NNS", "VB"]], [], [["JJ", "NN"]]]
    flat_tokens, flat_tags = pre.process([c for caps in items for c in caps])
    assert [s for item in tokens for s in item] == flat_tokens
    assert [s for item in tags for s in item] == flat_tags
    assert "pos_tags=True" in repr(pre)


def test_tagging_leaves_no_unclosed_file_warning():
    # textblob's lexicon reader leaves its files to the garbage collector, which warns once per
    # file at the first tagging of a process: a fresh interpreter, with the warning as an error.
    import subprocess

    code = ("from kcca_desc.text.preprocess import Preprocessor\n"
            "print(Preprocessor(cache=False).process(['Two dogs run in the snow .'])[1])\n")
    done = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", code],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ResourceWarning" not in done.stderr and "NNS" in done.stdout
