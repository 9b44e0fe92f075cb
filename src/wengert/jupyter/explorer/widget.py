"""The explorer widget: step through the forward trace and the reverse sweep of a computation.

:func:`explore` computes everything up front in Python (the frames of
:mod:`wengert.jupyter.explorer.frames`, the layout of :mod:`wengert.jupyter.explorer.layout`)
and returns an ipywidgets widget built with anywidget whose ES module,
``explorer.js`` next to this file, only draws and steps, styled by
``explorer.css`` next to it (both given to anywidget as paths: it reads them when
the class is made, and watches them for changes only in a development install
with ``ANYWIDGET_HMR=1``). The module loads nothing from any URL, so the widget
also works in a static HTML export of the notebook (the module, the style and the
frames travel in the saved widget state) and in JupyterLite. The step is a synced
trait: set ``w.step`` from Python and the view follows; step in the browser and
``w.step`` follows.

Large tapes travel packed (:func:`pack`): their ``frames`` hold the gzip-compressed
binary form as ``bytes`` under ``packed``, which ipywidgets sends to the browser as
a binary buffer of the comm message (the ES module reads it as a ``DataView``),
never as text; a notebook saved with its widget state keeps it base64-encoded in the
state's ``buffers``, as the widget-state format does for every binary buffer.

anywidget and traitlets are imported only when a widget is made
(:func:`explorer_class`), so ``import wengert`` imports neither.

Examples
--------
>>> import wengert as wg
>>> x = wg.tensor(3.0, requires_grad=True)
>>> state = explorer_state(x * x, leaf_names=["x"])
>>> state["steps"], explorer_text(state, 2)
({'forward': 1, 'reverse': 1, 'total': 3}, '<wg.explore: 1 equation, 3 steps; step 3 (reverse)>')
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import inspect
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wengert.core.collector import collector_paused
from wengert.core.equations import Tape
from wengert.graph.program import Graph
from wengert.jupyter.explorer.columns import from_bytes, to_bytes
from wengert.jupyter.explorer.compact import compact, expand
from wengert.jupyter.explorer.frames import explorer_frames, step_label
from wengert.jupyter.explorer.graph_run import GraphRun
from wengert.jupyter.views.subject import as_tape
from wengert.reverse.tensor import Tensor

__all__ = ["explore", "explorer_state", "explorer_text", "explorer_class", "esm_source",
           "css_source", "pack", "unpack", "ESM_PATH", "CSS_PATH", "PACK_LIMIT", "PACKING"]

#: The ES module the widget ships (anywidget reads it when the class is made).
ESM_PATH = Path(__file__).with_name("explorer.js")
#: The widget's style sheet (anywidget adds it to the page once for every explorer).
CSS_PATH = Path(__file__).with_name("explorer.css")
#: Frames of tapes with more equations travel gzip-compressed as a binary buffer (the
#: browser inflates them with its own DecompressionStream): a 10⁵-equation tape is under
#: 1 MB instead of ~15 MB of JSON.
PACK_LIMIT = 20_000
#: Version of the packed form (:mod:`wengert.jupyter.explorer.columns`, as raw bytes);
#: the ES module checks it.
PACKING = 3


def pack(data: Mapping[str, Any], limit: int = PACK_LIMIT) -> dict[str, Any]:
    """The widget's ``frames`` trait for ``data``: as it is, or above ``limit`` equations
    its compact form (:mod:`wengert.jupyter.explorer.compact`), its integer columns as binary
    (:mod:`wengert.jupyter.explorer.columns`), gzip-compressed (``packed``: ``bytes``, sent
    as a binary buffer), next to what the text form needs.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(3.0, requires_grad=True)
    >>> data = explorer_frames(wg.tape_of(x * x + 1.0))
    >>> packed = pack(data, limit=1)
    >>> sorted(packed), unpack(packed) == data
    (['equations', 'format', 'packed', 'packing', 'steps', 'title'], True)
    """
    if data.get("equations", 0) <= limit or "packed" in data:  # (packed already: as it is)
        return dict(data)
    payload = to_bytes(compact(data))
    blob = gzip.compress(payload, compresslevel=1, mtime=0)
    return {"format": data["format"], "title": data["title"], "equations": data["equations"],
            "steps": data["steps"], "packing": PACKING, "packed": blob}


def unpack(frames: Mapping[str, Any]) -> dict[str, Any]:
    """The data of a ``frames`` trait, packed or not (the inverse of :func:`pack`)."""
    if "packed" not in frames:
        return dict(frames)
    if frames.get("packing") != PACKING:
        raise ValueError(
            f"these explorer frames were packed by another version of wengert (packing "
            f"{frames.get('packing', 1)}, this version reads {PACKING}); run explore() again."
        )
    blob = frames["packed"]
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise ValueError("explorer frames: 'packed' must be bytes (the gzip-compressed "
                         f"binary form), got {type(blob).__name__}; run explore() again.")
    return expand(from_bytes(gzip.decompress(blob)))


def esm_source() -> str:
    """The text of ``explorer.js``, the widget's ES module."""
    return ESM_PATH.read_text(encoding="utf-8")


def css_source() -> str:
    """The text of ``explorer.css``, the widget's style sheet."""
    return CSS_PATH.read_text(encoding="utf-8")


def _frames_to_json(frames: Mapping[str, Any], widget: Any = None) -> dict[str, Any]:
    """The ``frames`` trait as the widget's state carries it: the packed form's bytes as a
    ``memoryview``, which ipywidgets takes out of the JSON and sends as a binary buffer
    (the browser gets a ``DataView`` in its place); everything else as it is."""
    blob = frames.get("packed")
    if isinstance(blob, (bytes, bytearray)):
        return {**frames, "packed": memoryview(blob)}
    return dict(frames)


def _frames_from_json(state: Mapping[str, Any], widget: Any = None) -> dict[str, Any]:
    """The ``frames`` trait from the widget's state (the inverse of :func:`_frames_to_json`:
    a binary buffer, as ipywidgets puts it back, becomes ``bytes``)."""
    blob = state.get("packed")
    if isinstance(blob, (bytearray, memoryview)):
        return {**state, "packed": bytes(blob)}
    return dict(state)


def explorer_text(data: Mapping[str, Any], step: int) -> str:
    """The widget's plain-text form: ``<wg.explore: 4 equations, 9 steps; step 6 (reverse)>``.

    Examples
    --------
    >>> data = {"equations": 4, "steps": {"forward": 4, "reverse": 4, "total": 9}}
    >>> explorer_text(data, 0)
    '<wg.explore: 4 equations, 9 steps; step 1 (forward)>'
    """
    steps = data["steps"]
    n = data.get("equations", steps["forward"])
    total = steps["total"]
    if total == 0:
        return f"<wg.explore: {n} equation{'s' * (n != 1)}, nothing to step through>"
    phase = step_label(data, step).split(" · ")[0]
    return (f"<wg.explore: {n} equation{'s' * (n != 1)}, {total} step{'s' * (total != 1)}; "
            f"step {step + 1} ({phase})>")


def _resolve(target: Any) -> tuple[Tape, list[int] | None]:
    """The tape behind ``target`` and the equations its reverse sweep starts from."""
    tape = as_tape(target)
    output = getattr(target, "output", None) if not isinstance(target, (Tape, Tensor)) else None
    if isinstance(output, Tensor):
        grad_fn = output.grad_fn
        node = grad_fn.node if grad_fn is not None else None
        eq = tape.equation_of(node)
        if eq is not None:
            return tape, [eq.index]
        raise ValueError(
            "explore: the output of this result is not computed on its tape (it does not "
            "depend on anything that requires grad); nothing to differentiate."
        )
    return tape, None


def _names_from(target: Any, tape: Tape, names: Mapping[str, Any] | Sequence[str] | None,
                frame: Any) -> list[str] | None:
    """Names for the tape's leaves: given (a mapping name -> tensor, or one name per leaf),
    the result's own (``leaf_names``: id -> name, as ``%%autodiff`` results have), or the
    variables of the caller that hold them."""
    if names is not None and not isinstance(names, Mapping):
        names = list(names)
        if len(names) > len(tape.leaves):
            raise ValueError(f"explore: names= gives {len(names)} names for "
                             f"{len(tape.leaves)} lea{'f' if len(tape.leaves) == 1 else 'ves'}"
                             " (one name per leaf, in the tape's order x0, x1, ...)")
        return names
    labels = _labels(names)
    if labels is not None:  # {"x0": "w"}, as wg.draw takes: the caller's names for the rest
        found = _names_from(target, tape, None, frame) or [""] * len(tape.leaves)
        for k in range(len(tape.leaves)):
            found[k] = labels.get(f"x{k}", labels.get(k, found[k]))
        return found if any(found) else None
    by_id: dict[int, str] = {}
    own = getattr(target, "leaf_names", None) if names is None else None
    if isinstance(own, Mapping):
        by_id = {k: v for k, v in own.items() if isinstance(k, int) and isinstance(v, str)}
    else:
        if names is None:
            if frame is None:
                return None
            names = {**frame.f_globals, **frame.f_locals}
        for key, value in names.items():
            if isinstance(value, Tensor) and not key.startswith("_") and id(value) not in by_id:
                by_id[id(value)] = key
    found = [by_id.get(id(leaf), "") for leaf in tape.leaves]
    return found if any(found) else None


def _labels(names: Any) -> dict[Any, str] | None:
    """``names`` when it maps the tape's names to labels (``{"x0": "w", "t3": "h"}``, as
    :func:`~wengert.jupyter.views.drawing.draw` takes), ``None`` when it maps labels to
    tensors (``{"w": w}``) or is not given."""
    if not isinstance(names, Mapping) or not names:
        return None
    texts = [isinstance(v, str) for v in names.values()]
    if all(texts):
        return dict(names)
    if any(texts) or not all(isinstance(v, Tensor) for v in names.values()):
        raise TypeError(
            "explore: names= is either {name: tensor} ({'w': w}) or {tape name: name} "
            "({'x0': 'w', 't3': 'h'}, as wg.draw takes), not a mix of the two")
    return None


def explorer_state(
    target: Any,
    *,
    seed: Any = None,
    mode: str | None = None,
    leaf_names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The widget's data for ``target`` (see :func:`explore`), without making a widget."""
    tape, roots = _resolve(target)
    return explorer_frames(tape, roots=roots, seed=seed, mode=mode, leaf_names=leaf_names)


@functools.cache
def explorer_class() -> type:
    """The widget class (made on first use: it imports anywidget and traitlets)."""
    import anywidget
    import traitlets

    class Explorer(anywidget.AnyWidget):
        """Steps through the forward trace, then the reverse sweep, of a recorded computation.

        ``frames`` holds everything shown (JSON, see :mod:`wengert.jupyter.explorer.frames`;
        gzip-packed for large tapes, sent as a binary buffer, see :func:`pack`), ``data``
        the same unpacked (in Python only); ``step`` is the current step (0-based), synced
        both ways.
        """

        _esm = ESM_PATH
        _css = CSS_PATH
        frames = traitlets.Dict().tag(sync=True, to_json=_frames_to_json,
                                      from_json=_frames_from_json)
        step = traitlets.Int(0).tag(sync=True)

        @traitlets.validate("step")
        def _valid_step(self, proposal: Any) -> int:
            total = self.frames.get("steps", {}).get("total", 0)
            return max(0, min(int(proposal["value"]), max(total - 1, 0)))

        @property
        def label(self) -> str:
            """``forward · step 3/8``, ``reverse · seed``, ``reverse · step 2/8``."""
            if not self.frames.get("steps", {}).get("total"):
                return "nothing to step through"
            return step_label(self.frames, self.step)

        @property
        def data(self) -> dict[str, Any]:
            """The frames as a dict (unpacked when they travel packed)."""
            return unpack(self.frames)

        def __repr__(self) -> str:
            return explorer_text(self.frames, self.step)

    Explorer.__module__ = __name__
    return Explorer


def explore(
    target: Any,
    *,
    seed: Any = None,
    mode: str | None = None,
    names: Mapping[str, Any] | Sequence[str] | None = None,
    frames: Mapping[str, Any] | None = None,
) -> Any:
    """A widget that steps through the forward trace, then the reverse sweep, of ``target``.

    Parameters
    ----------
    target : Tensor, GradientTape, Tape, Graph, or a result with ``.tape`` (and ``.output``)
        For a tensor (or a result's ``output``) the reverse sweep starts from it;
        for a tape, from its outputs (or last equations); a traced graph is run on
        tensors made from the values it was traced with (:class:`GraphRun`).
    seed : array_like, optional
        The output's cotangent: ``1`` for a scalar output; for a non-scalar one, ones
        unless given (the panel says so).
    mode : {None, "forward", "reverse"}
        ``"forward"`` shows only the forward trace (primal and tangent of dual numbers);
        ``"reverse"`` only the sweep; by default, forward then reverse.
    names : mapping or sequence, optional
        Names for the leaves: a mapping ``{"x": x, ...}`` or one name per leaf; or, as
        :func:`~wengert.jupyter.views.drawing.draw` takes them, the tape's names mapped to
        yours (``{"x0": "w", "t3": "h"}``). By default the result's own names
        (``%%autodiff``), else the caller's variables that hold them (``x``, ``w``), else
        ``x0``, ``x1`` ...
    frames : mapping, optional
        Data computed earlier by :func:`~wengert.jupyter.explorer.frames.explorer_frames` (what
        ``%%autodiff --mode both`` keeps, since its dual numbers' tags close with the
        cell); ``target`` and the other options are then not read.

    Returns
    -------
    Explorer
        An anywidget widget; ``w.step`` reads and sets the current step.

    Raises
    ------
    RuntimeError
        When a backward pass already freed the graph and the view-keeping mode did not
        keep its sweep (the message says why and what to do). After a ``backward()`` in
        that mode (``%load_ext wengert``, ``wg.keep_values()``) the widget steps through
        the sweep that ran, hooks included.

    Examples
    --------
    >>> import wengert as wg
    >>> x, w = wg.tensor(1.5, requires_grad=True), wg.tensor(0.8, requires_grad=True)
    >>> view = explore((x * w - 1.0) ** 2)
    >>> view
    <wg.explore: 3 equations, 7 steps; step 1 (forward)>
    >>> view.step = 4
    >>> view.label
    'reverse · step 1/3'
    """
    kept = getattr(target, "extras", None)  # an %%autodiff result: its frames, its mode
    if frames is None and seed is None and mode is None and names is None \
            and isinstance(kept, Mapping):
        frames = kept.get("frames")
    if mode is None and getattr(target, "mode", None) == "forward":
        mode = "forward"  # (its dual numbers' tags closed with the cell: no sweep over them)
    if frames is not None:
        return explorer_class()(frames=pack(dict(frames)))
    caller = inspect.currentframe()
    frame = caller.f_back if caller is not None else None
    if isinstance(target, Graph):  # a traced graph: step through a run of it on tensors
        target = GraphRun(target)
    replay = getattr(target, "replay", None)  # an %%autodiff result reopens its level
    with collector_paused(), (replay() if callable(replay) else contextlib.nullcontext()):
        try:
            tape, roots = _resolve(target)
            leaf_names = _names_from(target, tape, names, frame)
        finally:
            del caller, frame
        value_names = getattr(target, "names", None)
        labels = _labels(names)
        if labels:  # the tape's names of equations ("t3": "h"), over the result's own
            value_names = {**(value_names or {}), **labels}
        data = explorer_frames(tape, roots=roots, seed=seed, mode=mode,
                               leaf_names=leaf_names, value_names=value_names)
        differs = kept.get("replay_differs") if isinstance(kept, Mapping) else None
        own = getattr(target, "sweep_kept", None)
        if differs and not (callable(own) and own()):  # (else: the cell's own sweep)
            data["seed_note"] = " ".join(filter(None, (
                data.get("seed_note"), differs,
                "The reverse steps here are that replay, not the numbers of the card.")))
        packed = pack(data)
        # Freed while the collector is off: alive at its end, the millions of lists and
        # records just made would be walked by the full collection that follows.
        del tape, data
    return explorer_class()(frames=packed)
