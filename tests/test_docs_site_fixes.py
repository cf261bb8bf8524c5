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
