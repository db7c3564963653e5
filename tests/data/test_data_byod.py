"""Karpathy-JSON and TSV loaders: good files, split aliases, paths, every bad-input case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcca_desc.data import DataFormatError, load_karpathy_json, load_tsv


def touch_images(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"placeholder; loaders do not decode")


# ------------------------------------------------------------------ JSON
def karpathy_items() -> list[dict]:
    return [
        {"filename": "a.jpg", "split": "train", "sentences": [{"raw": "a dog ."}, {"raw": "a brown dog"}]},
        {"filename": "b.jpg", "split": "restval", "sentences": [{"raw": "a cat"}]},
        {"filename": "c.jpg", "filepath": "sub", "split": "val", "sentences": [{"raw": " a bird "}]},
        {"filename": "d.jpg", "split": "test", "sentences": [{"raw": "a fish"}, {"raw": "fish"}, {"raw": "a carp"}]},
    ]


@pytest.fixture
def json_setup(tmp_path):
    images = tmp_path / "imgs"
    touch_images(images, "a.jpg", "b.jpg", "sub/c.jpg", "d.jpg")

    def write(items=None, extra=None) -> Path:
        data = {"dataset": "toy", "images": karpathy_items() if items is None else items, **(extra or {})}
        path = tmp_path / "dataset_toy.json"
        path.write_text(json.dumps(data, indent=1))
        return path

    return write, images


def test_json_good_file(json_setup):
    write, images = json_setup
    data = load_karpathy_json(write(), images)
    assert data.name == "toy"
    assert data.image_ids == ("a.jpg", "b.jpg", "sub/c.jpg", "d.jpg")
    assert data.captions[0] == ("a dog .", "a brown dog") and data.captions[2] == ("a bird",)
    assert {s: idx.tolist() for s, idx in data.splits.items()} == {"train": [0, 1], "dev": [2], "test": [3]}
    assert data.images.paths[2] == images / "sub" / "c.jpg"
    view = data.view("test", "hodosh")
    assert view.caption_ids == ("d.jpg#2",) and view.captions == ("a carp",)


def test_json_name_defaults_to_file_stem(json_setup, tmp_path):
    write, images = json_setup
    path = write()
    data = json.loads(path.read_text())
    del data["dataset"]
    path.write_text(json.dumps(data))
    assert load_karpathy_json(path, images).name == "dataset_toy"


@pytest.mark.parametrize("mutate, message", [
    (lambda items: items[1].update(split="validation"), r"images\[1\] \(b.jpg\): unknown split 'validation'"),
    (lambda items: items[1].pop("split"), r"images\[1\] \(b.jpg\): unknown split None"),
    (lambda items: items[2].pop("filename"), r'images\[2\]: expected an object with a "filename" string'),
    (lambda items: items[0].update(filepath=3), r'images\[0\]: "filepath" must be a string, got 3'),
    (lambda items: items[0].update(sentences=[]), r'images\[0\] \(a.jpg\): expected a non-empty "sentences"'),
    (lambda items: items[3]["sentences"][1].update(raw="  "), r"images\[3\] \(d.jpg\): sentences\[1\] has no"),
    (lambda items: items[3]["sentences"].append({"tokens": ["x"]}), r"sentences\[3\] has no non-empty \"raw\""),
    (lambda items: items.append(dict(items[0])), r"images\[4\] \(a.jpg\): image listed twice \(first as images\[0\]\)"),
    (lambda items: items[1].update(filename="zz.jpg"), r"images\[1\] \(zz.jpg\): image file not found: .*zz.jpg"),
])
def test_json_bad_item_names_file_and_item(json_setup, mutate, message):
    write, images = json_setup
    items = karpathy_items()
    mutate(items)
    with pytest.raises(DataFormatError, match=message) as info:
        load_karpathy_json(write(items), images)
    assert str(info.value).startswith(str(images.parent / "dataset_toy.json"))


def test_json_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"images": [\n{"filename": "a.jpg",\n "split": train}\n]}')
    with pytest.raises(DataFormatError, match=r"broken.json, line 3: invalid JSON"):
        load_karpathy_json(path, tmp_path)


@pytest.mark.parametrize("content", ['[1, 2]', '{"images": {}}', '{"pictures": []}'])
def test_json_wrong_top_level(tmp_path, content):
    path = tmp_path / "odd.json"
    path.write_text(content)
    with pytest.raises(DataFormatError, match='expected an object with an "images" list'):
        load_karpathy_json(path, tmp_path)


def test_json_missing_files(json_setup, tmp_path):
    write, images = json_setup
    with pytest.raises(FileNotFoundError, match="absent.json"):
        load_karpathy_json(tmp_path / "absent.json", images)
    with pytest.raises(FileNotFoundError, match="image directory not found: .*nowhere"):
        load_karpathy_json(write(), tmp_path / "nowhere")


def test_json_without_images(json_setup):
    write, images = json_setup
    with pytest.raises(DataFormatError, match=r"dataset_toy.json: no images$"):
        load_karpathy_json(write(items=[]), images)


# ------------------------------------------------------------------ TSV
GOOD_TSV = (
    "image_path\tcaption\tsplit\n"
    "pics/a.jpg\ta dog .\ttrain\n"
    "pics/a.jpg\ta brown dog\ttrain\n"
    "\n"
    "pics/b.jpg\ta cat\tval\n"
    "pics/c.jpg\ta bird\ttest\n"
    "pics/c.jpg\ta small bird\ttest\n"
    "pics/c.jpg\ta finch\ttest\n"
)


def write_tsv(folder: Path, text: str, name: str = "toy.tsv") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


def test_tsv_good_file_relative_to_its_folder(tmp_path):
    touch_images(tmp_path, "pics/a.jpg", "pics/b.jpg", "pics/c.jpg")
    data = load_tsv(write_tsv(tmp_path, GOOD_TSV))
    assert data.name == "toy"
    assert data.image_ids == ("pics/a.jpg", "pics/b.jpg", "pics/c.jpg")
    assert data.captions == (("a dog .", "a brown dog"), ("a cat",), ("a bird", "a small bird", "a finch"))
    assert {s: idx.tolist() for s, idx in data.splits.items()} == {"train": [0], "dev": [1], "test": [2]}
    assert data.images.paths[1] == tmp_path / "pics" / "b.jpg"
    assert data.view("test", "hodosh").captions == ("a finch",)


def test_tsv_image_root_and_absolute_paths(tmp_path):
    touch_images(tmp_path / "elsewhere", "pics/a.jpg", "pics/b.jpg")
    touch_images(tmp_path, "abs.jpg")
    text = f"pics/a.jpg\tone\ttrain\npics/b.jpg\ttwo\trestval\n{tmp_path / 'abs.jpg'}\tthree\tdev\n"
    data = load_tsv(write_tsv(tmp_path / "meta", text), image_root=tmp_path / "elsewhere")
    assert data.images.paths[0] == tmp_path / "elsewhere" / "pics" / "a.jpg"
    assert data.images.paths[2] == tmp_path / "abs.jpg"
    assert data.splits["train"].tolist() == [0, 1]


@pytest.mark.parametrize("bad_line, message", [
    ("pics/c.jpg\tno split", "expected 3 tab-separated fields, found 2"),
    ("pics/c.jpg\ta\tb\ttest", "expected 3 tab-separated fields, found 4"),
    ("\ta caption\ttest", "empty image path"),
    ("pics/c.jpg\t \ttest", "empty caption for image 'pics/c.jpg'"),
    ("pics/c.jpg\tok\tholdout", "unknown split 'holdout'"),
    ("pics/c.jpg\tok\ttrain", r"'pics/c.jpg' is in split 'train' here but 'test' on line 6"),
    ("pics/a.jpg\tagain\ttrain", r"'pics/a.jpg' first appeared on line 2 with other images in between"),
    ("pics/zz.jpg\tno file\ttest", "image file not found: .*zz.jpg"),
    ("pics\ta folder\ttest", "image path is a directory, not a file: .*pics$"),
])
def test_tsv_bad_line_names_file_and_line(tmp_path, bad_line, message):
    touch_images(tmp_path, "pics/a.jpg", "pics/b.jpg", "pics/c.jpg")
    path = write_tsv(tmp_path, GOOD_TSV + bad_line + "\n")
    with pytest.raises(DataFormatError, match=message) as info:
        load_tsv(path)
    assert "toy.tsv, line 9:" in str(info.value)


@pytest.mark.parametrize("text", ['[\n  {\n    "system": "NN",\n  }\n]\n',
                                  "image_path\tcaption\tsplit\npics/a.jpg\ta dog\npics/b.jpg\ta cat\n"])
def test_a_file_without_a_single_tsv_line_is_one_error_saying_so(tmp_path, text):
    # A results file or a TSV without its split column: every line was listed as a bad line (196 for a
    # results file), which did not say the file is of another kind, and --skip-bad-items kept nothing.
    with pytest.raises(DataFormatError) as info:
        load_tsv(write_tsv(tmp_path, text, "runs.json"))
    assert str(info.value).startswith(f"{tmp_path / 'runs.json'}: no line has the three tab-separated fields "
                                      "image_path, caption and split (line ")
    assert str(info.value).endswith("is it a TSV data file? A Karpathy-style dataset.json is read with --data json")
    assert not info.value.problems


def test_a_wrong_image_folder_is_one_error_naming_the_folder_to_give(tmp_path):
    # Every image was listed as not found, and --skip-bad-items offered, which would keep nothing.
    touch_images(tmp_path, "pics/a.jpg", "pics/b.jpg", "pics/c.jpg")
    (tmp_path / "elsewhere").mkdir()
    for load in (lambda: load_tsv(write_tsv(tmp_path, GOOD_TSV), image_root=tmp_path / "elsewhere"),
                 lambda: load_karpathy_json(tmp_path / "d.json", tmp_path / "elsewhere")):
        (tmp_path / "d.json").write_text(json.dumps({"images": [
            {"filename": "pics/a.jpg", "split": "train", "sentences": [{"raw": "a dog"}]},
            {"filename": "pics/b.jpg", "split": "test", "sentences": [{"raw": "a cat"}]}]}))
        with pytest.raises(DataFormatError, match=rf"none of its \d images is under {tmp_path / 'elsewhere'} "
                                                  r"\(the first: pics/a\.jpg\): give image_root \(CLI: "
                                                  r"--image-root\), the folder its image paths are relative to$"):
            load()
    # One image found is enough: the others are listed as the items they spoil.
    (tmp_path / "elsewhere" / "pics").mkdir()
    (tmp_path / "elsewhere" / "pics" / "a.jpg").write_bytes(b"x")
    with pytest.raises(DataFormatError, match="image file not found: .*b.jpg"):
        load_tsv(write_tsv(tmp_path, GOOD_TSV), image_root=tmp_path / "elsewhere")


def test_tsv_missing_and_empty(tmp_path):
    with pytest.raises(FileNotFoundError, match="TSV data file not found: .*absent.tsv"):
        load_tsv(tmp_path / "absent.tsv")
    with pytest.raises(DataFormatError, match="no data lines"):
        load_tsv(write_tsv(tmp_path, "image_path\tcaption\tsplit\n\n"))
    with pytest.raises(FileNotFoundError, match="image directory not found"):
        load_tsv(write_tsv(tmp_path, GOOD_TSV), image_root=tmp_path / "nowhere")
