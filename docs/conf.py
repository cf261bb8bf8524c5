"""Sphinx configuration of the sparsekit documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` from the repository root, with the
``docs`` extra installed. The build and the pages it writes need no network: no intersphinx,
and MathJax is served from the site itself (copied from the ``django-static-mathjax`` wheel).
"""

import os
import sys
from pathlib import Path

import mathjax  # django-static-mathjax: MathJax 3 files inside a wheel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "_ext"))
# the CUDA modules are documented from Numba's simulator on machines without a GPU
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import sparsekit  # noqa: E402

project = "sparsekit"
copyright = "the sparsekit developers"
version = release = sparsekit.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "sparsekit_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "**/_generated/*.rst",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
    "auto_examples/tables",
    "plugins.md",
]
templates_path = ["_templates"]

# API pages
autosummary_generate = True
autosummary_imported_members = True
# the module pages pass :no-members: themselves; a "members" default here would override the
# class template's :members: (Sphinx lets a default option win over a bare directive flag)
autodoc_default_options: dict[str, str] = {}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()  # the checks run in tests/test_docstrings.py

# every cross-reference must resolve (the build runs with -W), except names without a page here:
# there is no intersphinx (the build is offline), so the names of Python, NumPy, SciPy,
# scikit-learn, Dask, Keras and the other libraries are left as code text; so are private
# helpers (a leading underscore), which the API reference does not document
nitpicky = True
_EXTERNAL = (
    r"numpy|np|scipy|sklearn|dask|distributed|keras|pluggy|pandas|numba|matplotlib"
    r"|networkx|grakel|tqdm|pyfaust|tomllib|concurrent|importlib|typing|collections"
    r"|abc|os|pathlib|threading|warnings|difflib|dataclasses"
)
nitpick_ignore_regex = [
    (r"py:.*", rf"({_EXTERNAL})(\..*)?"),
    (r"py:.*", r"(.*\.)?_[A-Za-z].*"),
]
# ``hookspec`` and ``hookimpl`` are pluggy's marker objects: their docstrings are pluggy's
nitpick_ignore = [
    ("py:class", "PluginManager"),
    ("py:meth", "PluginManager.register"),
    ("py:meth", "PluginManager.add_hookspecs"),
]

# math without a network: MathJax 3 (SVG output, one self-contained file) shipped in _static
_MATHJAX_JS = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5" / "tex-svg.js"
html_static_path = [str(_MATHJAX_JS), "_static"]
html_css_files = ["sparsekit.css"]
# search results quote formulas as plain text, not their TeX source
html_js_files = ["sparsekit-search.js"]
mathjax_path = "tex-svg.js"

# MyST: plugins.md is included from another page
myst_heading_anchors = 3

# gallery: the examples run at their --quick sizes, each into its own output folder
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": os.environ.get("SPARSEKIT_GALLERY_PATTERN", r"\.py$"),
    "ignore_pattern": r"__init__\.py|/specs/",
    "reset_argv": "gallery_support.reset_argv",
    "image_scrapers": ("gallery_support",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "min_reported_time": 1,
    "show_memory": False,
    "show_signature": False,
    "abort_on_example_error": True,
    "plot_gallery": os.environ.get("SPARSEKIT_GALLERY_RUN", "1") != "0",
}

# HTML
html_theme = "pydata_sphinx_theme"
html_title = f"sparsekit {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    # the home page is a table of contents itself: no "on this page" column there
    "secondary_sidebar_items": {"**": ["page-toc"], "index": []},
}
html_sidebars = {"index": []}
html_show_sourcelink = False
html_copy_source = False
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True


def setup(app):
    import gallery_support

    # after sphinx-gallery has run the examples and written their thumbnails (priority 500)
    app.connect("builder-inited", gallery_support.crop_wide_thumbnails, priority=600)
    # the execution-times pages without the scripts sphinx-gallery loads from CDNs
    app.connect("source-read", gallery_support.offline_execution_times)
