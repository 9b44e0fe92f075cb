"""Each op family declares its ops and public functions in one place (``FAMILY``); the
registry, ``wengert.numpy`` and the ``np.*`` routing are derived from those declarations,
and so are the tables the graph layer keeps about ops (the JAX export's forms, the fusion
pass's kernels, the generated code's inline forms).

:func:`declaration_problems` is the registry check: it names what an op or a declaration
still lacks. It passes on wengert's families, and reports a toy family's gaps.
"""

from __future__ import annotations

import ast
import inspect
import keyword
import math

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp
from wengert.core.bind import kind_of, primal
from wengert.core.forms import Kernel
from wengert.core.op import Op, Registry, Words, placeholders
from wengert.graph.backends import codegen, export
from wengert.graph.passes.cse import COMMUTATIVE
from wengert.graph.passes.fuse import FUSABLE, NOT_FUSED, SPECIAL_WRITERS
from wengert.interop import dispatch
from wengert.numpy import creation, functional, index_tricks
from wengert.ops import FAMILIES, REGISTRY
from wengert.ops.base import SPACES, Family, dispatches

DECLARED = [family.FAMILY for family in FAMILIES]
#: The kinds of zero gradient the explainer has words for (``Words(zero=)``).
ZERO_KINDS = ("larger", "smaller", "factor", "degenerate")
#: The wengert.numpy module of each namespace a family exports to.
NAMESPACES = {"numpy": wnp, "linalg": wnp.linalg, "fft": wnp.fft, "emath": wnp.emath}
#: NumPy functions routed by wengert.numpy itself (functions NumPy would convert the
#: arguments of), not by an op family.
ROUTED_BY_THE_NAMESPACE = {np.full_like: creation.full_like,
                           np.apply_along_axis: functional.apply_along_axis,
                           np.apply_over_axes: functional.apply_over_axes,
                           np.ix_: index_tricks.ix_}


def _integer_result(op: Op) -> bool:
    args, params = op.samples(np.random.default_rng(0))[0]
    return np.asarray(op.impl(*args, **params)).dtype.kind in "iub"


def _fusion_lacks(op: Op) -> list[str]:
    """What an op of a ``fusable`` family lacks for the fusion pass: a NumPy ufunc as its
    forward, its kernel lines (``kernel=Kernel(lines)``) or why it is not fused."""
    ufunc = isinstance(op.impl, np.ufunc) and op.impl.nout == 1
    declared = op.kernel is not None and op.kernel.lines is not None
    if ufunc + declared + (op.kernel_refused is not None) != 1:
        return ["one fusion kernel (a NumPy ufunc forward, kernel=Kernel(lines) or "
                "kernel_refused=)"]
    return []


def _codegen_lacks(op: Op) -> list[str]:
    """What generated code needs of an op: a name it can call (``op.<name>``, the generic
    form), and an inline float form (``scalar_code=``), if given, that is an expression of
    the op's inputs or a function of ``math``."""
    lacks = []
    if not op.name.isidentifier() or keyword.iskeyword(op.name):
        lacks.append("a name generated code can call (op.<name>: a Python identifier)")
    code = op.scalar_code
    if code is None:
        return lacks
    if op.scalar_impl is None:
        lacks.append("a float path (scalar_impl=) for its inline float form")
    if callable(code):
        if getattr(math, getattr(code, "__name__", ""), None) is not code:
            lacks.append("an inline float form that is a function of math (scalar_code=)")
        return lacks
    keys = placeholders(code)
    try:
        ast.parse(code.format(*[f"x{i}" for i in range(max(op.nin, 0))]), mode="eval")
        fits = all(k.isdigit() and int(k) < op.nin for k in keys)
    except (IndexError, KeyError, SyntaxError):
        fits = False
    if not fits:
        lacks.append("an inline float form on its inputs {0}, {1}... (scalar_code=)")
    return lacks


def op_lacks(op: Op, family: Family | None = None) -> list[str]:
    """What the primitive ``op`` (of ``family``) lacks of what every layer needs of it."""
    lacks = []
    if not callable(op.impl):
        lacks.append("a NumPy forward")
    if op.jvp is None:
        lacks.append("a JVP rule (jvp=)")
    if op.samples is None:
        lacks.append("samples for the gradient checks (samples=)")
    if op.nin != -1:
        if any(r is not None and not callable(r) for r in op.vjps):
            lacks.append("a callable VJP rule for each input (None: never differentiated)")
        elif all(r is None for r in op.vjps) and op.samples is not None and not (
                _integer_result(op)):
            lacks.append("a VJP rule (every input is declared never differentiated)")
    if not op.formula:
        lacks.append("a formula (formula=)")
    if op.adjoint is None:
        lacks.append("adjoint templates (adjoint=)")
    if (op.jax is not None) + (op.jax_refused is not None) != 1:
        lacks.append("one JAX export form (jax= or jax_refused=)")
    elif callable(op.jax) and not op.jax.__doc__:
        lacks.append("a docstring on its JAX form function (what it writes)")
    if any(not 0 <= i < op.nin for i in op.jax_uncast) and op.nin != -1:
        lacks.append("inputs that exist in jax_uncast=")
    if op.words is not None and op.words.zero not in (None, *ZERO_KINDS):
        lacks.append(f"a zero-gradient kind the explainer knows (Words(zero=): {ZERO_KINDS})")
    if op.commutative and op.nin != 2:
        lacks.append("two inputs, to be commutative (commutative=)")
    if family is not None and family.fusable:
        lacks += _fusion_lacks(op)
    elif op.kernel is not None or op.kernel_refused is not None:
        lacks.append("a fusable family for its kernel=/kernel_refused= (Family(fusable=True))")
    return lacks + _codegen_lacks(op)


def declaration_problems(families: list[Family]) -> list[str]:
    """Every gap in what ``families`` declare, one line each (empty when complete)."""
    problems = []
    names: dict[str, str] = {}
    routed: dict[object, str] = {}
    for family in families:
        for op in family.ops:
            if op.name in names:
                problems.append(f"{op.name}: declared by {names[op.name]} and {family.name}")
            names[op.name] = family.name
            problems += [f"{family.name}.{op.name} lacks {what}"
                         for what in op_lacks(op, family)]
        for space, exports in family.exports.items():
            for name, fn in exports.items():
                if not callable(fn):
                    problems.append(f"{family.name}: {space}.{name} is not callable")
        for f in family.routes:
            if not dispatches(f):
                problems.append(f"{family.name}: NumPy does not hand {f!r} to wengert")
            if f in routed:
                problems.append(f"{f!r} is routed by {routed[f]} and {family.name}")
            routed[f] = family.name
    for family in families:  # a public name of NumPy's that wengert implements is routed
        for space, exports in family.exports.items():
            for name in exports:
                f = getattr(SPACES[space], name, None)
                if dispatches(f) and f not in routed:
                    problems.append(f"{family.name}: np {space} {name} is exported but "
                                    "not routed (give numpy= to export)")
    return problems


def test_every_family_declares_what_its_ops_and_functions_need():
    assert declaration_problems(DECLARED) == []


def test_the_registry_is_the_families_ops_in_order():
    assert list(REGISTRY) == [op for family in DECLARED for op in family.ops]
    assert all(family.ops or family.exports["numpy"] or family.routes for family in DECLARED)


def _toy_family() -> Family:
    toy = Family("toy")
    toy.unary(Op("toy_cube", lambda x: x ** 3, (lambda g, ans, x: g * 3.0 * x * x,),
                 formula="d x³ = 3x² dx", adjoint=("ḡ·3·{0}²",)), numpy=())
    return toy


def test_a_toy_op_missing_pieces_is_reported_by_the_registry_check():
    toy = _toy_family()
    problems = declaration_problems([*DECLARED, toy])
    assert problems == [f"toy.toy_cube lacks {what}" for what in (
        "a JVP rule (jvp=)", "samples for the gradient checks (samples=)",
        "one JAX export form (jax= or jax_refused=)")]
    op = toy.ops[0]
    op.jvp = lambda ts, ans, x: ts[0] * 3.0 * x * x
    op.samples = lambda rng: [((rng.uniform(-1.0, 1.0, 3),), {})]
    op.jax_refused = "a toy"
    assert declaration_problems([*DECLARED, toy]) == []
    assert len(Registry(o for f in [*DECLARED, toy] for o in f.ops)) == len(REGISTRY) + 1


def _complete_op(name: str = "toy_cube", **facts: object) -> Op:
    """A toy op with every declaration (a JAX template unless ``facts`` say otherwise)."""
    facts = {"jax": "jnp.power({0}, 3)", **facts}
    return Op(name, lambda x: x ** 3, (lambda g, ans, x: g * 3.0 * x * x,),
              jvp=lambda ts, ans, x: ts[0] * 3.0 * x * x,
              samples=lambda rng: [((rng.uniform(-1.0, 1.0, 3),), {})],
              formula="d x³ = 3x² dx", adjoint=("ḡ·3·{0}²",), **facts)


def _problems(*ops: Op, fusable: bool = False) -> list[str]:
    toy = Family("toy", fusable=fusable)
    for op in ops:
        toy.op(op)
    return declaration_problems([*DECLARED, toy])


def test_a_jax_form_function_says_what_it_writes_and_uncast_inputs_exist():
    def cube(s):
        return f"jnp.power({s.args[0]}, 3)"

    assert _problems(_complete_op(jax=cube)) == [
        "toy.toy_cube lacks a docstring on its JAX form function (what it writes)"]
    cube.__doc__ = "``jnp.power(x, 3)``."
    assert _problems(_complete_op(jax=cube)) == []
    assert _problems(_complete_op(jax_uncast=(1,))) == [
        "toy.toy_cube lacks inputs that exist in jax_uncast="]
    assert _problems(_complete_op(jax=None, jax_refused="a toy", jax_uncast=(0,))) == []


def test_an_op_of_a_fusable_family_without_a_kernel_is_reported():
    lacks = ("toy.toy_cube lacks one fusion kernel (a NumPy ufunc forward, "
             "kernel=Kernel(lines) or kernel_refused=)")
    assert _problems(_complete_op(), fusable=True) == [lacks]
    assert _problems(_complete_op(), fusable=False) == []  # (not a candidate of fusion)
    lines = Kernel(lambda args, out, eq: [f"np.power({args[0]}, 3, out={out})"], piece="cube")
    assert _problems(_complete_op(kernel=lines), fusable=True) == []
    assert _problems(_complete_op(kernel_refused="a toy"), fusable=True) == []
    assert _problems(_complete_op(kernel=lines, kernel_refused="a toy"), fusable=True) == [lacks]
    assert _problems(_complete_op(kernel=Kernel(piece="cube")), fusable=True) == [lacks]
    ufunc = Op("toy_sin", np.sin, (lambda g, ans, x: g * np.cos(x),),
               jvp=lambda ts, ans, x: ts[0] * np.cos(x),
               samples=lambda rng: [((rng.uniform(-1.0, 1.0, 3),), {})], formula="d sin",
               adjoint=("ḡ·cos({0})",), jax="jnp.sin({0})", kernel=Kernel(piece="s"))
    assert _problems(ufunc, fusable=True) == []  # one call of its ufunc, named "s"
    assert _problems(_complete_op(kernel=lines)) == [
        "toy.toy_cube lacks a fusable family for its kernel=/kernel_refused= "
        "(Family(fusable=True))"]


def test_an_op_generated_code_cannot_write_is_reported():
    assert _problems(_complete_op("toy-cube")) == [
        "toy.toy-cube lacks a name generated code can call (op.<name>: a Python identifier)"]
    assert _problems(_complete_op("lambda")) == [
        "toy.lambda lacks a name generated code can call (op.<name>: a Python identifier)"]
    fast = {"scalar_impl": lambda x: x * x * x}
    assert _problems(_complete_op(scalar_code="{0} * {0} * {0}", **fast)) == []
    assert _problems(_complete_op(scalar_code="{0} * {0} * {0}")) == [
        "toy.toy_cube lacks a float path (scalar_impl=) for its inline float form"]
    for bad in ("{1} * {0}", "{x} * 2.0", "{0} *"):
        assert _problems(_complete_op(scalar_code=bad, **fast)) == [
            "toy.toy_cube lacks an inline float form on its inputs {0}, {1}... (scalar_code=)"]
    assert _problems(_complete_op(scalar_code=math.cbrt, **fast)) == []
    assert _problems(_complete_op(scalar_code=pow, **fast)) == [
        "toy.toy_cube lacks an inline float form that is a function of math (scalar_code=)"]


def test_an_unknown_zero_gradient_kind_is_reported():
    assert _problems(_complete_op(words=Words(zero="flat"))) == [
        "toy.toy_cube lacks a zero-gradient kind the explainer knows (Words(zero=): "
        "('larger', 'smaller', 'factor', 'degenerate'))"]
    assert _problems(_complete_op(words=Words(zero="factor", copies=True))) == []


def test_a_commutative_op_of_one_input_is_reported():
    assert _problems(_complete_op(commutative=True)) == [
        "toy.toy_cube lacks two inputs, to be commutative (commutative=)"]


def test_the_graph_layers_tables_are_derived_from_the_declarations():
    assert dict(export.CODE_FORMS) == {op: op.jax for op in REGISTRY if callable(op.jax)}
    assert set(export.JAX_FORMS) == {op for op in REGISTRY if op.jax is not None}
    assert tuple(op for f in DECLARED if f.fusable for op in f.ops) == FUSABLE
    special = {op: op.kernel for op in FUSABLE if op.kernel and op.kernel.lines is not None}
    assert special == SPECIAL_WRITERS
    assert {op: op.kernel_refused for op in FUSABLE if op.kernel_refused} == NOT_FUSED
    forms = {op: op.scalar_code for op in REGISTRY if isinstance(op.scalar_code, str)}
    assert forms == codegen.SCALAR_FORMS
    assert {op: op.scalar_code for op in REGISTRY if callable(op.scalar_code)} == \
        codegen.SCALAR_MATH
    assert {op.name for op in codegen.NUMPY_INFIX} == {
        "add", "subtract", "multiply", "divide", "negative", "positive"}
    assert {op for op in REGISTRY if op.commutative} == COMMUTATIVE
    assert {op.name for op in codegen.NEVER_RAISE} == {
        "add", "subtract", "multiply", "negative", "positive", "abs", "square", "copy"}
    joints = [j for f in DECLARED for j in f.joints]
    assert {j.parts: j.numpy for j in joints if j.numpy} == codegen.JOINT_FORMS
    assert dict(export.JAX_JOINT_FORMS) == {j.parts: j.jax for j in joints if j.jax}
    assert {j.parts[0].part[0] for j in joints} == {"eigh", "svd", "qr", "eig"}


def test_a_joint_call_of_parts_not_of_one_decomposition_here_is_refused():
    family = Family("toy")
    a = family.op(Op("toy_a", np.sin, vjps=(None,), part=("toy", 0)))
    b = family.op(Op("toy_b", np.cos, vjps=(None,), part=("toy", 1)))
    c = family.op(Op("toy_c", np.cos, vjps=(None,), part=("other", 0)))
    plain = family.op(Op("toy_plain", np.tan, vjps=(None,)))
    elsewhere = Op("toy_d", np.cos, vjps=(None,), part=("toy", 2))
    for parts in ((a, c), (a, plain), (a, elsewhere)):
        with pytest.raises(ValueError, match="a joint call takes parts of one decomposition"):
            family.joint(*parts, numpy="f({0})")
    joint = family.joint(a, b, numpy="np.toy({0})")
    assert family.joints == [joint] and joint.parts == (a, b)


def test_an_op_declared_twice_or_without_display_data_is_reported():
    toy = Family("toy")
    toy.op(Op("sin", np.sin, (lambda g, ans, x: g,), jvp=lambda ts, ans, x: ts[0],
              samples=lambda rng: [((np.ones(2),), {})], jax="jnp.sin({0})"))
    problems = declaration_problems([*DECLARED, toy])
    assert "sin: declared by elementwise and toy" in problems
    assert "toy.sin lacks a formula (formula=)" in problems
    assert "toy.sin lacks adjoint templates (adjoint=)" in problems
    with pytest.raises(ValueError, match="two primitives are named 'sin'"):
        Registry(o for f in [*DECLARED, toy] for o in f.ops)
    with pytest.raises(ValueError, match="family 'toy': two primitives"):
        toy.op(Op("sin", np.sin, (None,)))


def test_routing_problems_are_reported():
    toy = Family("toy")

    @toy.export(numpy=(np.median, np.zeros))
    def spread(x):
        return x

    @toy.export(numpy=())  # np.gcd is NumPy's: an export by its name must route it
    def gcd(x, y):
        return x

    problems = declaration_problems([*DECLARED, toy])
    assert f"{np.median!r} is routed by order_statistics and toy" in problems
    assert f"toy: NumPy does not hand {np.zeros!r} to wengert" in problems
    assert "toy: np numpy gcd is exported but not routed (give numpy= to export)" in problems


def test_a_numpy_callable_routed_to_two_functions_in_a_family_is_refused():
    toy = Family("toy")

    @toy.export
    def transpose(x):
        return x

    def permute_dims(x):
        return x

    toy.export(transpose, "permute_dims")  # the same function again: allowed
    with pytest.raises(ValueError, match="routed to both transpose and permute_dims"):
        toy.export(permute_dims)  # np.permute_dims is np.transpose
    toy.route(permute_dims, np.add.reduce, np.add.reduce)  # twice to one function: allowed
    with pytest.raises(ValueError, match="routed to both permute_dims and transpose"):
        toy.route(transpose, np.add.reduce)


def test_export_routes_numpys_callables_of_the_same_names_by_default():
    toy = Family("toy")

    @toy.export("amplitude", space=("numpy", "linalg"))
    def norm(x):
        return x

    assert toy.exports["numpy"] == toy.exports["linalg"] == {"norm": norm, "amplitude": norm}
    assert toy.routes == {np.linalg.norm: norm}
    toy.route(norm, np.add.reduce, None, np.maximum.accumulate)
    assert toy.methods["reduce"] == {np.add: norm} and toy.methods["accumulate"] == {
        np.maximum: norm}


# -- the derived tables: what NumPy routes is exactly what the families declare ----------
def _unwrapped(table: dict) -> dict:
    return {k: inspect.unwrap(v) for k, v in table.items()}


def test_the_routing_tables_are_the_declared_routes():
    ufuncs, functions = dispatch.tables()
    declared = {}
    for family in DECLARED:
        declared.update(family.routes)
    assert _unwrapped(ufuncs) == {f: fn for f, fn in declared.items()
                                  if isinstance(f, np.ufunc)}
    assert _unwrapped(functions) == {**ROUTED_BY_THE_NAMESPACE, **{
        f: fn for f, fn in declared.items() if not isinstance(f, np.ufunc)}}
    for method, table in (("reduce", wnp.REDUCE_TABLE), ("accumulate", wnp.ACCUMULATE_TABLE),
                          ("at", wnp.AT_TABLE)):
        assert table == {u: fn for f in DECLARED for u, fn in f.methods[method].items()}
    declared_writes = {k: fn for f in DECLARED for k, fn in f.in_place.items()}
    assert declared_writes == wnp.IN_PLACE_TABLE
    assert set(wnp.IN_PLACE_TABLE) == {np.copyto, np.put, np.putmask, np.place,
                                       np.fill_diagonal, np.put_along_axis}


@pytest.mark.parametrize("space", list(NAMESPACES))
def test_every_export_is_its_namespaces_function(space):
    module = NAMESPACES[space]
    exports = {n: fn for family in DECLARED for n, fn in family.exports[space].items()}
    assert exports or space == "emath"
    different = [n for n, fn in exports.items()
                 if inspect.unwrap(getattr(module, n, None)) is not fn]
    assert not different, f"{module.__name__}.{different} are not the declared functions"
    assert set(exports) <= set(module.__all__)


def test_a_public_name_that_numpy_dispatches_is_routed_to_the_same_function():
    ufuncs, functions = dispatch.tables()
    for space, module in NAMESPACES.items():
        for name in module.__all__:
            f = getattr(SPACES[space], name, None)
            mine = getattr(module, name)
            if isinstance(f, np.ufunc) and f in ufuncs:
                assert mine is ufuncs[f], name
            elif callable(f) and not isinstance(f, (np.ufunc, type)) and f in functions:
                assert inspect.unwrap(mine) is inspect.unwrap(functions[f]), name


def _routed_ufuncs() -> list[np.ufunc]:
    return sorted(dispatch.tables()[0], key=lambda u: u.__name__)


@pytest.mark.parametrize("ufunc", _routed_ufuncs(), ids=lambda u: u.__name__)
def test_every_routed_ufunc_records_on_a_tensor(ufunc):
    if ufunc.nin == 1:
        plain = (np.linspace(0.25, 0.75, 3),)
    elif ufunc.signature:  # matmul, vecdot, matvec, vecmat
        plain = (np.eye(3) + 0.5, np.linspace(0.25, 0.75, 3))
        if ufunc.__name__ == "vecmat":
            plain = plain[::-1]
    else:
        plain = (np.linspace(0.25, 0.75, 3), np.linspace(1.25, 1.75, 3))
    if ufunc is np.ldexp:
        plain = (plain[0], np.array([1, 2, 3]))
    tensors = [wg.tensor(x, requires_grad=x.dtype.kind == "f") for x in plain]
    with np.errstate(all="ignore"):
        want = ufunc(*plain)
        got = ufunc(*tensors)
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        assert kind_of(g) is not None or np.asarray(w).dtype.kind in "iub", ufunc
        np.testing.assert_allclose(primal(g), w, equal_nan=True)
