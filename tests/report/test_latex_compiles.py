"""The LaTeX tables of ``fit --out`` and ``compare --out`` compile with pdflatex as written.

pdflatex is Debian's ``texlive-latex-base`` + ``texlive-latex-recommended`` (booktabs), which
``.ci/run`` installs; where it is missing the compile test skips and the source checks still run.
"""

import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcca_desc.evaluate.latex import LATEX_HEADER, MATH_SYMBOLS, latex_escape
from kcca_desc.evaluate.results import load_results, to_latex
from kcca_desc.report.compare import compare_runs, load_runs

# Labels a user's runs may carry: LaTeX's special characters, Greek settings, comparison signs.
TRICKY = "KCCA bow5 ρ² κ=0.1 & idf_f1 (50% Δ) <x> #1 ~ ^ \\ {a} $ √idf"

_DOCUMENT = "\n".join([r"\documentclass{article}", r"\usepackage{booktabs}", r"\tracinglostchars=3",
                       r"\begin{document}", r"\input{table.tex}", r"\end{document}", ""])


def compile_latex(table: str, where) -> subprocess.CompletedProcess:
    (where / "table.tex").write_text(table, encoding="utf-8")
    (where / "doc.tex").write_text(_DOCUMENT, encoding="utf-8")
    return subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                          cwd=where, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def tables(run_files):
    """The LaTeX of a results table and of a comparison, with :data:`TRICKY` labels."""
    results = [r for path in run_files for r in load_results(path)]
    results[0].system = TRICKY
    runs = load_runs(run_files)
    runs[0].label = TRICKY
    comparison = compare_runs(runs, n_resamples=50, n_permutations=50)
    return {"results": to_latex(results, ci=True), "comparison": comparison.to_latex()}


@pytest.mark.parametrize("kind", ["results", "comparison"])
def test_table_source_names_booktabs_and_is_ascii(tables, kind):
    table = tables[kind]
    assert table.splitlines()[0] == LATEX_HEADER and r"\usepackage{booktabs}" in LATEX_HEADER
    assert table.isascii(), [ch for ch in table if not ch.isascii()]
    assert r"$\rho ^{2}$" in table and r"$\Delta$" in table


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (Debian texlive-latex-base)")
@pytest.mark.parametrize("kind", ["results", "comparison"])
def test_table_compiles_with_pdflatex(tables, kind, tmp_path):
    done = compile_latex(tables[kind], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0


def _three_runs(run_files):
    """Three runs under both protocols, one with a long default label as ``fit`` names its systems."""
    from kcca_desc.report.compare import Run

    runs = load_runs(run_files)
    long = [Run(run.result, "c.json", "KCCA bow5 (pyramid) n=8,16 κ=0.1,1 [bow5_seed1.json]")
            for run in runs if run.result.system == runs[0].result.system]
    return runs + long


def test_comparison_latex_is_one_table_per_protocol_with_a_legend(run_files):
    # It was one long-format tabular (a row per protocol, task, metric and run) with no legend.
    runs = _three_runs(run_files)
    table = compare_runs(runs, n_resamples=50, n_permutations=50).to_latex()
    # A table of each protocol's figures, then one of its other tasks' (the first run measured them).
    assert table.count(r"\begin{tabular}") == 4 and table.count("Other tasks") == 2
    assert table.count(r"\multicolumn{4}{c}{Annotation} & \multicolumn{4}{c}{Search}") == 2
    assert table.count("Reference: ") == 2 and table.count(r"$^{***}$ p $<$ 0.001") == 2
    assert r"\textbf{Hodosh protocol}" in table and r"\textbf{Karpathy protocol}" in table
    assert table.count("(ref.)") == 2 and len([line for line in table.splitlines() if "(ref.)" in line]) == 2


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (Debian texlive-latex-base)")
def test_comparison_of_three_runs_under_two_protocols_fits_the_page(run_files, tmp_path):
    comparison = compare_runs(_three_runs(run_files), n_resamples=50, n_permutations=50)
    # The worst case of the markers: every figure with three stars.
    for row in comparison.rows:
        row["marker"] = "***"
    done = compile_latex(comparison.to_latex(), tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert "Overfull" not in log, log[log.index("Overfull"):][:600]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (Debian texlive-latex-base)")
def test_an_unescaped_symbol_fails_to_compile(tmp_path):
    # The compile test can fail: the characters latex_escape maps are the ones pdflatex rejects.
    done = compile_latex(LATEX_HEADER + "\n\\begin{tabular}{l}\\toprule ρ <0.001 \\\\ \\bottomrule\\end{tabular}\n",
                         tmp_path)
    assert done.returncode != 0


@given(st.text(alphabet=st.sampled_from([chr(c) for c in range(32, 127)] + list(MATH_SYMBOLS))))
def test_escaped_text_is_ascii_with_balanced_math(text):
    escaped = latex_escape(text)
    assert escaped.isascii()
    unescaped_dollars = escaped.replace(r"\$", "").count("$")
    assert unescaped_dollars % 2 == 0
    # Every special character of the input is escaped (none is left bare outside math mode).
    outside_math = escaped.replace(r"\$", "").split("$")[::2]
    for part in outside_math:
        stripped = (part.replace(r"\&", "").replace(r"\%", "").replace(r"\#", "").replace(r"\_", "")
                    .replace(r"\{", "").replace(r"\}", "").replace(r"\textasciitilde{}", "")
                    .replace(r"\textasciicircum{}", "").replace(r"\textbackslash{}", ""))
        assert not set(stripped) & set("&%#_{}~^\\<>|")
