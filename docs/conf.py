"""Sphinx configuration of wengert's documentation site (built by scripts/build_docs.sh).

Everything a page loads is served by the site itself: the JavaScript the notebook pages
need for their saved widget state (require.js, the widgets' html-manager with its fonts,
anywidget's module) and MathJax come from the npm packages pinned in ``docs/package.json``
(``npm ci --prefix docs``) and are copied into ``_static/vendor/``; the PyData theme ships
its own fonts and icons. The html-manager's fallback to a CDN points back at the site, so
a missing local copy is a failed request on the site, never a request elsewhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(HERE))

from _api import write_api_list  # noqa: E402
from _lite import prepare_lite  # noqa: E402
from _vendor import copy_vendored  # noqa: E402

import wengert  # noqa: E402

project = "wengert"
author = "wengert's authors"
copyright = "wengert's authors"  # noqa: A001
release = version = wengert.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "jupyterlite_sphinx",
]

# notebooks/ is the repository's folder: only its notebooks are pages
exclude_patterns = ["_build", "node_modules", "README.md", "**.ipynb_checkpoints",
                    "notebooks/**.md", "notebooks/**.rst", "notebooks/**.txt"]
templates_path = ["_templates"]
# .rst first: autosummary writes its stub pages with the first suffix.
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# -- the notebooks: their saved outputs, never executed ------------------------------------
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# The scripts the saved widget state needs, from the site (myst-nb's default is a CDN).
# ``data-jupyter-widgets-cdn`` is where the html-manager would fall back to: a folder of
# the site that does not exist, so a broken local copy fails here and goes nowhere else.
nb_ipywidgets_js = {
    "vendor/requirejs/require.js": {},
    "wengert-widgets.js": {},
    "vendor/html-manager/embed-amd.js": {
        "data-jupyter-widgets-cdn": "_static/vendor/no-cdn/",
    },
}

# -- API reference -------------------------------------------------------------------------
# The list of names, from wengert.__all__ (docs/_api.py places each in a section).
write_api_list(list(wengert.__all__), HERE / "api.rst")
autosummary_generate = True
autodoc_typehints = "none"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

# -- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "wengert"
html_static_path = ["_static", str(copy_vendored(HERE / "node_modules",
                                                 HERE / "_build" / "vendored"))]
html_theme_options = {
    "navigation_with_keys": False,
    "back_to_top_button": False,  # it floats over the explorer widgets
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
html_css_files = ["wengert-docs.css"]  # wide pages for the explorer widget
# single pages: no empty "Section Navigation" column
html_sidebars = {page: [] for page in ("index", "conventions", "errors", "architecture", "try")}
mathjax_path = "vendor/mathjax/tex-chtml.js"
# light or dark as the reader's system says (an empty mode is a console error of the theme)
html_context = {"default_mode": "auto"}


# -- JupyterLite: the lab under lite/, the Pyodide core from npm, wengert as a wheel -----------
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
_lite_src, _lite_contents = prepare_lite(
    HERE / "node_modules", HERE / "_build", NOTEBOOKS,
    sorted((HERE / "_build" / "lite-wheels").glob("wengert-*.whl")))
jupyterlite_dir = str(_lite_src)
jupyterlite_contents = [str(_lite_contents / "*.ipynb")]
# jupyterlite-sphinx's staging folder (it empties it at each build)
jupyterlite_content_dir = "_build/lite-staging"
jupyterlite_bind_ipynb_suffix = False
jupyterlite_silence = True


class LiteNotebookLinks(SphinxDirective):
    """``{lite-notebook-links}``: one link per notebook, opening it in the lite lab."""

    def run(self) -> list[nodes.Node]:
        depth = "../" * self.env.docname.count("/")
        items = "".join(
            f'<li><a href="{depth}lite/lab/index.html?path={nb.name}">{nb.stem}</a></li>'
            for nb in NOTEBOOKS)
        return [nodes.raw("", f'<ul class="lite-notebooks">{items}</ul>', format="html")]


def setup(app):
    app.add_directive("lite-notebook-links", LiteNotebookLinks)
    # jupyterlite-sphinx adds a web font from Google's CDN (for a button this site does not
    # use): the site loads nothing from elsewhere.
    for registered in (app.registry.css_files, app.registry.js_files):
        registered[:] = [(name, attrs) for name, attrs in registered
                         if name is None or "://" not in name]
