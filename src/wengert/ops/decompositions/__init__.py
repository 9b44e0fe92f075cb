"""NumPy functions decomposed into primitives: no rules of their own; their derivatives, in both
modes and to any order, are those of the primitives they call."""
