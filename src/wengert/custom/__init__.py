"""User-written differentiation: ``custom_vjp`` and ``custom_jvp`` rules, and ``checkpoint``
(recompute in the backward pass instead of storing)."""
