"""Display data of the reverse sweep: every op's per-input adjoint templates, and ``bar``.

The explorer shows, for each step of the reverse sweep, what the op's VJP adds to
each input's adjoint (``x̄ += ḡ·w``). These tests hold every op in the registry to
having those templates, check that they fill in with any names and with the params
of real calls, that ``None`` marks exactly the inputs without a VJP rule, and that
the templates written as formulas compute what the VJP rules compute.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numpy as np
import wengert as wg
from wengert.core.op import ADJOINT_NAMES, Op, PerInput, bar, placeholders
from wengert.ops import REGISTRY
from wengert.ops.linalg import basic as linalg

NAMES = REGISTRY.names()
#: Longest a filled-in term may be with two-character names (the panel is narrow).
MAX_TERM = 60


def _param_names(op: Op) -> set[str]:
    """The params an op is called with: the keys of its test cases (every registered op
    has them; ``tests/test_rules.py`` sweeps the registry with them)."""
    keys: set[str] = set()
    for _args, params in op.samples(np.random.default_rng(0)) if op.samples else ():
        keys.update(params)
    return keys


def adjoint_problems(op: Op) -> list[str]:
    """Everything wrong with an op's adjoint display data (empty: nothing)."""
    adjoint = op.adjoint
    if adjoint is None:
        return [f"op {op.name!r} has no adjoint= (the per-input templates the explorer shows)"]
    if op.nin == -1:
        if not isinstance(adjoint, str):
            return [f"variadic op {op.name!r}: adjoint must be one str, not {adjoint!r}"]
        templates = [adjoint]
        allowed = set(ADJOINT_NAMES)
    else:
        if not isinstance(adjoint, tuple) or len(adjoint) != op.nin:
            return [f"op {op.name!r}: adjoint must be a tuple of {op.nin}, not {adjoint!r}"]
        problems = [f"op {op.name!r}: adjoint[{i}] is {t!r} but the VJP rule is {r!r}"
                    for i, (t, r) in enumerate(zip(adjoint, op.vjps))
                    if (t is None) != (r is None)]
        if problems:
            return problems
        templates = [t for t in adjoint if t is not None]
        allowed = set(ADJOINT_NAMES) | {str(k) for k in range(op.nin)}
    allowed |= _param_names(op)
    problems = []
    extra = op.complex_adjoint
    if extra is not None:
        if not op.complex_rules:
            problems.append(f"op {op.name!r}: complex templates but no complex rules")
        templates = templates + [t for t in ((extra,) if isinstance(extra, str) else extra)
                                 if t is not None]
    for text in templates:
        if not isinstance(text, str) or not text.strip():
            problems.append(f"op {op.name!r}: empty or non-str template {text!r}")
            continue
        unknown = [k for k in placeholders(text) if k not in allowed]
        if unknown:
            problems.append(f"op {op.name!r}: {text!r} names {unknown}, not an input, "
                            f"out, this, i or a param")
        stray = _PLACEHOLDER_FREE.sub("", text)
        if "{" in stray or "}" in stray:
            problems.append(f"op {op.name!r}: {text!r} has a brace that names nothing")
    return problems


_PLACEHOLDER_FREE = re.compile(r"\{\w+\}")


def _names(op: Op, count: int = 3) -> list[str]:
    n = count if op.nin == -1 else op.nin
    return [f"n{k}" for k in range(n)]


# -- the registry sweep: every op has display data ------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_every_op_has_adjoint_templates(name):
    problems = adjoint_problems(REGISTRY[name])
    assert not problems, "\n".join(problems)


def test_the_sweep_covers_the_registry_and_rejects_an_op_without_adjoint():
    # Adding an op to a family's OPS puts it in REGISTRY, hence in NAMES above: without
    # adjoint= it fails test_every_op_has_adjoint_templates, as this one would.
    assert [op.name for op in REGISTRY] == NAMES and len(NAMES) == len(REGISTRY)
    fresh = Op("fresh", np.negative, (lambda g, ans, x: -g,), formula="d(-x) = -dx")
    assert adjoint_problems(fresh) == [
        "op 'fresh' has no adjoint= (the per-input templates the explorer shows)"]
    stray = Op("fresh", np.negative, (lambda g, ans, x: -g,), adjoint=("−ḡ·{1}",),
               samples=lambda rng: [((np.ones(2),), {})])
    assert adjoint_problems(stray) and "names ['1']" in adjoint_problems(stray)[0]
    tuple_for_variadic = Op("v", np.stack, PerInput(lambda i, g, ans, *xs: g), adjoint="ḡ")
    tuple_for_variadic.adjoint = ("ḡ",)
    assert "must be one str" in adjoint_problems(tuple_for_variadic)[0]


@pytest.mark.parametrize("name", NAMES)
def test_none_exactly_for_inputs_without_a_vjp_rule(name):
    op = REGISTRY[name]
    names = _names(op)
    terms = op.adjoint_terms(names, out="out")
    assert len(terms) == len(names)
    for i, term in enumerate(terms):
        if op.nin == -1:
            assert isinstance(term, str)
        else:
            assert (term is None) == (op.vjps[i] is None), (name, i, term)


@pytest.mark.parametrize("name", NAMES)
def test_real_params_fill_every_placeholder(name):
    # With the params of the op's own test cases (as an Equation carries them), nothing
    # is left in braces and each term stays short enough for the explorer's panel.
    op = REGISTRY[name]
    for args, params in op.samples(np.random.default_rng(1)):
        names = [f"n{k}" for k in range(len(args))]
        for term in op.adjoint_terms(names, out="t9", params=params):
            if term is None:
                continue
            assert "{" not in term and "}" not in term, (name, params, term)
            assert len(term) <= MAX_TERM, (name, term)
            assert "0x" not in term and "object at" not in term, term


# -- the spec's examples --------------------------------------------------------------
SPOT_CHECKS = [
    ("add", ["x", "y"], "out", {}, ["ḡ", "ḡ"]),
    ("subtract", ["t2", "y"], "t3", {}, ["ḡ", "−ḡ"]),
    ("multiply", ["x", "w"], "t1", {}, ["ḡ·w", "ḡ·x"]),
    ("divide", ["x", "y"], "out", {}, ["ḡ / y", "−ḡ·x / y²"]),
    ("sin", ["x"], "out", {}, ["ḡ·cos(x)"]),
    ("exp", ["x"], "t4", {}, ["ḡ·t4"]),
    ("tanh", ["x"], "t2", {}, ["ḡ·(1 − t2²)"]),
    ("matmul", ["X", "W"], "out", {}, ["ḡ @ Wᵀ", "Xᵀ @ ḡ"]),
    ("sum", ["x"], "out", {"axis": None, "keepdims": False}, ["ḡ broadcast to the shape of x"]),
    ("getitem", ["x"], "out", {"index": (slice(None), 1)}, ["ḡ scattered into zeros at [:, 1]"]),
    ("where", ["cond", "x", "y"], "out", {}, [None, "ḡ where cond", "ḡ where not cond"]),
    ("concatenate", ["a", "b"], "out", {"axis": 0},
     ["the slice of ḡ that a filled", "the slice of ḡ that b filled"]),
    ("stack", ["a", "b", "c"], "out", {"axis": -1},
     ["ḡ at index 0 along axis -1", "ḡ at index 1 along axis -1",
      "ḡ at index 2 along axis -1"]),
    ("take", ["x", "idx"], "out", {"axis": 0}, ["zeros with ḡ added at the taken places", None]),
]


@pytest.mark.parametrize("name,names,out,params,expected", SPOT_CHECKS,
                         ids=[c[0] for c in SPOT_CHECKS])
def test_spot_checks(name, names, out, params, expected):
    assert REGISTRY[name].adjoint_terms(names, out=out, params=params) == expected


def test_the_explorers_example_reads_as_intended():
    # L = (x·w + b − y)²: the rule lines of the sweep, with bars on the names.
    sub = REGISTRY["subtract"].adjoint_terms(["t2", "y"], out="t3")
    mul = REGISTRY["multiply"].adjoint_terms(["x", "w"], out="t1")
    lines = [f"{bar(n)} += {t}" for n, t in zip(["t2", "y", "x", "w"], sub + mul)]
    assert lines == ["t̄2 += ḡ", "ȳ += −ḡ", "x̄ += ḡ·w", "w̄ += ḡ·x"]


# -- formatting never fails -----------------------------------------------------------
class _Opaque:
    """An object whose default repr would show a memory address."""


_PARAM_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True),
    st.text(max_size=5), st.just(Ellipsis), st.builds(_Opaque),
    st.builds(slice, st.none() | st.integers(-3, 3), st.none() | st.integers(-3, 3),
              st.none() | st.integers(1, 3)),
    st.tuples(st.integers(0, 3), st.integers(0, 3)),
    st.lists(st.integers(0, 9), max_size=12).map(np.array),
    st.lists(st.booleans(), min_size=1, max_size=12).map(np.array),
    st.just(np.zeros((3, 4))), st.just(np.dtype(np.float32)), st.just(np.float64),
    st.just(np.int64(3)), st.just(((0, 1), (2, 3))),
)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(NAMES),
       names=st.lists(st.text(min_size=1, max_size=4), min_size=0, max_size=4),
       out=st.text(max_size=4),
       params=st.dictionaries(
           st.sampled_from(["axis", "index", "shape", "k", "shift", "ddof", "axis1", "axis2",
                            "source", "destination", "subscripts", "keepdims", "junk"]),
           _PARAM_VALUES, max_size=4))
def test_any_names_and_params_format_without_error(name, names, out, params):
    op = REGISTRY[name]
    if op.nin != -1:  # a fixed-arity op is shown with one name per input
        names = (names + ["n0", "n1", "n2"])[: op.nin]
    terms = op.adjoint_terms(names, out=out, params=params)
    assert len(terms) == (len(names) if op.nin == -1 else op.nin)
    for term in terms:
        assert term is None or isinstance(term, str)
        if term is not None:
            assert " at 0x" not in term  # no addresses, whatever the params hold


def test_missing_params_stay_as_written_and_defaults_fill_in():
    assert REGISTRY["getitem"].adjoint_terms(["x"]) == ["ḡ scattered into zeros at [{index}]"]
    assert REGISTRY["swapaxes"].adjoint_terms(["x"], params={"axis1": 0}) == [
        "ḡ with axes 0 and {axis2} swapped back"]
    # triu's k defaults to 0 in its forward, so a call without k= still reads right
    assert REGISTRY["triu"].adjoint_terms(["x"], params={}) == ["triu(ḡ, 0)"]
    assert REGISTRY["var"].adjoint_terms(["x"], params={"ddof": 1}) == [
        "ḡ·2·(x − mean) / (n − 1)"]


def test_params_are_shown_briefly_and_deterministically():
    getitem = REGISTRY["getitem"]

    def at(index: Any) -> str:
        return getitem.adjoint_terms(["x"], params={"index": index})[0].split(" at ", 1)[1]

    assert at((Ellipsis, None, slice(1, None, 2))) == "[..., None, 1::2]"
    assert at(np.array([0, 0, 3])) == "[[0, 0, 3]]"
    assert at(np.ones((4, 3), bool)) == "[mask(4×3)]"
    assert at((np.arange(12).reshape(3, 4), 0)) == "[array(3×4), 0]"
    assert at(np.int64(2)) == "[2]"
    assert at(_Opaque()) == "[_Opaque]"
    moved = REGISTRY["moveaxis"].adjoint_terms(["x"], params={"source": (0,), "destination": 2})
    assert moved == ["ḡ with axes moved from 2 back to (0,)"]
    # a name holding braces is inserted as it is, never filled in again
    assert REGISTRY["multiply"].adjoint_terms(["{1}", "{out}"]) == ["ḡ·{out}", "ḡ·{1}"]


# -- ops without templates (made at run time) -----------------------------------------
def test_an_op_without_templates_falls_back_honestly():
    op = Op("mystery", lambda x, i: x, (lambda g, ans, x, i: g, None))
    assert op.adjoint is None
    assert op.adjoint_terms(["x", "i"]) == ["VJP of mystery applied to ḡ", None]


def test_a_custom_vjp_on_the_tape_gets_the_fallback():
    @wg.custom_vjp
    def clipped_sin(x):
        return np.sin(x)

    clipped_sin.defvjp(lambda x: (np.sin(x), x), lambda x, g: (g * np.cos(x),))
    x = wg.tensor([0.5, 1.0], requires_grad=True)
    tape = wg.tape_of((clipped_sin(x) * 2.0).sum())
    eq = tape[0]
    assert eq.op.name == "clipped_sin"
    terms = eq.op.adjoint_terms([i.name for i in eq.inputs], eq.name, eq.params)
    assert terms[0] == "VJP of clipped_sin applied to ḡ"
    assert tape[1].op.adjoint_terms(["t0", "c"], "t1", tape[1].params) == ["ḡ·c", "ḡ·t0"]


# -- the record checks its templates when it is built ---------------------------------
def _rule(g: Any, ans: Any, *xs: Any) -> Any:
    return g


def test_op_rejects_templates_that_do_not_fit_its_rules():
    with pytest.raises(ValueError, match="2 adjoint templates for 1 inputs"):
        Op("bad", np.negative, (_rule,), adjoint=("ḡ", "ḡ"))
    with pytest.raises(ValueError, match=r"adjoint\[1\] must be None exactly"):
        Op("bad", np.take, (_rule, None), adjoint=("ḡ", "ḡ"))
    with pytest.raises(ValueError, match=r"adjoint\[0\] must be None exactly"):
        Op("bad", np.take, (_rule, None), adjoint=(None, None))
    with pytest.raises(ValueError, match="variadic op takes one adjoint template"):
        Op("bad", np.stack, PerInput(lambda i, g, ans, *xs: g), adjoint=("ḡ", "ḡ"))
    with pytest.raises(TypeError, match="not str"):
        Op("bad", np.negative, (_rule,), adjoint=(3,))
    ok = Op("ok", np.take, (_rule, None), adjoint=["ḡ", None])
    assert ok.adjoint == ("ḡ", None)


# -- bar ------------------------------------------------------------------------------
def test_bar_examples():
    assert bar("x") == "x\u0304" == "x̄"
    assert bar("t3") == "t̄3"
    assert bar("w_1") == "w̄_1"
    assert bar("g") == "ḡ"  # the precomposed letter the templates use
    assert bar("") == ""
    assert bar("x\u0302y") == "x\u0302\u0304y"  # after the marks already on the letter


@given(st.text(min_size=1, max_size=8))
def test_bar_marks_the_first_letter_only(name):
    marked = bar(name)
    assert unicodedata.normalize("NFD", marked).count("\u0304") == (
        unicodedata.normalize("NFD", name).count("\u0304") + 1)
    end = 1
    while end < len(name) and unicodedata.combining(name[end]):
        end += 1
    assert marked.endswith(name[end:])


# -- the formulas compute what the rules compute --------------------------------------
def _iverson(inside: str) -> str:
    """``[a ≤ b ≤ c or d is NaN]`` as a NumPy boolean expression (in parentheses)."""
    parts = []
    for alternative in inside.split(" or "):
        if alternative.endswith(" is NaN"):
            parts.append(f"isnan({alternative[: -len(' is NaN')]})")
            continue
        tokens = re.split(r"\s*(<=|>=|<|>|≤|≥)\s*", alternative)
        ops = {"≤": "<=", "≥": ">="}
        pairs = [f"({tokens[k]} {ops.get(tokens[k + 1], tokens[k + 1])} {tokens[k + 2]})"
                 for k in range(0, len(tokens) - 2, 2)]
        parts.append("(" + " & ".join(pairs) + ")")
    return "(" + " | ".join(parts) + ")"


def _python(term: str) -> str | None:
    """A filled-in term written as a formula, as a NumPy expression (``None``: prose).

    Notes on conventions (after two spaces, or ``, ½ on ties``) are dropped.
    """
    term = term.split("  (")[0].split(", ½")[0]
    m = re.fullmatch(r"ḡ where (not )?(\w+)", term)
    if m:
        return f"where({m.group(2)}, 0.0, g)" if m.group(1) else f"where({m.group(2)}, g, 0.0)"
    term = re.sub(r"\[([^\]]+)\]", lambda m: _iverson(m.group(1))
                  if re.search(r"[<>≤≥]|is NaN", m.group(1)) else m.group(0), term)
    for old, new in [("ḡ", "g"), ("·", "*"), ("−", "-"), ("√(", "sqrt("), ("π", "pi"),
                     ("^", "**"), ("⁻ᵀ", "_invT"), ("⁻¹", "_inv"), ("ᵀ", "_T"), ("²", "**2"),
                     ("Φ(", "phi(")]:
        term = term.replace(old, new)
    term = re.sub(r"ln (\w+)", r"log(\1)", term)
    term = re.sub(r"(\w+)_invT", r"inv(\1).T", term)
    term = re.sub(r"(\w+)_inv", r"inv(\1)", term)
    term = re.sub(r"(\w+)_T", r"\1.T", term)
    try:
        compile(term, "<term>", "eval")
    except SyntaxError:
        return None
    return term


def _phi(m: np.ndarray) -> np.ndarray:
    return np.tril(m) - 0.5 * np.diag(np.diag(m))


_FUNCTIONS = {"sqrt": np.sqrt, "log": np.log, "exp": np.exp, "cos": np.cos, "sin": np.sin,
              "conj": np.conj, "cosh": np.cosh, "sinh": np.sinh, "sign": np.sign, "floor": np.floor,
              "isnan": np.isnan, "where": np.where, "pi": math.pi, "inv": np.linalg.inv,
              "phi": _phi, "sym": lambda s: 0.5 * (s + s.T), "triu": np.triu, "tril": np.tril,
              "take": np.take, "take_along_axis": np.take_along_axis, "trunc": np.trunc,
              "ldexp": np.ldexp}

#: Ops whose templates are formulas; each must evaluate and agree with the VJP rule.
FORMULA_OPS = sorted(
    {"negative", "positive", "abs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10",
     "log1p", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos",
     "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg",
     "sinc", "floor", "ceil", "rint", "round", "trunc", "relu", "sigmoid", "copy", "add",
     "subtract", "multiply", "divide", "power", "maximum", "minimum", "fmax", "fmin",
     "arctan2", "hypot", "logaddexp", "logaddexp2", "mod", "floor_divide", "clip", "where",
     "scatter_add", "triu", "tril", "take_add", "take_along_axis_add", "var", "std",
     "logsumexp", "matmul", "outer", "inv", "det", "slogdet", "solve", "cholesky", "conjugate",
     "check", "fmod", "fraction", "ldexp", "nextafter", "spacing", "slogdet_sign"})


def _formula_sample(op: Op, args: tuple[Any, ...], params: dict[str, Any]) -> bool:
    """Whether a test case is one the op's formula is written for."""
    dims = [np.ndim(a) for a in args]
    if op.name == "outer":
        return dims == [1, 1]  # "flattened": the formula of vectors
    if op.name == "det" and dims == [2]:  # the note says what a singular matrix gets
        return abs(np.linalg.det(args[0])) > 1e-9
    if op.name == "cholesky" and params.get("upper"):  # the formula is the lower factor's
        return False
    if op in linalg.FAMILY.ops:
        return all(d == 2 for d in dims)  # ᵀ and @ of matrices
    if op.name in ("triu", "tril"):
        return dims[0] >= 2  # (a 1-d input's cotangent is also summed back)
    if op.name in ("var", "std", "logsumexp"):
        return params.get("axis") is None or bool(params.get("keepdims"))  # ḡ broadcasts
    return True


def _scope(names: list[str], args: tuple[Any, ...], ans: Any, g: Any) -> dict[str, Any]:
    scope = {**_FUNCTIONS, **dict(zip(names, map(np.asarray, args))), "out": ans, "g": g}
    x = np.asarray(args[0])
    scope["n"] = x.size // max(np.size(ans), 1)  # entries per reduction (var, std)
    scope["mean"] = np.mean(x) if np.ndim(ans) == 0 else None
    return scope


def test_the_formula_ops_are_exactly_those_whose_templates_are_formulas():
    formulas = []
    for name in NAMES:
        op = REGISTRY[name]
        terms = op.adjoint_terms(_names(op), out="out",
                                 params=op.samples(np.random.default_rng(0))[0][1])
        if all(t is None or _python(t) is not None for t in terms) and any(
                r is not None for r in op.vjps):
            formulas.append(name)
    assert sorted(formulas) == FORMULA_OPS


def _compare(op: Op, args: tuple[Any, ...], params: dict[str, Any], rng: Any) -> int:
    """Evaluate the op's filled-in formulas on one test case against its VJP rules;
    returns how many inputs were compared."""
    names = ["x", "y", "z"][: len(args)]
    ans = op.impl(*args, **params)
    g = rng.normal(size=np.shape(ans))
    scope = _scope(names, args, ans, g)
    if op.name in ("var", "std") and np.ndim(ans):  # keepdims: the mean along axis
        scope["mean"] = np.mean(args[0], axis=params["axis"], keepdims=True)
    compared = 0
    for term, rule in zip(op.adjoint_terms(names, out="out", params=params), op.vjps):
        if rule is None:
            continue
        code = _python(term)
        if code is None:  # an index shown abbreviated (mask(2×2)): prose for this case
            assert any(isinstance(v, np.ndarray) for v in params.values()), term
            continue
        with np.errstate(all="ignore"):
            want = np.asarray(rule(g, ans, *args, **params), dtype=float)
            got = np.broadcast_to(np.asarray(eval(code, scope), dtype=float), want.shape)
        defined = ~np.isnan(got)  # 0/0 at sinc(0): the template's note covers it
        assert defined.mean() > 0.7, (op.name, term)
        np.testing.assert_allclose(got[defined], want[defined], rtol=1e-9, atol=1e-12,
                                   err_msg=f"{op.name}: {term} ({code})")
        compared += 1
    return compared


@pytest.mark.parametrize("name", FORMULA_OPS)
def test_formula_templates_compute_what_the_rule_computes(name):
    op = REGISTRY[name]
    rng = np.random.default_rng(2)
    checked = sum(_compare(op, args, params, rng) for args, params in op.samples(rng)
                  if _formula_sample(op, args, params))
    assert checked, f"no test case of {name} was checked"


def test_formulas_hold_at_the_bounds_and_kinks():
    rng = np.random.default_rng(3)
    # clip: x at either bound keeps its gradient (bounds included), and lo > hi gives hi
    x = np.array([-0.5, 1.0, 0.2, -2.0, 3.0])
    assert _compare(REGISTRY["clip"], (x, -0.5, 1.0), {}, rng) == 3
    assert _compare(REGISTRY["clip"], (x, 2.0, 1.0), {}, rng) == 3
    zero = np.array([0.0, -1.5, 2.0])
    for name in ("relu", "abs", "sqrt", "sign", "floor"):
        assert _compare(REGISTRY[name], (np.abs(zero) if name == "sqrt" else zero,), {}, rng)


def test_ties_and_kinks_follow_the_notes():
    # ½ on ties, as maximum's rule does; relu'(0) = abs'(0) = 0 as the Iverson
    # bracket and sign(0) say.
    x, y, g = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0]), np.ones(3)
    assert REGISTRY["maximum"].vjps[0](g, np.maximum(x, y), x, y).tolist() == [0.5, 1.0, 0.0]
    assert "½ on ties" in REGISTRY["maximum"].adjoint_terms(["x", "y"])[0]
    zero = np.array([0.0])
    assert REGISTRY["relu"].vjps[0](np.ones(1), zero, zero).tolist() == [0.0]
    assert REGISTRY["abs"].vjps[0](np.ones(1), zero, zero).tolist() == [0.0]


#: Ops whose complex rules are not their real ones, and whose complex templates are formulas.
COMPLEX_FORMULA_OPS = ["abs", "var", "std"]


@pytest.mark.parametrize("name", COMPLEX_FORMULA_OPS)
def test_complex_templates_compute_what_the_complex_rule_computes(name):
    """The templates shown for complex values (``abs``: ``ḡ·conj(z)/|z|``, not the real
    ``ḡ·sign(x)``) agree with the VJP rule on complex inputs."""
    op = REGISTRY[name]
    rng = np.random.default_rng(4)
    z = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    params = {} if name == "abs" else {"axis": None, "ddof": 0, "keepdims": False}
    ans = op.impl(z, **params)
    g = rng.normal(size=np.shape(ans))
    scope = _scope(["x"], (z,), ans, g)
    (term,) = op.adjoint_terms(["x"], out="out", params=params, complex_values=True)
    code = _python(term)
    assert code is not None, term
    want = op.vjps[0](g, ans, z, **params)
    np.testing.assert_allclose(eval(code, scope), want, rtol=1e-12, err_msg=term)
    assert op.adjoint_terms(["x"], out="out", params=params) != [term]  # the real ones differ


def test_the_explorer_shows_complex_templates_for_complex_equations():
    from wengert.jupyter.explorer.frames import explorer_frames

    def rules_of(out):
        d = explorer_frames(wg.tape_of(out))
        return {d["ops"][o][0]: d["rules"][r] for o, r in zip(d["eqs"]["op"], d["eqs"]["rule"])}

    z = wg.tensor(np.array([1 + 2j, 3 - 1j]), requires_grad=True)
    x = wg.tensor(np.array([1.0, -2.0]), requires_grad=True)
    assert "conj" in rules_of(np.sum(np.abs(z) ** 2))["abs"][0]
    assert "sign" in rules_of(np.sum(np.abs(x)))["abs"][0]
