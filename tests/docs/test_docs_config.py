"""The documentation site's configuration, without building it: the API page places every
public name, the npm packages the site serves are pinned and agree with their Python
counterparts, and nothing in the configuration points off the site."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _api import MODULES, SECTIONS, ApiListError, api_page, placed_names
from _vendor import VENDORED, npm_version
from docs_site import ROOT
from e2e_cdn import satisfies

DOCS = ROOT / "docs"
PACKAGE = json.loads((DOCS / "package.json").read_text())
LOCK = json.loads((DOCS / "package-lock.json").read_text())


def test_the_api_page_places_every_public_name_once():
    import wengert

    assert placed_names() | set(MODULES) == set(wengert.__all__)
    page = api_page(list(wengert.__all__))
    for _, _, names in SECTIONS:
        for name in names:
            assert f"\n   {name}\n" in page


def test_a_public_name_the_api_page_does_not_place_stops_the_build():
    import wengert

    with pytest.raises(ApiListError, match="missing \\['new_name'\\]"):
        api_page([*wengert.__all__, "new_name"])


def test_every_npm_dependency_is_pinned_exactly_and_locked():
    deps = PACKAGE["dependencies"]
    locked = LOCK["packages"]
    for name, version in deps.items():
        assert version[0].isdigit(), f"{name}: {version!r} is a range, not a pin"
        assert locked[f"node_modules/{name}"]["version"] == version, name
    assert locked[""]["dependencies"] == deps


def test_the_vendored_packages_are_the_pinned_ones():
    assert {package for package, _, _ in VENDORED.values()} <= set(PACKAGE["dependencies"])


def test_npm_and_python_anywidget_agree():
    from importlib.metadata import version

    assert PACKAGE["dependencies"]["anywidget"] == version("anywidget")


def test_the_html_manager_is_the_one_ipywidgets_asks_for():
    from ipywidgets._version import __html_manager_version__

    pinned = PACKAGE["dependencies"]["@jupyter-widgets/html-manager"]
    assert satisfies(pinned, __html_manager_version__), (pinned, __html_manager_version__)


def test_the_notebooks_widget_state_asks_for_the_pinned_anywidget():
    pinned = PACKAGE["dependencies"]["anywidget"]
    asked = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        saved = nb["metadata"].get("widgets", {})
        state = saved.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
        asked |= {(path.name, m["model_module_version"]) for m in state.values()
                  if m["model_module"] == "anywidget"}
    for name, wanted in asked:
        assert satisfies(pinned, wanted), f"{name} asks for anywidget {wanted}, pinned {pinned}"


def test_the_pyodide_core_is_the_one_the_pyodide_kernel_is_built_for():
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION

    assert PACKAGE["dependencies"]["pyodide"] == PYODIDE_VERSION


def test_the_configuration_points_at_nothing_off_the_site():
    conf = (DOCS / "conf.py").read_text()
    assert "http://" not in conf and "https://" not in conf
    for page in DOCS.glob("*.md"):
        text = page.read_text()
        for line in text.splitlines():
            if "<script" in line or "<link" in line:
                assert "//" not in line, f"{page.name}: {line}"


def test_the_installed_npm_copies_match_the_pins():
    node_modules = DOCS / "node_modules"
    if not node_modules.is_dir():
        pytest.skip("docs/node_modules not installed (scripts/build_docs.sh runs npm ci)")
    for package, version in PACKAGE["dependencies"].items():
        assert npm_version(package, node_modules) == version, package


def test_the_vendored_copy_is_complete(tmp_path: Path):
    from _vendor import copy_vendored

    node_modules = DOCS / "node_modules"
    if not node_modules.is_dir():
        pytest.skip("docs/node_modules not installed (scripts/build_docs.sh runs npm ci)")
    vendor = copy_vendored(node_modules, tmp_path) / "vendor"
    for needed in ("requirejs/require.js", "html-manager/embed-amd.js", "anywidget/index.js",
                   "mathjax/tex-chtml.js", "mathjax/output/chtml/fonts/woff-v2"):
        assert (vendor / needed).exists(), needed
    with pytest.raises(RuntimeError, match="npm ci --prefix docs"):
        copy_vendored(tmp_path / "no-node-modules", tmp_path / "out")


@pytest.mark.parametrize("module", ["_api", "_lite", "_vendor", "docs_site"])
def test_the_examples_in_the_docs_helpers_run(module: str):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_the_errors_page_has_a_row_for_every_error_class():
    from wengert.core import errors

    page = (DOCS / "errors.md").read_text()
    rows = {line.split("`")[1] for line in page.splitlines() if line.startswith("| `")}
    classes = {name for name in errors.__all__ if isinstance(getattr(errors, name), type)}
    # the base classes are said in words above the table
    assert classes - {"WengertError", "Escaped"} <= rows, classes - rows
    assert "wg.GradcheckError" in rows


def test_packed_explorer_frames_are_read_back_from_the_saved_buffer():
    import base64

    from docs_site import explorer_state

    import wengert as wg
    from wengert.jupyter.explorer.frames import explorer_frames
    from wengert.jupyter.explorer.widget import pack

    x = wg.tensor([1.0, 2.0], requires_grad=True)
    data = explorer_frames(wg.tape_of((x * x).sum()))
    packed = pack(data, limit=1)
    blob = packed.pop("packed")
    model = {"state": {"frames": packed, "step": 0},
             "buffers": [{"path": ["frames", "packed"], "encoding": "base64",
                          "data": base64.b64encode(blob).decode()}]}
    assert explorer_state(model)["frames"] == data
    assert explorer_state({"state": {"frames": data}})["frames"] == data
