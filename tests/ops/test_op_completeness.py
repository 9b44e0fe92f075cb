"""Every primitive declares what each layer needs of it, or says why it has none.

The facts about one op live on its record (``Op(..., jax=, jax_refused=, jax_uncast=,
kernel=, kernel_refused=, scalar_code=, spelling=, words=)``), a form that is code written
beside the op; the graph layer's tables are derived from them. A new op that forgets one
of them fails here, naming it.
"""

from __future__ import annotations

import ast
import inspect
import string

import pytest

import numpy as np
import wengert.numpy as wnp
from wengert.core.op import Op, Words, placeholders
from wengert.graph.backends import codegen
from wengert.graph.backends.export import CODE_FORMS, JAX_FORMS
from wengert.graph.passes.fuse import NOT_FUSED, SPECIAL_WRITERS, _numpy_ufunc
from wengert.jupyter.explainer import words
from wengert.ops import REGISTRY
from wengert.ops import elementwise as ew

OPS = list(REGISTRY)
IDS = [op.name for op in OPS]


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_every_op_has_a_jax_form_or_says_why_not(op):
    declared = [op.jax is not None, op.jax_refused is not None]
    assert sum(declared) == 1, (
        f"{op.name}: declare jax='jnp....({{0}})' beside the op (or jax=form, a function of "
        "a core.forms.JaxStep), or give jax_refused='why'")
    assert (op in JAX_FORMS) == (op.jax_refused is None)
    assert (op in CODE_FORMS) == callable(op.jax)


def _param_names(op: Op) -> set[str]:
    try:
        return set(inspect.signature(op.impl).parameters)
    except (TypeError, ValueError):
        return set()


@pytest.mark.parametrize("op", [op for op in OPS if isinstance(op.jax, str)],
                         ids=[op.name for op in OPS if isinstance(op.jax, str)])
def test_a_jax_template_names_only_inputs_and_params_the_op_has(op):
    keys = [field for _, field, _, _ in string.Formatter().parse(op.jax) if field]
    assert keys == placeholders(op.jax) or "*" in keys, op.jax
    params = _param_names(op)
    for key in keys:
        if key == "*":
            assert op.nin == -1, f"{op.name}: {{*}} is for a variadic op"
        elif key.isdigit():
            assert op.nin == -1 or int(key) < op.nin, f"{op.name}: no input {key}"
        else:
            assert key in params, f"{op.name}: its forward takes no param {key!r}"


def test_complex_refusals_are_of_ops_with_complex_rules():
    for op in OPS:
        if op.jax_complex_refused is not None:
            assert op.complex_rules and op.jax is not None, op.name


@pytest.mark.parametrize("op", ew.FAMILY.ops, ids=[op.name for op in ew.FAMILY.ops])
def test_every_elementwise_op_is_fused_or_says_why_not(op):
    ufunc = _numpy_ufunc(op.impl) is not None
    special = op in SPECIAL_WRITERS
    assert ufunc + special + (op in NOT_FUSED) == 1, (
        f"{op.name}: its forward is not a NumPy ufunc; declare its kernel lines beside it "
        "(kernel=Kernel(lines)), or why it is not fused (kernel_refused='why')")


@pytest.mark.parametrize("op", [op for op in OPS if op.commutative],
                         ids=[op.name for op in OPS if op.commutative])
def test_a_commutative_op_gives_the_same_bits_with_its_inputs_swapped(op):
    assert op.nin == 2
    rng = np.random.default_rng(0)
    cases = [args for args, params in op.samples(rng) if not params]
    cases += [(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]),
               np.array([-0.0, 0.0, -np.inf, np.inf, 1.0, np.nan]))]
    for x, y in cases:
        with np.errstate(all="ignore"):
            a, b = np.asarray(op.impl(x, y)), np.asarray(op.impl(y, x))
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes() or np.array_equal(a, b, equal_nan=True), op.name


def test_the_layers_tables_are_keyed_by_registry_records():
    tables = [CODE_FORMS, SPECIAL_WRITERS, NOT_FUSED, codegen.SCALAR_FORMS,
              codegen.SCALAR_MATH, codegen.NUMPY_INFIX, codegen.NEVER_RAISE]
    for table in tables:
        for op in table:
            assert isinstance(op, Op) and REGISTRY.get(op.name) is op, op


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_every_op_has_explainer_words_or_the_default(op):
    code = words.op_code(op.name)
    assert code and (op.spelling is not None or code == f"np.{op.name}")
    assert words.forward_words(op.name)
    derivative, where, fix = words.infinite_derivative_words(op.name)
    assert derivative and where and fix
    assert isinstance(ast.literal_eval(words.safe_value(op.name)), float)
    w = op.words
    assert w is None or isinstance(w, Words)
    if w is not None and w.singular:
        assert w.infinite_at and w.fix, f"{op.name}: a singular op says where and the fix"
        assert op.name in words.SINGULAR_OPS


def test_explainer_sets_are_derived_from_the_records():
    assert "floor" in words.FLAT_OPS and "sin" not in words.FLAT_OPS
    assert {op.name for op in OPS if op.words and op.words.singular} == words.SINGULAR_OPS
    assert words.op_code("multiply") == "*" and words.op_code("my_rule") == "my_rule"
    kinds = {op.name: op.words.zero for op in OPS if op.words and op.words.zero is not None}
    assert kinds == words.ZERO_KIND
    assert {op.name for op in OPS if op.words and op.words.copies} == words.COPY_OPS
    assert words.ZERO_KIND["relu"] == "larger" and words.ZERO_KIND["matmul"] == "factor"
    assert {"astype", "reshape", "getitem"} <= words.COPY_OPS


@pytest.mark.parametrize("op", ew.FAMILY.ops, ids=[op.name for op in ew.FAMILY.ops])
def test_every_elementwise_ufunc_op_is_routed_from_numpy(op):
    ufunc = _numpy_ufunc(op.impl)
    if ufunc is None:
        return
    ufuncs = wnp.UFUNC_TABLE
    assert ufunc in ufuncs, f"np.{ufunc.__name__} has no wengert function routed to it"
    x = np.linspace(0.25, 0.75, 3)
    args = (x,) * ufunc.nin
    with np.errstate(all="ignore"):  # (outside a domain both give NaN)
        np.testing.assert_allclose(ufuncs[ufunc](*args), ufunc(*args), equal_nan=True)
