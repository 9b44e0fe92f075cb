"""Static views of a reverse sweep: the adjoints step by step, and the vector-Jacobian
products it computed without building a Jacobian.

Both are HTML tables built from the explorer's frames
(:func:`~wengert.jupyter.explorer.frames.explorer_frames`, read step by step with
:func:`~wengert.jupyter.explorer.frames.step_view`), so the card of ``%%autodiff`` and
the explorer widget show the same numbers; the card's tables need no widget
and no kernel.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np
from wengert.jupyter.explorer.frames import explorer_frames, step_view

__all__ = ["frames_of", "adjoint_table_html", "vjp_table_html"]

#: Tapes longer than this are not tabulated step by step (use the explorer).
MAX_STEPS = 200


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def frames_of(result: Any) -> Mapping[str, Any] | None:
    """The explorer's frames of an ``%%autodiff`` result (computed once, kept on it);
    ``None`` in forward mode, which has no reverse sweep."""
    frames = result.extras.get("frames")
    if frames is None and result.mode != "forward":
        names = [result.leaf_names.get(id(leaf), f"x{i}")
                 for i, leaf in enumerate(result.tape.leaves)]
        with result.replay():  # a checkpoint recomputes at the cell's level
            frames = explorer_frames(result.tape, leaf_names=names, value_names=result.names)
        result.extras["frames"] = frames
    return frames


def _reverse_views(result: Any) -> tuple[list[dict[str, Any]], str | None]:
    if result.mode == "forward":
        return [], ("forward mode has no reverse sweep: run the cell with --mode reverse or "
                    "--mode both to see it.")
    if len(result.tape) == 0:
        return [], "the output does not depend on the inputs: nothing to sweep."
    differs = result.extras.get("replay_differs")
    if differs is not None and not result.sweep_kept():
        return [], differs + " The step-by-step views are not shown."
    if result.extras.get("frames") is None and result.changed_constants():
        try:
            result.replay()
        except RuntimeError as e:
            return [], str(e)
    if len(result.tape) > MAX_STEPS:
        return [], (f"{len(result.tape):,} equations: too many to list here; step through "
                    "them with _autodiff.explore().")
    frames = frames_of(result)
    steps = frames["steps"]
    first = steps["forward"] + 1  # the forward steps, then the seed
    return [step_view(frames, k) for k in range(first, steps["total"])], None


def _seed_html(result: Any) -> str:
    """What the step tables of a non-scalar output show (one sweep from ones, not the
    sweeps of the card's Jacobian), or nothing for a scalar output."""
    size = int(np.size(result.value))
    if size == 1:
        return ""
    return ('<div class="wg-dim">'
            f"The output has {size:,} entries: the card's Jacobian took one sweep per entry; "
            f"the steps below are one sweep from ones, which gives the "
            f"gradient of the sum of its {size:,} entries (the sum of the Jacobian's "
            "rows).</div>")


def _table(head: list[str], rows: list[list[str]]) -> str:
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<table class="wg-table"><thead><tr>{header}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def adjoint_table_html(result: Any) -> str:
    """One row per input of each reverse step: the equation, the cotangent it received,
    the rule, what it sent, and the running adjoint sum (fan-out written out)."""
    views, note = _reverse_views(result)
    if note is not None:
        return f'<div class="wg-dim">{_e(note)}</div>'
    rows = []
    for k, view in enumerate(views, start=1):
        if view["phase"] == "hook":  # what the hook returned replaces the adjoint
            rows.append([str(k), _e(f"gradient hook {view['hooks']} (register_hook)"),
                         _e(view["before"]), _e(_hook_effect(view)),
                         _e(view["after"] or view["before"])])
            continue
        sends = view.get("sends", [])
        for j, send in enumerate(sends):
            rule = send["rule"] + (f" = {send['numbers']}" if send.get("numbers") else "")
            rows.append([
                str(k) if j == 0 else "",
                _e(view["equation"]) if j == 0 else "",
                _e(view["incoming"]) if j == 0 else "",
                _e(rule),
                _e(_running(send)),
            ])
    return _seed_html(result) + _table(
        ["step", "equation", "received", "rule", "adjoint so far"], rows)


def _hook_effect(view: Mapping[str, Any]) -> str:
    """``q̄ = 4.2 → q̄ = 8.4``: what a hook step did (or that a replay ran no hook)."""
    if view["after"] is None:
        return f"{view['before']}: not run in this replay"
    return f"{view['before']} → {view['after']}"


def _running(send: Mapping[str, Any]) -> str:
    """``x̄ = 0.6``, or ``x̄ = 0.6 + 0.3 = 0.9`` once something was there before (fan-out)."""
    if send["before"] == "0":
        return f"{send['rule'].split(' += ')[0]} = {send['total']}"
    return send["sum"]


def vjp_table_html(result: Any) -> str:
    """Per reverse step and input: the numbers the VJP used against the Jacobian it never
    built (its shape, entries and bytes as float64)."""
    views, note = _reverse_views(result)
    if note is not None:
        return f'<div class="wg-dim">{_e(note)}</div>'
    rows = []
    for k, view in enumerate(views, start=1):
        if view["phase"] == "hook":
            rows.append([str(k), _e(f"gradient hook {view['hooks']} (register_hook)"),
                         _e(_hook_effect(view)), "", "none: its result replaces the adjoint"])
            continue
        for j, send in enumerate(view.get("sends", [])):
            shape, entries, size = send["jacobian"]
            m, n = (int(v) for v in shape.split("×"))
            rows.append([
                str(k) if j == 0 else "",
                _e(view["equation"]) if j == 0 else "",
                _e(send["rule"]),
                _e(f"{m:,} in, {n:,} out"),
                _e(f"{shape}: {entries} entr{'y' if entries == '1' else 'ies'}, {size}"),
            ])
    return _seed_html(result) + _table(
        ["step", "equation", "VJP", "numbers it used", "Jacobian never built"], rows)
