"""Odd but valid inputs run end to end through the command line (issue: keep them handled).

Grey, RGBA, 16-bit, CMYK, palette-GIF, 1 x 1, 8 x 8 and 3000 x 6 images; captions of emoji, CJK,
markup, digits only and two thousand words; a BOM and CRLF line ends; an unknown split name, a
missing image and an empty caption as clear errors.
"""

from __future__ import annotations

import json

import numpy as np
from bad_inputs import ODD_IMAGES, write_odd_image, write_tsv_dataset

from kcca_desc._core.errors import DataError
from kcca_desc.cli.fit import main

SMALL = ["--colour-words", "16", "--texture-words", "16", "--sift-words", "16", "--levels", "1", "-q",
         "--n-components", "4", "--regs", "1"]
ODD_CAPTIONS = ["🐶 runs 🏃 on the 🏖️", "一只狗在草地上奔跑", "<b>a dog</b> &amp; a <i>ball</i>",
                "1 2 3 4 5", " ".join(["a dog runs on the grass"] * 400)]


def test_odd_images_and_captions_run_end_to_end(tmp_path, capsys):
    tsv = write_tsv_dataset(tmp_path, n_images=30)
    lines = tsv.read_text().splitlines()
    # Eight images, of the training (0-17) and test (24-29) splits, become the odd files.
    for i, name in zip((0, 3, 6, 9, 12, 15, 24, 27), ODD_IMAGES):
        write_odd_image(tmp_path / "images", name)
        lines = [line.replace(f"images/{i:04d}.png", f"images/{name}") for line in lines]
    # Odd captions for the first images, and a BOM and CRLF line ends for the file.
    for k, caption in enumerate(ODD_CAPTIONS):
        path, _, split = lines[k].split("\t")
        lines[k] = f"{path}\t{caption}\t{split}"
    tsv.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    out = tmp_path / "results.json"
    code = main(["--data", "tsv", "--data-root", str(tsv), "--protocol", "both", "--out", str(out)] + SMALL)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "error" not in err and "Traceback" not in err
    figures = [r["annotation"]["R@1"] for r in json.loads(out.read_text())]
    assert len(figures) == 2 and all(np.isfinite(figures))


def test_user_mistakes_in_the_file_are_clear_errors(tmp_path, capsys):
    tsv = write_tsv_dataset(tmp_path, n_images=12)
    lines = tsv.read_text().splitlines()
    lines[0] = lines[0].rsplit("\t", 1)[0] + "\tholdout"                      # unknown split
    lines[5] = "images/missing.png\ta dog\ttrain"                              # missing image
    lines[10] = lines[10].split("\t")[0] + "\t\ttrain"                         # empty caption
    tsv.write_text("\n".join(lines) + "\n")
    assert main(["--data", "tsv", "--data-root", str(tsv)] + SMALL) == DataError.exit_code
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tsv}: 3 problems")
    assert f"{tsv}, line 1: unknown split 'holdout'" in err
    assert f"{tsv}, line 6: image file not found: {tmp_path / 'images' / 'missing.png'}" in err
    assert f"{tsv}, line 11: empty caption for image 'images/0002.png'" in err
