"""How the gallery runs ``examples/*.py``.

Each example is a command-line script (``--quick``, ``--out DIR``) that writes its figures as PNG
files and closes them, so the gallery passes ``--quick --out <folder of its own>`` and collects
the PNG files the script wrote there (matplotlib's own scraper would find no open figure).
The gallery runs a script without its docstring (``__doc__`` is empty), so the scripts read
their argparse description as ``(__doc__ or " ").splitlines()[0]``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from sphinx_gallery.scrapers import figure_rst

#: where the examples write while the gallery runs (outside the source tree)
OUTPUT_ROOT = Path(
    os.environ.get("SPARSEKIT_GALLERY_OUT", Path(tempfile.gettempdir()) / "sparsekit-gallery")
)


def output_folder(src_file) -> Path:
    return OUTPUT_ROOT / Path(src_file).stem


def reset_argv(gallery_conf, script_vars):
    """Command-line arguments of an example in the gallery: quick sizes, its own folder."""
    out = output_folder(script_vars["src_file"])
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    return ["--quick", "--out", str(out)]


class OutputFolderScraper:
    """Embed what an example wrote into its output folder: each PNG file as a full-width
    figure, then each Markdown table (``*.md``), in name order."""

    def __call__(self, block, block_vars, gallery_conf):
        folder = output_folder(block_vars["src_file"])
        if not folder.is_dir():
            return ""
        parts = []
        for png, target in zip(sorted(folder.glob("*.png")), block_vars["image_path_iterator"]):
            shutil.copyfile(png, target)
            # one figure_rst call per image: a single image is shown at full width
            parts.append(figure_rst([target], gallery_conf["src_dir"]))
        gallery = Path(block_vars["target_file"]).parent
        for table in sorted(folder.glob("*.md")):
            copy = gallery / "tables" / table.name
            copy.parent.mkdir(exist_ok=True)
            shutil.copyfile(table, copy)
            parts.append(f"\n.. include:: tables/{table.name}\n   :parser: myst_parser.sphinx_\n")
        return "\n".join(parts)

    def __repr__(self):  # a stable value, so that Sphinx's config cache does not rebuild
        return "OutputFolderScraper()"


#: a first figure wider than this (width / height) gets a thumbnail of its left part
WIDE_FIGURE = 2.0


def crop_wide_thumbnails(app) -> None:
    """Thumbnails of examples whose first figure is a wide row of panels.

    sphinx-gallery scales the whole figure into the thumbnail box, so a row of three panels
    becomes an unreadable strip; such a thumbnail is redrawn from the figure's left part (its
    first panel, at the box's aspect ratio). Other thumbnails are left as they are.
    """
    from PIL import Image
    from sphinx_gallery.utils import scale_image

    conf = app.config.sphinx_gallery_conf
    images = Path(app.srcdir) / conf["gallery_dirs"] / "images"
    box_w, box_h = conf.get("thumbnail_size", (400, 280))
    for thumb in sorted((images / "thumb").glob("sphx_glr_*_thumb.png")):
        stem = thumb.name[len("sphx_glr_") : -len("_thumb.png")]
        first = images / f"sphx_glr_{stem}_001.png"
        if not first.is_file():
            continue
        with Image.open(first) as im:
            width, height = im.size
            if width <= WIDE_FIGURE * height:
                continue
            left = im.crop((0, 0, min(width, round(height * box_w / box_h)), height))
            crop = thumb.with_name(f"{thumb.stem}.crop.png")
            left.save(crop)
        scale_image(crop, thumb, box_w, box_h)
        crop.unlink()


def _get_sg_image_scraper():
    """The scraper that ``image_scrapers = ("gallery_support",)`` names."""
    return OutputFolderScraper()
