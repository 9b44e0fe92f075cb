"""Functional transforms: ``grad``, ``value_and_grad``, ``vjp`` (reverse); ``jvp``, ``linearize``,
``derivative``, ``jacfwd``, ``jacrev``, ``hessian``, ``hvp`` (forward and mixed)."""
