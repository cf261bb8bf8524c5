"""How the gallery runs ``examples/*.py``.

Each example is a command-line script (``--quick``, ``--out DIR``) that writes its figures as PNG
files and closes them, so the gallery passes ``--quick --out <folder of its own>`` and collects
the PNG files the script wrote there (matplotlib's own scraper would find no open figure).
The gallery runs a script without its docstring (``__doc__`` is empty), so the scripts read
their argparse description as ``(__doc__ or " ").splitlines()[0]``.
"""

from __future__ import annotations

import os
import re
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


#: a thumbnail figure wider than this (width / height) gets a thumbnail of its first panel
WIDE_FIGURE = 2.0

_THUMBNAIL_NUMBER = re.compile(r"^# *sphinx_gallery_thumbnail_number *= *(\d+)", re.MULTILINE)


def thumbnail_number(src_file) -> int:
    """The figure an example picks for its thumbnail (``# sphinx_gallery_thumbnail_number = N``,
    the comment sphinx-gallery reads), else its first."""
    found = _THUMBNAIL_NUMBER.search(Path(src_file).read_text(encoding="utf-8"))
    return int(found.group(1)) if found else 1


def first_panel(image) -> tuple[int, int]:
    """``(left, right)`` pixel columns of the first panel of a row of matplotlib panels: from the
    figure's left edge (the panel's axis labels) to the panel's right spine, the second of the
    dark vertical lines as tall as half the figure (an axes frame's left and right sides). A
    figure without such lines gives its left part at the 400:280 aspect of the thumbnail box."""
    import numpy as np

    grey = np.asarray(image.convert("L"))
    height = grey.shape[0]
    dark = grey < 80
    # longest run of dark pixels in each column
    runs = np.zeros(grey.shape[1], int)
    current = np.zeros(grey.shape[1], int)
    for row in dark:
        current = np.where(row, current + 1, 0)
        runs = np.maximum(runs, current)
    lines = np.flatnonzero(runs >= height // 2)
    sides = [x for i, x in enumerate(lines) if i == 0 or x > lines[i - 1] + 1]
    if len(sides) >= 2:
        return 0, min(grey.shape[1], sides[1] + 6)
    return 0, min(grey.shape[1], round(height * 400 / 280))


def crop_wide_thumbnails(app) -> None:
    """Thumbnails of examples whose thumbnail figure is a wide row of panels.

    sphinx-gallery scales the whole figure into the thumbnail box, so a row of three panels
    becomes an unreadable strip; such a thumbnail is redrawn from the figure's first panel (with
    its axis labels), scaled into the box. The figure is the one the example picks
    (:func:`thumbnail_number`). Other thumbnails are left as they are.
    """
    from PIL import Image
    from sphinx_gallery.utils import scale_image

    conf = app.config.sphinx_gallery_conf
    images = Path(app.srcdir) / conf["gallery_dirs"] / "images"
    examples = Path(conf.get("examples_dirs", ""))
    box_w, box_h = conf.get("thumbnail_size", (400, 280))
    for thumb in sorted((images / "thumb").glob("sphx_glr_*_thumb.png")):
        stem = thumb.name[len("sphx_glr_") : -len("_thumb.png")]
        source = examples / f"{stem}.py"
        number = thumbnail_number(source) if source.is_file() else 1
        figure = images / f"sphx_glr_{stem}_{number:03d}.png"
        if not figure.is_file():
            continue
        with Image.open(figure) as im:
            width, height = im.size
            if width <= WIDE_FIGURE * height:
                continue
            left, right = first_panel(im)
            crop = thumb.with_name(f"{thumb.stem}.crop.png")
            im.crop((left, 0, right, height)).save(crop)
        scale_image(crop, thumb, box_w, box_h)
        crop.unlink()


#: the HTML that sphinx-gallery puts before the table of an execution-times page: jQuery and
#: DataTables from CDNs, which sort the table in the browser
_CDN_HTML = re.compile(
    r"^  \.\. raw:: html\n(?:\n|    .*\n)*?(?=  \.\. list-table::)", re.MULTILINE
)


def offline_execution_times(app, docname, source) -> None:
    """Leave the CDN scripts and stylesheets out of the execution-times pages
    (``sg_execution_times``): the site works offline. Their table stays, unsorted."""
    if docname.rpartition("/")[2] == "sg_execution_times":
        source[0] = _CDN_HTML.sub("", source[0])


def _get_sg_image_scraper():
    """The scraper that ``image_scrapers = ("gallery_support",)`` names."""
    return OutputFolderScraper()
