"""Two fixes of how the built site looks, run without Sphinx: a class whose base defines
``__new__(*args, **kwargs)`` shows its own constructor's parameters, and a wide first figure
gets a thumbnail of its first panel instead of a shrunken strip."""

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


def test_wide_first_figure_gets_a_thumbnail_of_its_left_panel(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    pytest.importorskip("sphinx_gallery")
    sys.path.insert(0, str(DOCS_EXT))
    try:
        gallery = load("gallery_support")
    finally:
        sys.path.remove(str(DOCS_EXT))
    images = tmp_path / "auto_examples" / "images"
    (images / "thumb").mkdir(parents=True)
    # a 3-panel row (red | green | blue, 300 x 100 each) and a 4:3 figure
    wide = np.zeros((100, 900, 3), np.uint8)
    wide[:, :300, 0] = wide[:, 300:600, 1] = wide[:, 600:, 2] = 255
    Image.fromarray(wide).save(images / "sphx_glr_wide_001.png")
    Image.fromarray(np.full((300, 400, 3), 128, np.uint8)).save(images / "sphx_glr_tall_001.png")
    for stem in ("wide", "tall"):
        Image.new("RGB", (400, 280), "white").save(images / "thumb" / f"sphx_glr_{stem}_thumb.png")
    app = SimpleNamespace(
        srcdir=str(tmp_path),
        config=SimpleNamespace(sphinx_gallery_conf={"gallery_dirs": "auto_examples"}),
    )
    gallery.crop_wide_thumbnails(app)
    thumb = np.asarray(Image.open(images / "thumb" / "sphx_glr_wide_thumb.png").convert("RGB"))
    # the left 143 x 100 px (the box's 400:280 aspect, inside the red panel) fill the box
    assert thumb.shape == (280, 400, 3)
    assert (thumb[..., 0] > 200).all() and (thumb[..., 1:] < 50).all()
    untouched = np.asarray(Image.open(images / "thumb" / "sphx_glr_tall_thumb.png"))
    assert (untouched == 255).all()  # not wide: left as it was
    assert sorted(p.name for p in (images / "thumb").iterdir()) == [
        "sphx_glr_tall_thumb.png",
        "sphx_glr_wide_thumb.png",
    ]  # no temporary file left
