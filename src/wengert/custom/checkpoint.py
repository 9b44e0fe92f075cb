"""Gradient checkpointing: store a function's inputs, recompute the rest in backward.

``wg.checkpoint(f)`` returns a function that computes the same values as
``f``. On tensors it records *one* node instead of ``f``'s whole graph: the
forward pass runs ``f`` under :func:`wengert.no_grad` (nothing is saved) and
the node keeps only the inputs. Its VJP runs ``f`` again with recording on,
from fresh leaves holding the saved inputs, and pulls the cotangent back
through that recomputation, so the gradients are exactly those of ``f``. The
memory kept alive between the forward and the backward pass drops from all of
``f``'s intermediate values to its inputs and outputs; the price is one more
forward evaluation of ``f`` in the backward pass.

Tensors that ``f`` uses without receiving them as arguments (weights in a
closure) are found during the forward pass and become inputs of the node too,
so they get their gradients. With ``create_graph=True`` (and in nested
transforms) the recomputation is recorded, so higher derivatives work.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> def block(x):
...     for _ in range(50):
...         x = np.sin(x) + x
...     return x
>>> x = wg.tensor(np.linspace(0.0, 1.0, 5), requires_grad=True)
>>> y = wg.checkpoint(block)(x).sum()
>>> y.grad_fn.next_functions[0]
<CheckpointBlockBackward>
>>> y.backward()
>>> np.allclose(x.grad, wg.grad(lambda x: block(x).sum())(x.detach().numpy()))
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from wengert.core import tree as _tree
from wengert.core.bind import is_traced, owner, primal
from wengert.core.levels import is_open
from wengert.core.modes import GRAD_ENABLED, RECORDERS, Recorder
from wengert.core.node import next_seq
from wengert.core.op import ALL_INPUTS, Op
from wengert.custom.rules import (
    _Args,
    _leaves_like,
    _op_name,
    _out_cotangents,
    _output_op,
    _pullback_rule,
    _record_call,
    _recording,
    _Saved,
    _split_level,
    _zeros,
    entry_leaf,
    sweep_region,
)
from wengert.forward.dual import DUAL
from wengert.reverse.tensor import Tensor, constant, value_of
from wengert.transforms.reverse import check_function

__all__ = ["checkpoint"]


class _FreeVariables(Recorder):
    """A stand-in recorder, open during the forward pass, that notes the differentiable
    tensors ``f`` touches: under ``no_grad`` every op still asks the open recorders
    whether they track its inputs, and results of ``f``'s own ops are constants,
    so the differentiable tensors it sees come from outside (closures)."""

    __slots__ = ("found", "outer")
    recording = True
    #: Why the values computed in this run are constants (read by the messages of
    #: ``register_hook`` and ``retain_grad``).
    constant_note = (
        "Inside wg.checkpoint(f), f's forward run computes constants: its graph is made "
        "only when f runs again in the backward pass, so hooks and retain_grad on its "
        "intermediate values are not supported. Register the hook on the checkpointed "
        "function's output or inputs, or do not checkpoint f."
    )

    def __init__(self, outer: tuple[Any, ...]) -> None:
        self.found: dict[int, Tensor] = {}
        self.outer = outer

    def tracks(self, t: Tensor) -> bool:
        if id(t) not in self.found and (
            t._rg or t._node is not None
            or any(r.recording and r.tracks(t) for r in self.outer)
        ):
            self.found[id(t)] = t
        return False


def _fingerprint(out: Any) -> list[tuple[Any, ...]] | None:
    """Per output leaf: its shape and two sums (of the values and of their squared
    magnitudes), to tell whether running the function again gave the same values
    (``None`` for a graph's values, which are not known while it is traced)."""
    prints = []
    for leaf in _tree.flatten(out)[0]:
        v = primal(value_of(leaf))
        if is_traced(v):
            return None
        a = np.asarray(v)
        if a.dtype.kind not in "biufc":
            prints.append((a.shape, None, None))
            continue
        with np.errstate(all="ignore"):
            prints.append((a.shape, complex(np.sum(a)), float(np.sum(np.abs(a) ** 2))))
    return prints


def _same_values(before: list[tuple[Any, ...]], after: list[tuple[Any, ...]]) -> bool:
    if len(before) != len(after):
        return False
    for (shape0, s0, q0), (shape1, s1, q1) in zip(before, after):
        if shape0 != shape1:
            return False
        if s0 is None:
            continue
        scale = max(abs(q0), abs(q1), 1e-300) ** 0.5
        if not (np.allclose([s0, q0], [s1, q1], rtol=1e-9, atol=1e-12 * scale,
                            equal_nan=True)):
            return False
    return True


def _impl(*inputs: Any) -> Any:
    saved = inputs[-1]
    n = len(inputs) - 1 - saved.n_free
    return saved.fun(*saved.args.rebuild(inputs[:n]), **saved.kwargs)


def _pullback(saved: _Saved, g: Any, ans: Any, xs: tuple[Any, ...], create: bool) -> list[Any]:
    """Re-run ``f`` with recording on and pull ``g`` back to its inputs."""
    n_in = len(xs) - saved.n_free
    edges = saved.edges
    # A transform that has returned (a viewer replays the node after it): nothing can
    # differentiate through its level any more, so the recomputation runs at level 0.
    level = saved.level if is_open(saved.level) else 0.0
    entries: list[Any] = []
    wanted: list[Any] = []
    outer_mode = GRAD_ENABLED.get()
    token = GRAD_ENABLED.set(True)
    start = next_seq()
    current_rng = None
    try:
        for j in range(n_in):
            x = xs[j]
            if edges[j] is None:
                entries.append(constant(value_of(x), level) if saved.mask[j]
                               else value_of(x))
                continue
            e = entry_leaf(x, level)  # connected to x when the backward pass is recorded
            entries.append(e)
            wanted.append(e._node if e._node is not None else e)
        free = [edges[n_in + k] for k in range(saved.n_free)]
        if saved.rng is not None:
            current_rng = np.random.get_state()
            np.random.set_state(saved.rng)
        out = saved.fun(*saved.args.rebuild(entries), **saved.kwargs)
        if current_rng is not None:
            np.random.set_state(current_rng)
            current_rng = None
        again = None if saved.fingerprint is None else _fingerprint(out)
        if again is not None and not _same_values(saved.fingerprint, again):
            raise RuntimeError(
                f"wg.checkpoint({_op_name(saved.fun)}): running the function again in the "
                "backward pass gave other values than in the forward pass, so the gradient "
                "would be that of another function. It depends on something besides its "
                "arguments that changed: random numbers from a np.random.Generator (draw "
                "them outside and pass them in, or reseed it inside), np.random with "
                "preserve_rng_state=False, or an array it reads that was changed in place "
                "(pass a copy). Make it a function of its arguments.")
        outs = _leaves_like(saved.out_spec, out, "checkpoint: the recomputed output")
        cts = sweep_region(outs, _out_cotangents(saved, g), start, wanted + free, create,
                           outer_mode)
    finally:
        if current_rng is not None:
            np.random.set_state(current_rng)
        GRAD_ENABLED.reset(token)
    result: list[Any] = []
    k = 0
    for j, x in enumerate(xs):
        if edges[j] is None:
            result.append(None)
            continue
        edge = wanted[k] if j < n_in else edges[j]
        k += j < n_in
        ct = cts.get(id(edge))
        result.append(_zeros(x) if ct is None else ct)
    return result


def _run_watched(fun: Callable[..., Any], args: Any, kwargs: dict[str, Any]) -> Any:
    """``fun(*args, **kwargs)`` without recording, and the tensors it read that are not
    among ``args`` (its free variables: closed-over values)."""
    recs = RECORDERS.get()
    spy = _FreeVariables(recs)
    token = RECORDERS.set(recs + (spy,))
    grad_token = GRAD_ENABLED.set(False)
    try:
        out = fun(*args, **kwargs)
    finally:
        GRAD_ENABLED.reset(grad_token)
        RECORDERS.reset(token)
    return out, list(spy.found.values())


def checkpoint(
    fun: Callable[..., Any] | None = None, *, preserve_rng_state: bool = True
) -> Any:
    """Make ``fun`` store only its inputs and recompute its graph in the backward pass.

    Parameters
    ----------
    fun : callable
        Positional arguments may be tensors, arrays, floats or
        tuples/lists/dicts of them; keyword arguments are passed through as
        constants. It may return one array or a tuple/list/dict of them.
    preserve_rng_state : bool
        Save NumPy's global random state (``np.random``) before the forward
        pass and restore it for the recomputation, so random draws (dropout
        masks) are the same both times. ``Generator`` objects are yours to
        reseed: a recomputation that gives other values than the forward pass (told
        by two sums of each output) raises, since the gradient would be that of
        another function.

    Returns
    -------
    callable
        Computes what ``fun`` computes. On tensors it records one node named
        ``checkpoint_<fun>`` (``CheckpointFunBackward``); on plain values,
        under :func:`wengert.no_grad` and for dual numbers it just calls
        ``fun``.

    Examples
    --------
    >>> import numpy as np
    >>> import wengert as wg
    >>> f = lambda x: np.tanh(np.tanh(x) * 2.0)
    >>> g = wg.checkpoint(f)
    >>> x = np.array([0.1, 0.7])
    >>> np.allclose(wg.grad(lambda x: g(x).sum())(x), wg.grad(lambda x: f(x).sum())(x))
    True
    >>> h = lambda fn: wg.grad(wg.grad(lambda x: fn(x) ** 2))(0.5)   # second derivatives
    >>> np.isclose(h(g), h(f))
    np.True_
    """
    if fun is None:
        return functools.partial(checkpoint, preserve_rng_state=preserve_rng_state)
    check_function(fun, "checkpoint")
    name = f"checkpoint_{_op_name(fun)}"
    op = Op(
        name,
        _impl,
        _pullback_rule(_pullback),
        reads=ALL_INPUTS,
        state_input=True,  # the last input is the _Saved record
        formula=f"{_op_name(fun)}, recomputed in the backward pass",
        complex_rules=True,  # the function's own ops, run again
    )
    out_op = _output_op(name)

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        if not GRAD_ENABLED.get():
            return fun(*args, **kwargs)
        spec = _Args(args, (), name)
        leaves = spec.leaves
        kind, _ = owner(leaves)
        if kind is None or kind is DUAL or kind.records_calls:
            # Nothing traced, forward mode (which saves nothing), or a graph being traced
            # (its remat pass trades memory for time): nothing to checkpoint.
            return fun(*args, **kwargs)
        level, mine = _split_level(leaves)
        rng = np.random.get_state() if preserve_rng_state else None
        consts = [constant(a._value, level) if m else a for a, m in zip(leaves, mine)]
        out, free = _run_watched(fun, spec.rebuild(consts), kwargs)
        if any(f._level != level for f in free) or any(
            isinstance(a, Tensor) and not m and (a._rg or a._node is not None)
            for a, m in zip(leaves, mine)
        ):
            # Values of another level (a transform's outer tensors): recompute nothing,
            # record the function as it is (correct, without the memory saving).
            if rng is not None:
                np.random.set_state(rng)
            return fun(*args, **kwargs)
        inputs = [a if m else None for a, m in zip(leaves, mine)] + free
        rec = _recording([a for a in inputs if a is not None])
        if rec is None:
            return out  # nothing here is differentiated: the constant result
        saved = _Saved(fun, spec, kwargs, mine)
        saved.rng = rng
        saved.fingerprint = _fingerprint(out)
        saved.n_free = len(free)
        saved.level = level
        raws = [a._value if isinstance(a, Tensor) and a._level == level else a
                for a in leaves] + [f._value for f in free]
        out = _tree.tree_map(lambda v: v._value if isinstance(v, Tensor) else v, out)
        return _record_call(op, out_op, inputs, raws, out, saved, *rec)

    checkpointed.op = op  # type: ignore[attr-defined]
    return checkpointed
