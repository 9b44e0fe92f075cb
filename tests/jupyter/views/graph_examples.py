"""Traced programs and hand-made passes the view tests draw, list and diff.

The "after" graphs are made here by hand (:func:`drop_dead`, :func:`drop_times_one`), so
the view tests do not depend on the passes; each is checked to keep values and gradients,
as a pass must (``test_diff.py``).
"""

from __future__ import annotations

import subprocess

import numpy as np
import wengert as wg
from wengert.graph.ir import Literal, Var
from wengert.graph.program import Graph


def loss(x, w, b):
    h = np.tanh(x @ w + b)
    return np.sum(h ** 2)


def model(x, w):
    unused = np.exp(x)  # noqa: F841 - dead code, for the pass views
    h = np.sin(x @ w) * 1.0
    return np.sum(h * np.cos(x @ w))


def branchy(x):
    if np.sum(x) > 0:
        return np.sum(np.sin(x) * 2.0)
    return np.sum(np.cos(x) - 1.0)


X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
W = np.linspace(0.1, 0.6, 6).reshape(3, 2)
B = np.array([0.1, -0.2])


def drop_dead(graph: Graph) -> Graph:
    """Dead code elimination by hand: one backward sweep from the outputs and guards."""
    live = {v for v in graph.outputs if type(v) is Var} | {g.var for g in graph.guards}
    for eq in reversed(graph.equations):
        if eq.out in live:
            live.update(v for v in eq.ins if type(v) is Var)
    return graph.replace(equations=[eq for eq in graph.equations if eq.out in live])


def drop_times_one(graph: Graph) -> Graph:
    """``t = u * 1.0`` with ``u`` of ``t``'s shape and dtype: later readers read ``u``."""
    mapping: dict[Var, Var] = {}
    kept = []
    for eq in graph.equations:
        if any(type(v) is Var and v in mapping for v in eq.ins):
            eq = eq.replace(ins=[mapping.get(v, v) if type(v) is Var else v for v in eq.ins])
        a = eq.ins[0] if eq.ins else None
        if (eq.op.name == "multiply" and type(eq.ins[1]) is Literal and eq.ins[1].value == 1.0
                and type(a) is Var and a.shape == eq.out.shape and a.dtype == eq.out.dtype
                and a.scalar == eq.out.scalar):
            mapping[eq.out] = a
            continue
        kept.append(eq)
    outputs = [mapping.get(v, v) if type(v) is Var else v for v in graph.outputs]
    return graph.replace(equations=kept, outputs=outputs)


def grad_graph_of(f, *args) -> Graph:
    return wg.trace(wg.grad(f, argnums=tuple(range(len(args)))), *args)


def svg_of(source: str) -> str:
    """Runs ``dot -Tsvg``: the DOT text must parse, without a warning."""
    done = subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert not done.stderr.strip(), done.stderr.decode()
    return done.stdout.decode()
