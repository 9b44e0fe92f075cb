"""``wg.explain``: why a gradient is None, zero or NaN, where, and how to fix it."""
