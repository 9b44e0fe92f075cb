"""Batched tangents (``jacfwd``'s one pass) agree with one tangent at a time, for every op.

A dual number may carry a batch of tangents (a leading axis, as ForwardDiff's
chunks); ops whose JVP rule handles that axis itself (``Op.batch_jvp``) take
a fast path, the others are looped over the batch. For every registry op,
every sample and every differentiable input (and all of them at once), the
batched tangent of the output must equal the stack of the unbatched ones:
a rule that mixes the batch axis with an operand's own leading axes fails here.
"""

from __future__ import annotations

import pytest

import numpy as np
from sweep_helpers import cases, describe, diff_positions
from wengert.core.bind import apply
from wengert.forward.dual import Dual
from wengert.ops import REGISTRY
from wengert.transforms.forward import perturbation

BATCH = 3


def _tangent_out(op, args, params, tangents, batch):
    """The output's tangent when input ``i`` carries ``tangents[i]`` (None: a constant)."""
    with perturbation("test", batch=batch) as tag:
        full = [a if tangents.get(i) is None else Dual(a, tangents[i], tag)
                for i, a in enumerate(args)]
        out = apply(op, *full, **params)
        if type(out) is not Dual or out.tag is not tag:
            return None
        return np.asarray(out.tangent)


@pytest.mark.parametrize("name", REGISTRY.names())
def test_batched_tangents_equal_one_at_a_time(name):
    op = REGISTRY[name]
    if op.jvp is None:
        pytest.skip(f"op {name} has no JVP rule")
    rng = np.random.default_rng(1)
    for k, (args, params) in enumerate(cases(name)):
        diff = diff_positions(op, args)
        for chosen in [[i] for i in diff] + ([diff] if len(diff) > 1 else []):
            where = f"op {name}, sample {k} ({describe(args, params)}), inputs {chosen}"
            batches = {i: rng.normal(size=(BATCH,) + np.shape(args[i])).astype(
                np.result_type(args[i])) for i in chosen}
            got = _tangent_out(op, args, params, batches, BATCH)
            rows = [_tangent_out(op, args, params, {i: t[b] for i, t in batches.items()}, None)
                    for b in range(BATCH)]
            if got is None:
                assert all(r is None for r in rows), where
                continue
            expected = np.stack([np.zeros(got.shape[1:]) if r is None else r for r in rows])
            assert got.shape == expected.shape, f"{where}: shape {got.shape} vs {expected.shape}"
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12, err_msg=where)
