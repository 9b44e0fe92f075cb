"""The pipeline: every pass has one signature, ``pass_(graph, *, reports=None) -> Graph``,
appends one report, and ``optimize`` calls them all alike."""

from __future__ import annotations

import inspect

import pytest

import numpy as np
import wengert as wg
from wengert.graph.passes import remat
from wengert.graph.passes.pipeline import (
    COMPILE_PASSES,
    PASSES,
    checkpointed,
    fusing,
    optimize,
)
from wengert.graph.passes.rewrite import PassReport


def _grad_graph():
    return wg.trace(wg.grad(lambda x: np.sum(np.tanh(np.sin(x) * x) * 2.0)), np.ones(5000))


def _all_passes():
    return [*PASSES.items(), ("checkpointed", checkpointed(10**9)),
            ("fusing", fusing(min_elements=0, chunk_elements=0))]


@pytest.mark.parametrize("name, pass_", _all_passes(), ids=lambda x: x if isinstance(x, str)
                         else "")
def test_every_pass_takes_the_graph_and_reports_by_keyword_only(name, pass_):
    params = list(inspect.signature(pass_).parameters.values())
    assert params[0].kind in (inspect.Parameter.POSITIONAL_ONLY,
                              inspect.Parameter.POSITIONAL_OR_KEYWORD)
    rest = {p.name: p for p in params[1:]}
    assert rest["reports"].kind is inspect.Parameter.KEYWORD_ONLY
    assert rest["reports"].default is None
    assert all(p.default is not inspect.Parameter.empty for p in params[1:]), name


@pytest.mark.parametrize("name, pass_", _all_passes(), ids=lambda x: x if isinstance(x, str)
                         else "")
def test_every_pass_appends_one_report_that_counts_the_equations(name, pass_):
    g = _grad_graph()
    reports: list[PassReport] = []
    out = pass_(g, reports=reports)
    assert len(reports) == 1
    assert (reports[0].before, reports[0].after) == (len(g.equations), len(out.equations))
    assert pass_(g) is not None  # and without reports
    np.testing.assert_allclose(out(np.full(5000, 0.3)), g(np.full(5000, 0.3)), rtol=1e-13)


def test_compile_pipeline_reports_fusion_and_the_memory_plan():
    result = optimize(_grad_graph(), COMPILE_PASSES, report=True)
    names = [r.name for r in result.reports]
    assert names == list(COMPILE_PASSES)
    fuse_report = result.reports[names.index("fuse")]
    assert fuse_report.verb == "fused" and fuse_report.total > 0
    assert all(k.startswith("fused_") for k in fuse_report.changes)
    assert result.reports[-1].changes.get("buffers", 0) > 0


def test_checkpointed_reports_under_its_budget_name():
    g = _grad_graph()
    reports: list[PassReport] = []
    remat(g, 10**9, reports=reports)
    assert reports[0].name == "remat(budget=1,000,000,000 B)"
    assert str(optimize(g, [checkpointed(10**9)], report=True).reports[0]).startswith(
        "remat(budget=1,000,000,000 B): ")


def test_a_function_without_reports_is_refused_with_the_signature():
    with pytest.raises(TypeError, match=r"pass_\(graph, \*, reports=None\)"):
        optimize(_grad_graph(), [lambda graph: graph])


def test_a_type_error_inside_a_pass_is_not_rewritten():
    def broken(graph, *, reports=None):
        raise TypeError("something else")

    with pytest.raises(TypeError, match="something else"):
        optimize(_grad_graph(), [broken])
