"""Pausing Python's cyclic garbage collector while building big, acyclic data.

Building the explorer's frames for a 10⁵-equation tape, or tracing and
compiling a graph of 10⁴ equations, allocates millions of small objects,
none of them in a reference cycle; the collector, triggered by allocation
counts, meanwhile walks the whole heap (the tape's nodes included) again and
again: about a third of the time. ``timeit`` pauses
it for the same reason. The previous state comes back on exit, also after an
exception; nested pauses keep the collector off until the outermost ends.

Examples
--------
>>> import gc
>>> with collector_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Turn the cyclic collector off inside the block (reference counting still frees
    everything that is not in a cycle), and back on after it if it was on before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
