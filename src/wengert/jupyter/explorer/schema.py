"""The explorer's frames as a typed schema: their structure written and checked in one place.

:func:`~wengert.jupyter.explorer.frames.explorer_frames` returns a :class:`Frames` (plain
dicts and lists, JSON as they are: the ``TypedDict`` classes here only name their keys and
types); :func:`~wengert.jupyter.explorer.widget.pack` turns large ones into a
:class:`PackedFrames`. :func:`check_frames` checks data against the schema, keys, types
and the cross-references between the columns (an equation's inputs are nodes, its op
indexes ``ops``, a send's jacobian indexes ``jacs``, the layout has one entry per item);
it raises :class:`FramesError` naming the first path that does not fit. The module
:mod:`~wengert.jupyter.explorer.frames` says what each column means.

Indices: ``N`` nodes (``n`` equations first, then the leaves, then the constants), ``G``
groups; the layout's items are the nodes, then the groups.

Examples
--------
>>> import wengert as wg
>>> from wengert.jupyter.explorer.frames import explorer_frames
>>> x = wg.tensor(3.0, requires_grad=True)
>>> data = explorer_frames(wg.tape_of(x * x), leaf_names=["x"])
>>> check_frames(data)
>>> try:
...     check_frames({**data, "equations": 2})
... except FramesError as e:
...     print(e)
explorer frames: eqs.op has 1 entries, expected 2 (one per equation)
"""


from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "Frames", "PackedFrames", "Nodes", "Eqs", "Steps", "Layout", "Groups", "FramesError",
    "check_frames", "FORMAT",
]

#: Version of the data layout (the ES module checks it).
FORMAT = 1

#: A send of a reverse step: ``[input position, contribution or None, running sum or None,
#: jacobian (index into jacs)]``.
Send = list[Any]
#: A reverse step: ``[equation, [send, ...]]``, or ``[node, None, hook (index into hooks)]``.
ReverseStep = list[Any]


class Nodes(TypedDict):
    """One entry per node (equations, leaves, constants)."""

    kind: list[int]  # 0 equation, 1 leaf, 2 constant, 3 another output of an equation
    name: list[str]
    shape: list[int]  # index into Frames.shapes
    value: list[str | None]  # None: not kept
    adjoint: list[str | None]  # None: nothing reached it
    tangent: NotRequired[list[list[list[str]] | None]]  # dual numbers: [monomial, text] pairs


class Eqs(TypedDict):
    """One entry per equation."""

    op: list[int]  # index into Frames.ops
    rule: list[int]  # index into Frames.rules, -1 without display data
    ins: list[list[int]]  # node ids
    line: list[int]  # index into Frames.lines, -1 without a recorded line
    params: list[str | None]


class Steps(TypedDict):
    """The timeline: ``forward`` steps, then the seed and ``reverse`` steps."""

    forward: int
    reverse: int
    total: int


class Groups(TypedDict):
    """The groups of equations ``[start, end)`` drawn as one box."""

    start: list[int]
    end: list[int]
    parent: list[int]  # -1: the top level; parents come first
    label: list[str]


class Layout(TypedDict):
    """Per item (nodes, then groups): its container group (-1: top), rank and order."""

    groups: Groups
    container: list[int]
    rank: list[int]
    order: list[int]
    collapsed: bool


class Frames(TypedDict):
    """Everything the explorer shows (see :mod:`wengert.jupyter.explorer.frames`)."""

    format: int
    title: str
    equations: int
    mode: Literal["both", "forward", "reverse"]
    dual: bool
    eps: list[str]
    ops: list[list[str | None]]  # name, symbol, formula, form
    rules: list[list[str | None]]  # one template per input
    shapes: list[list[Any]]  # text, size (None when unknown)
    lines: list[list[Any]]  # place, function, line number, text
    nodes: Nodes
    eqs: Eqs
    steps: Steps
    seeds: list[list[Any]]  # [equation, cotangent text]
    seed_note: str | None
    reverse: list[ReverseStep]
    jacs: list[list[str]]  # shape, entries, bytes
    layout: Layout
    changed: NotRequired[list[int]]
    outs: NotRequired[dict[str, list[int]]]  # equation -> nodes of its other outputs
    hooks: NotRequired[list[list[str | None]]]  # names, before, after
    inner: NotRequired[dict[str, str]]
    sweep_note: NotRequired[str]
    bars: NotRequired[dict[str, str]]


class PackedFrames(TypedDict):
    """Frames above the packing limit: the text form's fields and the gzip-compressed
    binary form (:mod:`wengert.jupyter.explorer.columns`), sent as a binary buffer."""

    format: int
    title: str
    equations: int
    steps: Steps
    packing: int
    packed: bytes


class FramesError(ValueError):
    """Frames that do not fit the schema (the message names the path)."""


def _fail(path: str, what: str) -> None:
    raise FramesError(f"explorer frames: {path} {what}")


def _keys(path: str, value: Any, cls: type) -> None:
    if not isinstance(value, Mapping):
        _fail(path, f"must be a dict, got {type(value).__name__}")
    need, may = cls.__required_keys__, cls.__optional_keys__
    missing = sorted(need - value.keys())
    if missing:
        _fail(path, f"lacks {', '.join(missing)}")
    extra = sorted(value.keys() - need - may)
    if extra:
        _fail(path, f"has unknown keys {', '.join(map(str, extra))}")


def _ints(path: str, values: Any, low: int, high: int, length: int | None = None,
          what: str = "") -> None:
    """``values`` is a list of ints in ``low .. high - 1`` (of ``length`` entries)."""
    if not isinstance(values, Sequence) or isinstance(values, str):
        _fail(path, f"must be a list, got {type(values).__name__}")
    if length is not None and len(values) != length:
        _fail(path, f"has {len(values)} entries, expected {length}{what}")
    for k, v in enumerate(values):
        if type(v) is not int or not low <= v < high:  # (bool is not an index)
            _fail(f"{path}[{k}]", f"must be an int in {low}..{high - 1}, got {v!r}")


def _int(path: str, value: Any, low: int, high: int) -> None:
    if type(value) is not int or not low <= value < high:
        _fail(path, f"must be an int in {low}..{high - 1}, got {value!r}")


def _texts(path: str, values: Any, length: int | None = None, none: bool = False) -> None:
    if not isinstance(values, Sequence) or isinstance(values, str):
        _fail(path, f"must be a list, got {type(values).__name__}")
    if length is not None and len(values) != length:
        _fail(path, f"has {len(values)} entries, expected {length}")
    for k, v in enumerate(values):
        if not (isinstance(v, str) or (none and v is None)):
            _fail(f"{path}[{k}]", f"must be text{' or None' if none else ''}, got {v!r}")


def _check_nodes(d: Mapping[str, Any], n: int) -> int:
    nodes = d["nodes"]
    _keys("nodes", nodes, Nodes)
    big = len(nodes["name"])
    _ints("nodes.kind", nodes["kind"], 0, 4, big)
    kinds = nodes["kind"]
    if list(kinds[:n]) != [0] * n or any(k == 0 for k in kinds[n:]) or \
            any(a > b for a, b in zip(kinds[n:], kinds[n + 1:])):
        _fail("nodes.kind", "must list the equations, then the leaves, then the constants, "
                            "then the other outputs of equations with several")
    outs = d.get("outs", {})
    parts = sorted(o for os in outs.values() for o in os)
    if parts != [k for k in range(big) if kinds[k] == 3] or \
            not all(e.isdigit() and 0 <= int(e) < n for e in outs):
        _fail("outs", "must map equations to the nodes of their other outputs (kind 3), "
                      "each once")
    _texts("nodes.name", nodes["name"])
    _ints("nodes.shape", nodes["shape"], 0, len(d["shapes"]), big)
    _texts("nodes.value", nodes["value"], big, none=True)
    _texts("nodes.adjoint", nodes["adjoint"], big, none=True)
    if "tangent" in nodes and len(nodes["tangent"]) != big:
        _fail("nodes.tangent", f"has {len(nodes['tangent'])} entries, expected {big}")
    if ("tangent" in nodes) != bool(d["dual"]):
        _fail("nodes.tangent", "is given exactly when dual is true")
    return big


def _check_eqs(d: Mapping[str, Any], n: int, big: int) -> None:
    eqs = d["eqs"]
    _keys("eqs", eqs, Eqs)
    each = " (one per equation)"
    _ints("eqs.op", eqs["op"], 0, len(d["ops"]), n, each)
    _ints("eqs.rule", eqs["rule"], -1, len(d["rules"]), n, each)
    _ints("eqs.line", eqs["line"], -1, len(d["lines"]), n, each)
    _texts("eqs.params", eqs["params"], n, none=True)
    if len(eqs["ins"]) != n:
        _fail("eqs.ins", f"has {len(eqs['ins'])} entries, expected {n}{each}")
    for e, ins in enumerate(eqs["ins"]):
        _ints(f"eqs.ins[{e}]", ins, 0, big)


def _check_reverse(d: Mapping[str, Any], n: int, big: int) -> None:
    ins = d["eqs"]["ins"]
    hooks = d.get("hooks", [])
    for k, step in enumerate(d["reverse"]):
        path = f"reverse[{k}]"
        if not isinstance(step, Sequence) or len(step) not in (2, 3):
            _fail(path, f"must be [equation, sends] or [node, None, hook], got {step!r}")
        if len(step) == 3:
            if step[1] is not None:
                _fail(path, "with three entries must be a hook step [node, None, hook]")
            _int(f"{path} node", step[0], 0, big)
            _int(f"{path} hook", step[2], 0, len(hooks))
            continue
        e, sends = step
        _int(f"{path} equation", e, 0, n)
        for j, send in enumerate(sends):
            where = f"{path}.sends[{j}]"
            if not isinstance(send, Sequence) or len(send) != 4:
                _fail(where, f"must be [input, contribution, sum, jacobian], got {send!r}")
            _int(f"{where} input", send[0], 0, len(ins[e]))
            _texts(where, send[1:3], none=True)
            _int(f"{where} jacobian", send[3], 0, len(d["jacs"]))


def _check_layout(d: Mapping[str, Any], n: int, big: int) -> None:
    layout = d["layout"]
    _keys("layout", layout, Layout)
    groups = layout["groups"]
    _keys("layout.groups", groups, Groups)
    count = len(groups["start"])
    _ints("layout.groups.start", groups["start"], 0, max(n, 1), count)
    _ints("layout.groups.end", groups["end"], 1, n + 1, count)
    _ints("layout.groups.parent", groups["parent"], -1, count, count)
    _texts("layout.groups.label", groups["label"], count)
    for g, (s, e, p) in enumerate(zip(groups["start"], groups["end"], groups["parent"])):
        if not s < e or p >= g:
            _fail(f"layout.groups[{g}]", f"must be a run start < end after its parent, got "
                  f"[{s}, {e}) in {p}")
    items = big + count
    _ints("layout.container", layout["container"], -1, count, items, " (one per item)")
    _ints("layout.rank", layout["rank"], 0, items + 1, items, " (one per item)")
    _ints("layout.order", layout["order"], 0, items + 1, items, " (one per item)")
    if not isinstance(layout["collapsed"], bool):
        _fail("layout.collapsed", "must be a bool")


def check_frames(data: Mapping[str, Any]) -> None:
    """Check ``data`` against :class:`Frames` (or :class:`PackedFrames`); raise
    :class:`FramesError` naming the first path that does not fit.

    Examples
    --------
    >>> import wengert as wg
    >>> from wengert.jupyter.explorer.frames import explorer_frames
    >>> data = explorer_frames(wg.tape_of(wg.tensor(2.0, requires_grad=True) * 3.0))
    >>> check_frames(data)
    >>> try:
    ...     check_frames({**data, "nodes": {**data["nodes"], "shape": [0, 0, 7]}})
    ... except FramesError as e:
    ...     print(e)
    explorer frames: nodes.shape[2] must be an int in 0..0, got 7
    """
    if isinstance(data, Mapping) and "packed" in data:
        _keys("(top)", data, PackedFrames)
        if not isinstance(data["packed"], (bytes, bytearray, memoryview)):
            _fail("packed", f"must be bytes, got {type(data['packed']).__name__}")
        _keys("steps", data["steps"], Steps)
        return
    _keys("(top)", data, Frames)
    if data["format"] != FORMAT:
        _fail("format", f"must be {FORMAT}, got {data['format']!r}")
    n = data["equations"]
    if type(n) is not int or n < 0:
        _fail("equations", f"must be a count, got {n!r}")
    if data["mode"] not in ("both", "forward", "reverse"):
        _fail("mode", f"must be 'both', 'forward' or 'reverse', got {data['mode']!r}")
    for key in ("ops", "rules", "shapes", "lines", "jacs", "seeds", "reverse", "eps"):
        if not isinstance(data[key], list):
            _fail(key, f"must be a list, got {type(data[key]).__name__}")
    _texts("eps", data["eps"])
    big = _check_nodes(data, n)
    _check_eqs(data, n, big)
    steps = data["steps"]
    _keys("steps", steps, Steps)
    forward = n if data["mode"] != "reverse" else 0
    swept = data["mode"] != "forward" and n > 0
    want = {"forward": forward, "reverse": len(data["reverse"]),
            "total": forward + (1 + len(data["reverse"]) if swept else 0)}
    if dict(steps) != want:
        _fail("steps", f"must be {want} for these frames, got {dict(steps)}")
    for k, seed in enumerate(data["seeds"]):
        _int(f"seeds[{k}] equation", seed[0], 0, n)
    _check_reverse(data, n, big)
    _check_layout(data, n, big)
    if "changed" in data:
        _ints("changed", data["changed"], 0, big)
    for key in ("inner", "bars"):
        if key in data and not all(isinstance(k, str) and isinstance(v, str)
                                   for k, v in data[key].items()):
            _fail(key, "must map text to text")
