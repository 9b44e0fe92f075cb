"""A shorter form of the explorer's frames for large tapes (what :func:`~.widget.pack` sends).

The frames of :mod:`wengert.jupyter.explorer.frames` repeat what the browser can rebuild:
most equations keep the tape's names (``t12``), node kinds follow from the counts
of equations and leaves, most equations have no parameters, and most reverse steps
send one contribution that is all its input received (``[e, [[i, None, None, j]]]``).
:func:`compact` leaves those out (about a third of the JSON for a long chain) and
:func:`expand` puts them back; ``explorer.js`` expands the same way before drawing.

What changes, under ``"compact": 1``:

* ``nodes.name``: only the names of nodes past the equations (leaves, constants) as
  a list, ``nodes.eq_names`` the equations' names that are not ``t<index>``
  (index, as text -> name);
* ``nodes.kind``: left out; ``nodes.leaves`` is the number of leaves (the other outputs
  of equations with several, ``outs``, come last);
* ``eqs.params``: only those that are not ``None`` (index, as text -> text);
* ``reverse``: a step with one plain send is ``[e, i, j]`` (a hook step, ``[node, None,
  hook]``, stays as it is).

Examples
--------
>>> import wengert as wg
>>> from wengert.jupyter.explorer.frames import explorer_frames
>>> x = wg.tensor(3.0, requires_grad=True)
>>> data = explorer_frames(wg.tape_of(x * x * 2.0), leaf_names=["x"])
>>> short = compact(data)
>>> short["reverse"], short["nodes"]["name"]
([[1, 0, 0], [0, [[0, '6', None, 0], [1, '6', '12', 0]]]], ['x', '2'])
>>> expand(short) == data
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["compact", "expand"]


def compact(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without what :func:`expand` rebuilds (see the module's text)."""
    n = data["equations"]
    nodes = dict(data["nodes"])
    names = nodes["name"]
    kinds = nodes.pop("kind")
    nodes["leaves"] = kinds.count(1)
    nodes["eq_names"] = {str(k): name for k, name in enumerate(names[:n]) if name != f"t{k}"}
    nodes["name"] = names[n:]
    eqs = dict(data["eqs"])
    eqs["params"] = {str(k): p for k, p in enumerate(eqs["params"]) if p is not None}
    reverse = []
    for step in data["reverse"]:
        if step[1] is None:  # a hook step: [node, None, hook], as it is
            reverse.append(step)
            continue
        e, rows = step
        if len(rows) == 1:
            i, c, s, j = rows[0]
            if c is None and s is None:
                reverse.append([e, i, j])
                continue
        reverse.append([e, rows])
    out = dict(data)
    out.update(compact=1, nodes=nodes, eqs=eqs, reverse=reverse)
    return out


def expand(data: Mapping[str, Any]) -> dict[str, Any]:
    """The frames :func:`compact` shortened, as :func:`~.frames.explorer_frames` gave
    them (``data`` itself when it is not compact)."""
    if not data.get("compact"):
        return dict(data)
    n = data["equations"]
    nodes = dict(data["nodes"])
    rest = nodes.pop("name")
    leaves = nodes.pop("leaves")
    given = nodes.pop("eq_names")
    names = [f"t{k}" for k in range(n)]
    for k, name in given.items():
        names[int(k)] = name
    parts = sum(map(len, data.get("outs", {}).values()))  # after the constants
    nodes = {"kind": [0] * n + [1] * leaves + [2] * (len(rest) - leaves - parts) + [3] * parts,
             "name": names + rest, **nodes}
    eqs = dict(data["eqs"])
    params: list[Any] = [None] * n
    for k, p in eqs["params"].items():
        params[int(k)] = p
    eqs["params"] = params
    reverse = [[r[0], [[r[1], None, None, r[2]]]] if len(r) == 3 and r[1] is not None else r
               for r in data["reverse"]]
    out = {k: v for k, v in data.items() if k != "compact"}
    out.update(nodes=nodes, eqs=eqs, reverse=reverse)
    return out
