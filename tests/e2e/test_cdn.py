"""The local copies of the CDN scripts: the right addresses map to the right files, the
pinned versions are what nbconvert's export and anywidget ask for, and nothing else
reaches the network. No browser needed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from e2e_cdn import (
    NODE_MODULES,
    PACKAGES,
    CdnRequests,
    cdn_package,
    installed_version,
    local_file,
    missing_packages,
    satisfies,
)
from hypothesis import given
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent

needs_node_modules = pytest.mark.skipif(
    bool(missing_packages()),
    reason=f"no local CDN copies in {NODE_MODULES} "
           "(run scripts/e2e_setup.sh, or npm ci --prefix tests/e2e)")


@pytest.mark.parametrize(("url", "package", "version", "path"), [
    ("https://cdnjs.cloudflare.com/ajax/libs/require.js/2.1.10/require.min.js",
     "requirejs", "2.1.10", "require.js"),
    ("https://unpkg.com/@jupyter-widgets/html-manager@*/dist/embed-amd.js",
     "@jupyter-widgets/html-manager", "*", "dist/embed-amd.js"),
    ("https://unpkg.com/@jupyter-widgets/html-manager@%2A/dist/4689f52cc96215721344.svg",
     "@jupyter-widgets/html-manager", "*", "dist/4689f52cc96215721344.svg"),
    ("https://cdn.jsdelivr.net/npm/anywidget@~0.11.*/dist/index.js",
     "anywidget", "~0.11.*", "dist/index.js"),
    ("https://cdn.jsdelivr.net/npm/anywidget@%7E0.11.%2A/dist/index.js?v=1",
     "anywidget", "~0.11.*", "dist/index.js"),
])
def test_cdn_addresses_map_to_package_files(url, package, version, path):
    assert cdn_package(url) == (package, version, path)
    assert local_file(url) == NODE_MODULES / package / path


@pytest.mark.parametrize("url", [
    "https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js?config=TeX-AMS_CHTML-full",
    "https://unpkg.com/@jupyter-js-widgets@*/dist/embed.js",
    "https://cdn.jsdelivr.net/npm/@jupyter-widgets/controls@5/dist/index.js",
    "https://example.com/require.min.js",
    "http://127.0.0.1:8888/lab",
])
def test_other_addresses_are_not_cdn_scripts(url):
    assert cdn_package(url) is None


@dataclass
class FakeRequest:
    url: str


@dataclass
class FakeRoute:
    """Records what the handler did with one request, as Playwright's Route would do it."""

    request: FakeRequest
    outcome: list[tuple[str, object]] = field(default_factory=list)

    def fulfill(self, **kwargs: object) -> None:
        self.outcome.append(("fulfill", kwargs))

    def continue_(self) -> None:
        self.outcome.append(("continue", None))

    def abort(self, reason: str) -> None:
        self.outcome.append(("abort", reason))


def _fake_modules(root: Path, versions: dict[str, str]) -> Path:
    for package, version in versions.items():
        folder = root / package
        (folder / "dist").mkdir(parents=True)
        (folder / "package.json").write_text(json.dumps({"version": version}))
        (folder / "dist" / "index.js").write_text("define([], function () { return {}; });")
        (folder / "require.js").write_text("var requirejs;")
    return root


def test_handler_serves_copies_passes_the_page_and_blocks_the_rest(tmp_path):
    modules = _fake_modules(tmp_path, {"anywidget": "0.11.0", "requirejs": "2.1.10"})
    handler = CdnRequests(node_modules=modules)
    urls = {
        "served": "https://cdn.jsdelivr.net/npm/anywidget@~0.11.*/dist/index.js",
        "page": "file:///tmp/page.html",
        "blocked": "https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js",
        "missing": "https://unpkg.com/@jupyter-widgets/html-manager@*/dist/embed-amd.js",
    }
    routes = {k: FakeRoute(FakeRequest(u)) for k, u in urls.items()}
    for route in routes.values():
        handler(route)
    (kind, answer), = routes["served"].outcome
    assert kind == "fulfill"
    assert answer["body"] == (modules / "anywidget/dist/index.js").read_bytes()
    assert answer["headers"]["content-type"] == "application/javascript"
    assert routes["page"].outcome == [("continue", None)]
    assert routes["blocked"].outcome[0][0] == "abort"
    assert routes["missing"].outcome[0][0] == "abort"
    assert handler.served == {urls["served"]: modules / "anywidget/dist/index.js"}
    assert handler.blocked == [urls["blocked"], urls["missing"]]
    assert handler.mismatches == []


def test_handler_reports_a_version_the_copy_does_not_satisfy(tmp_path):
    modules = _fake_modules(tmp_path, {"anywidget": "0.12.0"})
    handler = CdnRequests(node_modules=modules)
    handler(FakeRoute(FakeRequest("https://cdn.jsdelivr.net/npm/anywidget@~0.11.*/dist/index.js")))
    assert len(handler.mismatches) == 1 and "anywidget@~0.11.*" in handler.mismatches[0]


versions = st.tuples(*(st.integers(0, 40),) * 3)


@given(versions)
def test_a_version_satisfies_itself_any_and_its_minor_series(v):
    text = ".".join(map(str, v))
    assert satisfies(text, text)
    assert satisfies(text, "*")
    assert satisfies(text, f"~{v[0]}.{v[1]}.*")
    assert satisfies(text, f"{v[0]}.{v[1]}.*")
    assert satisfies(text, f"~{v[0]}.{v[1]}.0")
    assert satisfies(text, f"^{v[0]}.{v[1]}.0")


@given(versions, versions)
def test_ranges_agree_with_the_version_order(have, want):
    text, spec = ".".join(map(str, have)), ".".join(map(str, want))
    assert satisfies(text, spec) == (have == want)
    assert satisfies(text, "~" + spec) == (have[:2] == want[:2] and have >= want)
    same_series = have[:1] == want[:1] if want[0] else have[:2] == want[:2]
    assert satisfies(text, "^" + spec) == (same_series and have >= want)


def test_unknown_ranges_are_refused():
    with pytest.raises(ValueError, match="not one this helper understands"):
        satisfies("1.0.0", ">=1 <2")


def test_package_json_pins_what_the_lock_file_installs():
    pins = json.loads((HERE / "package.json").read_text())["dependencies"]
    lock = json.loads((HERE / "package-lock.json").read_text())
    assert sorted(pins) == sorted(PACKAGES)
    for package, version in pins.items():
        assert lock["packages"][f"node_modules/{package}"]["version"] == version


@needs_node_modules
def test_local_copies_are_what_the_export_and_anywidget_ask_for():
    anywidget = pytest.importorskip("anywidget")
    nbconvert = pytest.importorskip("nbconvert")
    exporter = nbconvert.HTMLExporter(template_name="lab")
    asked = [
        exporter.require_js_url,
        f"{exporter.jupyter_widgets_base_url}@jupyter-widgets/html-manager@"
        f"{exporter.html_manager_semver_range}/dist/embed-amd.js",
        "https://cdn.jsdelivr.net/npm/anywidget@"
        f"{anywidget.AnyWidget._model_module_version.default_value}/dist/index.js",
    ]
    for url in asked:
        found = cdn_package(url)
        assert found is not None, f"{url} is not mapped to a local copy (e2e_cdn._ROUTES)"
        package, wanted, path = found
        have = installed_version(package)
        assert have is not None and satisfies(have, wanted), (
            f"{url} asks for {package}@{wanted}; tests/e2e/package.json pins {have}")
        assert (NODE_MODULES / package / path).is_file(), f"{package} has no {path}"

