"""How a dual number formats in an f-string."""

from __future__ import annotations

import wengert as wg


def test_a_dual_number_formats_as_its_primal():
    assert f"{wg.Dual(1.5, 1.0):.2f}" == "1.50" and f"{wg.Dual(1.5, 1.0)}" == "Dual(1.5, 1.0)"
    seen = []
    wg.jvp(lambda x: seen.append(f"{x:.3f}") or x * x, (1.5,), (1.0,))
    assert seen == ["1.500"]
