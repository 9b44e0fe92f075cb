"""The IR's equations with several outputs (core/ir.py): parts, and the rule that groups
a decomposition's parts for a tape read and a trace alike."""

import pytest

import numpy as np
from wengert.core.ir import Equation, PartGroups, Var
from wengert.ops import REGISTRY

VALUES, VECTORS = REGISTRY["eigh_values"], REGISTRY["eigh_vectors"]


def _vars():
    return Var("a", (2, 2), np.float64), Var("w", (2,), np.float64), \
        Var("v", (2, 2), np.float64)


def test_an_equation_with_several_outputs_names_the_op_of_each():
    a, w, v = _vars()
    eq = Equation(VALUES, [a], {"uplo": "L"}, [w, v], parts=[VALUES, VECTORS])
    assert eq.ops == (VALUES, VECTORS) and eq.primitive == "eigh" and eq.out is w
    assert str(eq) == "w: f64[2], v: f64[2,2] = eigh(a, uplo='L')"
    narrowed = eq.replace(op=VECTORS, outs=[v], parts=None)
    assert narrowed.ops == (VECTORS,) and narrowed.primitive == "eigh_vectors"


@pytest.mark.parametrize("parts", [None, [VALUES]])
def test_an_equation_with_several_outputs_and_no_op_for_each_is_refused(parts):
    a, w, v = _vars()
    with pytest.raises(ValueError, match="takes parts="):
        Equation(VALUES, [a], {"uplo": "L"}, [w, v], parts=parts)


def test_part_groups_join_each_part_once_per_input_params_and_extra():
    groups = PartGroups()
    assert groups.join(VALUES, (1,), {"uplo": "L"}, 0) == 0
    assert groups.join(VECTORS, (1,), {"uplo": "U"}, 1) == 1  # other params
    assert groups.join(VECTORS, (2,), {"uplo": "L"}, 2) == 2  # another input
    assert groups.join(VECTORS, (1,), {"uplo": "L"}, 3, extra=True) == 3  # another extra
    assert groups.join(VECTORS, (1,), {"uplo": "L"}, 4) == 0  # joins the first
    assert groups.join(VALUES, (1,), {"uplo": "L"}, 5) == 5  # values twice: a new group
    assert groups.join(VECTORS, (1,), {"uplo": "L"}, 6) == 5
