"""Minimal pytrees: nested tuples, lists, dicts and namedtuples of leaves.

``None`` is an empty subtree (no leaves), as in JAX; everything else that is
not one of these containers is a leaf.

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

__all__ = ["flatten", "unflatten", "tree_map", "leaves_like", "same_structure"]

_LEAF = "leaf"
_CLOSE = object()  # unflatten: the end of a container's children
_CONTAINERS = (tuple, list, dict)


def flatten(tree: Any) -> tuple[list[Any], Any]:
    """Return the leaves of ``tree`` (left to right) and a spec to rebuild it."""
    # The common arguments first: a lone leaf, a tuple of leaves.
    if tree is not None and not isinstance(tree, _CONTAINERS):
        return [tree], _LEAF
    if type(tree) is tuple:
        for x in tree:
            if x is None or isinstance(x, _CONTAINERS):
                break
        else:
            return list(tree), (tuple, None, [_LEAF] * len(tree))
    leaves: list[Any] = []
    # Iterative: explicit stack of (node, path-into-spec) pairs.
    root_spec: list[Any] = [None]
    stack: list[tuple[Any, list[Any], int]] = [(tree, root_spec, 0)]
    while stack:
        node, holder, slot = stack.pop()
        tn = type(node)
        if tn is tuple or tn is list or isinstance(node, (tuple, list)):
            children: list[Any] = [None] * len(node)
            # A namedtuple is rebuilt from its fields (marked by its field names).
            fields = getattr(node, "_fields", None) if tn is not tuple and tn is not list else None
            holder[slot] = (tn, fields, children)
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


def same_structure(a: Any, b: Any) -> bool:
    """Whether two specs from :func:`flatten` describe the same structure (``a == b`` at
    any depth).

    Examples
    --------
    >>> same_structure(flatten([1.0, (2.0,)])[1], flatten([3.0, (4.0,)])[1])
    True
    >>> same_structure(flatten([1.0, (2.0,)])[1], flatten([3.0, [4.0]])[1])
    False
    """
    try:
        return a == b  # (C speed for the usual shallow structures)
    except RecursionError:  # nested past the recursion limit: compare level by level
        pass
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        if a is b:
            continue
        if type(a) is str or type(b) is str:  # a leaf
            if a != b:
                return False
            continue
        if a[0] is not b[0] or a[1] != b[1] or len(a[2]) != len(b[2]):
            return False
        stack.extend(zip(a[2], b[2]))
    return True


def _describe(spec: Any) -> str:
    if spec is _LEAF or spec == _LEAF:
        return "a leaf"
    kind, keys, children = spec
    if kind is type(None):
        return "None"
    if issubclass(kind, dict):
        return f"a dict with keys {sorted(map(str, keys))}"
    return f"a {kind.__name__} of {len(children)}"


def leaves_like(tree: Any, spec: Any, what: str = "value") -> list[Any]:
    """The leaves of ``tree`` in the order of ``spec`` (from :func:`flatten` of another
    tree of the same structure): dict entries are matched by key, in any order; any other
    difference (a list for a tuple, other keys, another length) raises ``ValueError``
    naming ``what``.

    Examples
    --------
    >>> _, spec = flatten({"a": 1.0, "b": 2.0})
    >>> leaves_like({"b": 20.0, "a": 10.0}, spec)
    [10.0, 20.0]
    """
    leaves: list[Any] = []
    stack: list[tuple[Any, Any, str]] = [(tree, spec, "")]
    while stack:
        node, s, path = stack.pop()
        if s is _LEAF or s == _LEAF:
            if node is None or isinstance(node, _CONTAINERS):
                raise ValueError(f"the {what} has {_kind_text(node)} at {path or 'the top'} "
                                 "where a single array is expected")
            leaves.append(node)
            continue
        kind, keys, children = s
        if kind is type(None):
            if node is not None:
                raise ValueError(f"the {what} has {_kind_text(node)} at {path or 'the top'} "
                                 "where None is expected")
        elif issubclass(kind, dict):
            if not isinstance(node, dict) or set(node) != set(keys):
                raise ValueError(f"the {what} has {_kind_text(node)} at {path or 'the top'} "
                                 f"where {_describe(s)} is expected")
            for k, c in reversed(list(zip(keys, children))):
                stack.append((node[k], c, f"{path}[{k!r}]"))
        else:
            if type(node) is not kind or len(node) != len(children):
                raise ValueError(f"the {what} has {_kind_text(node)} at {path or 'the top'} "
                                 f"where {_describe(s)} is expected")
            for i in range(len(children) - 1, -1, -1):
                stack.append((node[i], children[i], f"{path}[{i}]"))
    return leaves


def _kind_text(node: Any) -> str:
    if node is None:
        return "None"
    if isinstance(node, dict):
        return f"a dict with keys {sorted(map(str, node))}"
    if isinstance(node, (tuple, list)):
        return f"a {type(node).__name__} of {len(node)}"
    return "a single array"


def unflatten(spec: Any, leaves: list[Any]) -> Any:
    """Inverse of :func:`flatten` (iterative too: any nesting depth)."""
    if spec is _LEAF or spec == _LEAF:
        return leaves[0]
    if spec[0] is tuple and all(c == _LEAF for c in spec[2]):
        return tuple(leaves)
    it = iter(leaves)
    # Each frame: [spec, children built so far]; a container is built once its
    # last child is, and becomes a child of the frame below it.
    stack: list[list[Any]] = [[None, []]]
    pending: list[Any] = [spec]
    while pending:
        s = pending.pop()
        if s is _CLOSE:
            kind, keys, _ = stack[-1][0]
            built = stack.pop()[1]
            if kind is dict:
                value = dict(zip(keys, built))
            elif issubclass(kind, dict):
                value = kind(zip(keys, built))
            elif keys is not None:  # a namedtuple: its fields, in order
                value = kind(*built)
            else:
                value = kind(built)
            stack[-1][1].append(value)
        elif s == _LEAF:
            stack[-1][1].append(next(it))
        elif s[0] is type(None):
            stack[-1][1].append(None)
        else:
            stack.append([s, []])
            pending.append(_CLOSE)
            pending.extend(reversed(s[2]))  # children left to right: the leaf order
    return stack[0][1][0]


def tree_map(fn: Any, tree: Any) -> Any:
    """Apply ``fn`` to every leaf of ``tree``."""
    leaves, spec = flatten(tree)
    return unflatten(spec, [fn(x) for x in leaves])
