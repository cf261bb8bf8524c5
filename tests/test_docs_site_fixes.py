"""Fixes of how the built site looks, run without Sphinx: a class whose base defines
``__new__(*args, **kwargs)`` shows its own constructor's parameters, and a wide thumbnail
figure gets a thumbnail of its first panel instead of a shrunken strip."""

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

DOCS_EXT = Path(__file__).resolve().parents[1] / "docs" / "_ext"


def load(name):
    spec = importlib.util.spec_from_file_location(name, DOCS_EXT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_linear_operator_subclass_shows_its_constructor():
    from sparsekit.linalg import SparseFactors

    ext = load("sparsekit_docs")
    got = ext.constructor_signature(
        None, "class", "SparseFactors", SparseFactors, {}, "(*args, **kwargs)", None
    )
    assert got == ("(factors, scale=1.0, *, shape=None, dtype=None)", None)
    # any other signature is left to autodoc
    assert ext.constructor_signature(None, "class", "X", SparseFactors, {}, "(a, b)", None) is None
    assert (
        ext.constructor_signature(None, "function", "f", len, {}, "(*args, **kwargs)", None) is None
    )


def test_wide_thumbnail_figure_gets_a_thumbnail_of_its_first_panel(tmp_path):
    """A row of three matplotlib panels, picked with ``# sphinx_gallery_thumbnail_number = 2``,
    gets a thumbnail of its whole first panel and nothing of the others. Oracle: matplotlib's
    own layout (each axes' window extent in pixels) and the panels' line colours."""
    Image = pytest.importorskip("PIL.Image")
    pytest.importorskip("sphinx_gallery")
    plt = pytest.importorskip("matplotlib.pyplot")
    sys.path.insert(0, str(DOCS_EXT))
    try:
        gallery = load("gallery_support")
    finally:
        sys.path.remove(str(DOCS_EXT))
    images = tmp_path / "auto_examples" / "images"
    (images / "thumb").mkdir(parents=True)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "wide.py").write_text("# sphinx_gallery_thumbnail_number = 2\n")
    # figure 1 of "wide" is not its thumbnail; figure 2 is a row of red | green | blue panels
    Image.fromarray(np.full((300, 900, 3), 128, np.uint8)).save(images / "sphx_glr_wide_001.png")
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), dpi=100)
    for ax, colour in zip(axes, ["red", "lime", "blue"]):
        ax.plot([0, 1], [0, 1], color=colour, lw=4)
        ax.set_ylabel("value")
    fig.tight_layout()
    fig.savefig(images / "sphx_glr_wide_002.png", dpi=100)
    fig.canvas.draw()
    extents = [ax.get_window_extent() for ax in axes]
    plt.close(fig)
    Image.fromarray(np.full((300, 400, 3), 128, np.uint8)).save(images / "sphx_glr_tall_001.png")
    for stem in ("wide", "tall"):
        Image.new("RGB", (400, 280), "white").save(images / "thumb" / f"sphx_glr_{stem}_thumb.png")
    app = SimpleNamespace(
        srcdir=str(tmp_path),
        config=SimpleNamespace(
            sphinx_gallery_conf={
                "gallery_dirs": "auto_examples",
                "examples_dirs": str(tmp_path / "examples"),
            }
        ),
    )
    with Image.open(images / "sphx_glr_wide_002.png") as im:
        left, right = gallery.first_panel(im)
    assert left == 0 and extents[0].x1 <= right < extents[1].x0  # the first panel, whole
    gallery.crop_wide_thumbnails(app)
    thumb = np.asarray(Image.open(images / "thumb" / "sphx_glr_wide_thumb.png").convert("RGB"))
    assert thumb.shape == (280, 400, 3)
    r, g, b = (thumb[..., i].astype(int) for i in range(3))
    assert ((r > 200) & (g < 80) & (b < 80)).sum() > 100  # the red line of the first panel
    assert not ((g > 200) & (r < 80) & (b < 80)).any()  # nothing of the green panel
    assert not ((b > 200) & (r < 80) & (g < 80)).any()  # nor of the blue one
    untouched = np.asarray(Image.open(images / "thumb" / "sphx_glr_tall_thumb.png"))
    assert (untouched == 255).all()  # not wide: left as it was
    assert sorted(p.name for p in (images / "thumb").iterdir()) == [
        "sphx_glr_tall_thumb.png",
        "sphx_glr_wide_thumb.png",
    ]  # no temporary file left


def _gallery_support():
    sys.path.insert(0, str(DOCS_EXT))
    try:
        return load("gallery_support")
    finally:
        sys.path.remove(str(DOCS_EXT))


def test_execution_times_page_loads_nothing_from_another_host(tmp_path):
    """The execution-times page that sphinx-gallery itself writes (the oracle: its writer, run on
    one example's cost) loses every script and stylesheet of another host and keeps its table."""
    gen_gallery = pytest.importorskip("sphinx_gallery.gen_gallery")
    from sphinx_gallery.gen_rst import ExampleCost

    gallery = _gallery_support()
    target = tmp_path / "auto_examples"
    target.mkdir()
    cost = ExampleCost(
        execution_time=12.5, memory=0.0, src_file=str(target / "a.py"), target_dir=str(target)
    )
    conf = {"src_dir": str(tmp_path), "write_computation_times": True}
    gen_gallery.write_computation_times(conf, str(target), [cost])
    written = (target / "sg_execution_times.rst").read_text()
    assert "https://" in written  # what the page would load
    source = [written]
    gallery.offline_execution_times(None, "auto_examples/sg_execution_times", source)
    assert "http" not in source[0] and "<script" not in source[0]
    assert ".. list-table::" in source[0] and "sphx_glr_auto_examples_a.py" in source[0]
    other = [written]
    gallery.offline_execution_times(None, "guide/index", other)
    assert other == [written]  # other pages are left alone


def test_formulas_are_left_out_of_the_search_index():
    """Sphinx's own word collector (the oracle: what its search index stores) finds the words
    around a formula and none of the formula's TeX source once the page is read."""
    pytest.importorskip("sphinx")
    from docutils.core import publish_doctree
    from sphinx.search import WordCollector
    from sphinx.search.en import SearchEnglish

    page = (
        "Landmarks give :math:`K_{nm} \\times \\frac{1}{2}` here.\n\n"
        ".. math::\n\n   \\mathbf{x}^\\top \\operatorname{diag}\n"
    )

    def words(doctree):
        collector = WordCollector(doctree, SearchEnglish({}))
        doctree.walk(collector)
        return set(collector.found_words)

    doctree = publish_doctree(page)
    assert {"times", "frac", "mathbf"} <= words(doctree)  # the TeX source, before
    load("sparsekit_docs").math_out_of_search(None, doctree)
    found = words(doctree)
    assert {"Landmarks", "give", "here"} <= found
    assert not found & {"times", "frac", "mathbf", "top", "operatorname", "diag", "nm"}


def test_source_page_backlinks_name_the_anchors_of_their_objects():
    """A "[docs]" link of a source page names an anchor of its object's page. Oracle: the ids
    Sphinx gives a described object and its members, ``<full name>`` and
    ``<full name>.<member>`` (``sparsekit.Nystroem.fit`` on the page of ``sparsekit.Nystroem``)."""
    ext = load("sparsekit_docs")
    # viewcode took the file's module name from an object documented in that module
    entry = ("code", {}, {}, "sparsekit.features.nystrom")
    app = SimpleNamespace(
        env=SimpleNamespace(_viewcode_modules={"sparsekit.features.nystrom": entry})
    )
    page = "../../../api/generated/"
    link = '<a class="viewcode-back" href="{}">[docs]</a>'
    body = "\n".join(
        link.format(page + href)
        for href in [
            "sparsekit.Nystroem.html#sparsekit.features.nystrom.Nystroem.fit",
            "sparsekit.features.nystrom.helper.html#sparsekit.features.nystrom.helper",
            "sparsekit.Nystroem.html#elsewhere.Nystroem",
        ]
    )
    context = {"body": body}
    ext.viewcode_backlinks(app, "_modules/sparsekit/features/nystrom", "page.html", context, None)
    assert context["body"].splitlines() == [
        link.format(page + "sparsekit.Nystroem.html#sparsekit.Nystroem.fit"),
        link.format(
            page + "sparsekit.features.nystrom.helper.html#sparsekit.features.nystrom.helper"
        ),
        link.format(page + "sparsekit.Nystroem.html#elsewhere.Nystroem"),  # not viewcode's form
    ]
    other = {"body": body}
    ext.viewcode_backlinks(app, "api/generated/sparsekit.Nystroem", "page.html", other, None)
    assert other["body"] == body  # only source pages are rewritten
