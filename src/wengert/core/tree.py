"""Minimal pytrees: nested tuples, lists and dicts of leaves.

Examples
--------
>>> leaves, spec = flatten({"w": 1.0, "b": (2.0, 3.0)})
>>> leaves
[1.0, 2.0, 3.0]
>>> unflatten(spec, [x * 10 for x in leaves])
{'w': 10.0, 'b': (20.0, 30.0)}
"""

from __future__ import annotations

from typing import Any

__all__ = ["flatten", "unflatten", "tree_map"]

_LEAF = "leaf"


def flatten(tree: Any) -> tuple[list[Any], Any]:
    """Return the leaves of ``tree`` (left to right) and a spec to rebuild it."""
    leaves: list[Any] = []
    # Iterative: explicit stack of (node, path-into-spec) pairs.
    root_spec: list[Any] = [None]
    stack: list[tuple[Any, list[Any], int]] = [(tree, root_spec, 0)]
    while stack:
        node, holder, slot = stack.pop()
        tn = type(node)
        if tn is tuple or tn is list or (
            isinstance(node, (tuple, list)) and not hasattr(node, "_fields")
        ):
            children: list[Any] = [None] * len(node)
            holder[slot] = (type(node), None, children)
            for i in range(len(node) - 1, -1, -1):
                stack.append((node[i], children, i))
        elif isinstance(node, dict):
            keys = list(node)
            children = [None] * len(keys)
            holder[slot] = (dict, keys, children)
            for i in range(len(keys) - 1, -1, -1):
                stack.append((node[keys[i]], children, i))
        elif node is None:
            holder[slot] = (type(None), None, [])
        else:
            holder[slot] = _LEAF
            leaves.append(node)
    return leaves, root_spec[0]


def unflatten(spec: Any, leaves: list[Any]) -> Any:
    """Inverse of :func:`flatten`."""
    it = iter(leaves)

    def build(s: Any) -> Any:
        if s == _LEAF:
            return next(it)
        kind, keys, children = s
        if kind is type(None):
            return None
        # Children are built left to right so the leaf iterator stays in order.
        built = [build(c) for c in children]
        if kind is dict:
            return dict(zip(keys, built))
        return kind(built)

    return build(spec)


def tree_map(fn: Any, tree: Any) -> Any:
    """Apply ``fn`` to every leaf of ``tree``."""
    leaves, spec = flatten(tree)
    return unflatten(spec, [fn(x) for x in leaves])
