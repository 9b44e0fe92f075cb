"""The tape's public read API and the sweep observers: what the explorer is built on."""

from __future__ import annotations

import pytest

import numpy as np
import wengert as wg
from wengert.core.equations import read_tape


def seed_example():
    """L = (x·w + b − y)², the explorer sketch's example."""
    x, w = wg.tensor(1.5, requires_grad=True), wg.tensor(0.8, requires_grad=True)
    b, y = wg.tensor(0.2, requires_grad=True), wg.tensor(0.1)
    with wg.source_lines():
        t1 = x * w
        t2 = t1 + b
        t3 = t2 - y
        loss = t3 ** 2
    return x, w, b, y, loss


def test_equations_in_execution_order_with_inputs_shapes_and_lines():
    x, w, b, y, loss = seed_example()
    tape = wg.tape_of(loss)
    assert [eq.op.name for eq in tape] == ["multiply", "add", "subtract", "power"]
    assert [eq.index for eq in tape] == [0, 1, 2, 3]
    assert tape.leaves == [x, w, b] and tape.outputs == [3]
    assert [i.name for i in tape[0].inputs] == ["x0", "x1"]
    assert [i.name for i in tape[1].inputs] == ["t0", "x2"]
    sub = tape[2].inputs
    assert sub[0].name == "t1" and sub[1].source == "constant" and sub[1].value == 0.1
    assert tape[3].inputs[1].value == 2  # the exponent, a constant
    assert all(eq.shape == () and eq.dtype == np.float64 for eq in tape)
    assert [eq.source.text for eq in tape] == ["t1 = x * w", "t2 = t1 + b", "t3 = t2 - y",
                                              "loss = t3 ** 2"]
    assert tape[3].op.symbol == "**" and "d(x^y)" in tape[3].op.formula
    assert str(tape).splitlines()[0] == "t0: f64[] = multiply(x0, x1)"


def test_lines_are_recorded_only_when_asked():
    x = wg.tensor(2.0, requires_grad=True)
    assert wg.tape_of(x * x)[0].source is None
    with wg.detect_anomaly():  # anomaly mode keeps the stack: the line comes from it
        y = x * x
    assert wg.tape_of(y)[0].source.text == "y = x * x"


def test_a_tape_of_many_tensors_and_a_freed_tape():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    a = np.sin(x)
    b = a * 2.0
    c = a + 1.0
    tape = wg.tape_of(b, c)
    assert [eq.op.name for eq in tape] == ["sin", "multiply", "add"]
    assert sorted(tape.outputs) == [1, 2]
    b.sum().backward()  # frees the nodes it swept (not retained)
    assert wg.tape_of(b)[0].shape is None
    assert wg.tape_of(x).leaves == [x] and len(wg.tape_of(x)) == 0


def test_gradient_tape_lists_what_it_recorded():
    x = wg.tensor(3.0)
    u = x * 5.0  # before the tape opened: not recorded, a constant to it
    with wg.GradientTape() as tape:
        tape.watch(x)
        _ = x * x + u
    eqs = tape.recorded
    assert [eq.op.name for eq in eqs] == ["multiply", "add"]
    assert eqs[1].inputs[1].source == "constant"


def test_a_deep_tape_is_read_without_recursion():
    x = wg.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 1.0
    tape = wg.tape_of(y)
    assert len(tape) == 20_000 and tape[-1].inputs[0].name == "t19998"


class Log(wg.SweepObserver):
    def __init__(self):
        self.steps = []
        self.leaves = None
        self.roots = None

    def begin(self, roots):
        self.roots = roots

    def step(self, node, g, sent):
        self.steps.append((node.op.name, float(np.asarray(g)),
                           [(i, float(np.asarray(ct))) for i, _, ct in sent]))

    def end(self, leaves):
        self.leaves = [(leaf, float(np.asarray(g))) for leaf, g in leaves]


def test_the_observer_sees_every_step_of_the_adjoint_sweep():
    x, w, b, y, loss = seed_example()
    log = Log()
    with wg.observe_sweep(log):
        loss.backward()
    r = 1.5 * 0.8 + 0.2 - 0.1  # t3
    assert [s[0] for s in log.steps] == ["power", "subtract", "add", "multiply"]
    power, sub, add, mul = log.steps
    assert power[1] == 1.0 and power[2] == [(0, pytest.approx(2 * r))]  # no gradient to 2
    assert sub[2] == [(0, pytest.approx(2 * r))]  # y is a constant: nothing sent to it
    assert mul[2] == [(0, pytest.approx(2 * r * 0.8)), (1, pytest.approx(2 * r * 1.5))]
    assert [leaf for leaf, _ in log.leaves] == [x, w, b] or {id(v) for v, _ in log.leaves} == {
        id(x), id(w), id(b)}
    assert dict((id(v), g) for v, g in log.leaves)[id(b)] == pytest.approx(2 * r)


def test_fan_out_contributions_are_reported_separately():
    x = wg.tensor(3.0, requires_grad=True)
    y = x * x  # x used twice: two contributions that add up
    log = Log()
    with wg.observe_sweep(log):
        y.backward()
    assert log.steps == [("multiply", 1.0, [(0, 3.0), (1, 3.0)])]
    assert log.leaves == [(x, 6.0)]


def test_observers_see_transform_sweeps_and_stop_after_the_block():
    log = Log()
    with wg.observe_sweep(log):
        wg.grad(lambda v: np.sin(v) * 2.0)(0.5)
    assert [s[0] for s in log.steps] == ["multiply", "sin"]
    n = len(log.steps)
    wg.grad(lambda v: v * v)(1.0)
    assert len(log.steps) == n


def test_read_tape_of_nodes_is_the_public_core_function():
    x = wg.tensor(1.0, requires_grad=True)
    y = x * 2.0
    tape = read_tape([y.grad_fn.node])
    assert len(tape) == 1 and tape[0].node is y.grad_fn.node


def test_equation_values_are_kept_inside_keep_values_and_absent_otherwise():
    x = wg.tensor(np.linspace(0.0, 1.0, 10_000), requires_grad=True)  # large: 80 kB
    big = np.ones(10_000)
    with wg.keep_values():
        kept = (np.sin(x) + big).sum()
    plain = (np.sin(x) + big).sum()
    values = [eq.value for eq in wg.tape_of(kept)]
    np.testing.assert_array_equal(values[0], np.sin(x.numpy()))
    np.testing.assert_array_equal(values[1], np.sin(x.numpy()) + 1.0)
    # Without it a large value no rule reads is not kept, and says so (None, not NaNs).
    eqs = wg.tape_of(plain)
    assert eqs[0].value is None and eqs[1].value is None
    assert eqs[1].inputs[1].source == "constant" and eqs[1].inputs[1].value is None
    assert eqs[0].shape == (10_000,)  # the shape is still known
    kept.backward()
    plain.backward()
    assert all(eq.value is not None for eq in wg.tape_of(kept))  # survive the sweep
    assert all(eq.value is None for eq in wg.tape_of(plain))


def test_small_values_are_readable_without_keep_values_until_backward():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    assert [np.asarray(eq.value).tolist() for eq in wg.tape_of(y)] == [[1.0, 4.0], 5.0]
    y.backward()
    assert [eq.value for eq in wg.tape_of(y)] == [None, None]


def test_a_tape_says_whether_it_holds_everything_its_outputs_depend_on():
    v = wg.tensor(2.0, requires_grad=True)
    c = v * 3.0  # recorded outside the gradient tape
    with wg.GradientTape() as tape:
        tape.watch(v)
        y = c * v
    assert wg.tape_of(y).whole and len(wg.tape_of(y)) == 2
    assert not tape.recorded.whole and len(tape.recorded) == 1


@pytest.mark.parametrize("value", [0.5, np.array([0.5, 2.0])], ids=["float", "array"])
def test_lines_and_values_are_recorded_on_every_path_of_an_op(value):
    """Unary and binary ops on floats and arrays (each with a path of its own) record
    the line and the value the same way, and the gradient is the plain one."""
    x = wg.tensor(value, requires_grad=True)
    with wg.source_lines(), wg.keep_values():
        a = np.sin(x)
        b = a * 3.0
        c = 2.0 - b
        d = np.sum(c * x)
    tape = wg.tape_of(d)
    assert [eq.op.name for eq in tape] == ["sin", "multiply", "subtract", "multiply", "sum"]
    assert [eq.source.text for eq in tape] == ["a = np.sin(x)", "b = a * 3.0",
                                              "c = 2.0 - b", "d = np.sum(c * x)",
                                              "d = np.sum(c * x)"]
    assert all(eq.value is not None for eq in tape)
    np.testing.assert_allclose(tape[2].value, 2.0 - 3.0 * np.sin(value))
    d.backward()
    expected = (2.0 - 3.0 * np.sin(value)) - 3.0 * np.cos(value) * value
    np.testing.assert_allclose(x.grad, expected)


def test_a_tape_reads_as_the_same_ir_a_graph_is_made_of():
    from wengert.core import ir
    from wengert.graph import ir as graph_ir
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    tape = wg.tape_of((np.sin(x) * 2.0).sum())
    assert graph_ir.Equation is ir.Equation and graph_ir.Var is ir.Var
    assert all(type(eq) is ir.Equation for eq in tape.equations)
    assert [v.name for v in tape.inputs] == ["x0"] and tape.inputs[0].leaf is x
    assert tape[1].ins[0] is tape[0].out and type(tape[1].ins[1]) is ir.Literal
    assert [v.name for v in tape.output_vars] == ["t2"]
    assert str(tape[1]) == "t1: f64[2] = multiply(t0, 2.0)"


@pytest.mark.parametrize("fn, name, parts", [
    (lambda a: np.linalg.eigh(a), "eigh", ["eigh_values", "eigh_vectors"]),
    (lambda a: np.linalg.eig(a), "eig", ["eig_values", "eig_vectors"]),
    (lambda a: np.linalg.svd(a), "svd", ["svd_u", "svd_values", "svd_vt"]),
    (lambda a: np.linalg.qr(a), "qr", ["qr_q", "qr_r"]),
])
def test_the_parts_of_one_decomposition_read_as_one_equation_with_several_outputs(
        fn, name, parts):
    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    outs = fn(a)
    y = sum(np.sum(o) for o in outs)
    tape = wg.tape_of(y)
    eq = next(eq for eq in tape if len(eq.outs) > 1)
    assert [n.op.name for n in eq.nodes] == parts == [op.name for op in eq.ops]
    assert eq.primitive == name and eq.op.name == parts[0] and len(eq.outs) == len(parts)
    assert str(eq).split(" = ")[1].startswith(name + "(")
    assert str(eq).split(" = ")[0] == ", ".join(f"{v.name}: {v.aval}" for v in eq.outs)
    assert all(v.index == eq.index and v.source == "equation" for v in eq.outs)
    # one equation per call
    assert len(tape) == len({id(n) for e in tape for n in e.nodes}) - len(parts) + 1
    for node, var in zip(eq.nodes, eq.outs):
        assert tape.equation_of(node) is eq
        np.testing.assert_array_equal(var.value, node.out)
    users = [e for e in tape if any(v in eq.outs for v in e.ins)]
    assert len(users) == len(parts)
    assert [e.index for e in tape] == list(range(len(tape)))
    names = [v.name for e in tape for v in e.outs]
    assert names == [f"t{k}" for k in range(len(names))]  # numbered as a jaxpr's


def test_qr_complete_of_a_tall_matrix_reads_its_completion_as_a_third_output():
    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0], [0.5, 1.0]]), requires_grad=True)
    q, r = np.linalg.qr(a, mode="complete")
    tape = wg.tape_of(np.sum(q) + np.sum(r))
    eq = next(eq for eq in tape if len(eq.outs) > 1)
    assert [op.name for op in eq.ops] == ["qr_q", "qr_r", "qr_completion"]
    assert [v.aval for v in eq.outs] == ["f64[3,2]", "f64[2,2]", "f64[3,1]"]


def test_slogdet_and_lstsq_read_as_equations_of_one_output():
    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    sign, logdet = np.linalg.slogdet(a)  # the sign is a constant: no equation of its own
    tape = wg.tape_of(logdet * sign)
    assert [eq.primitive for eq in tape] == ["slogdet", "multiply"]
    assert all(len(eq.outs) == 1 for eq in tape)
    x, _, _, s = np.linalg.lstsq(a, wg.tensor(np.ones(2)))
    tape = wg.tape_of(np.sum(x) + np.sum(s))
    assert all(len(eq.outs) == 1 for eq in tape) and "svd_values" in str(tape)


def test_a_decomposition_read_from_an_unused_part_lists_what_the_tape_holds():
    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    w, v = np.linalg.eigh(a)
    tape = wg.tape_of(np.sum(v))  # what the output depends on: the vectors alone
    assert [eq.primitive for eq in tape][2] == "eigh_vectors"
    with wg.GradientTape() as gt:
        gt.watch(a)
        w, v = np.linalg.eigh(a)
        np.sum(w)
    eq = next(eq for eq in gt.recorded if eq.primitive == "eigh")  # all it recorded
    assert [v.aval for v in eq.outs] == ["f64[2]", "f64[2,2]"]


def test_one_decomposition_used_twice_on_different_inputs_is_two_equations():
    a = wg.tensor(np.eye(2) * 2.0, requires_grad=True)
    b = a * 3.0
    w1, v1 = np.linalg.eigh(a)
    w2, _ = np.linalg.eigh(b)
    y = np.sum(w1) + np.sum(v1) + np.sum(w2)
    tape = wg.tape_of(y)
    assert sorted(len(eq.outs) for eq in tape if eq.op.name.startswith("eigh")) == [1, 2]


def test_two_calls_of_one_decomposition_on_one_input_are_two_equations():
    a = wg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    w1, v1 = np.linalg.eigh(a)
    w2, v2 = np.linalg.eigh(a)
    tape = wg.tape_of(np.sum(w1) + np.sum(v1) + np.sum(w2) + np.sum(v2))
    assert [len(eq.outs) for eq in tape if eq.primitive == "eigh"] == [2, 2]


def test_a_tape_read_after_backward_shows_what_it_kept_and_says_what_it_lost():
    with wg.keep_values():
        x = wg.tensor([1.0, 2.0], requires_grad=True)
        y = (np.sin(x) * 3.0).sum()
    y.backward()
    text = str(wg.tape_of(y))
    assert text.splitlines() == [
        "t0: f64[2] = sin(x0)", "t1: f64[2] = multiply(t0, 3.0)",
        "t2: f64[] = sum(t1, axis=None, keepdims=False)"], text
    assert wg.tape_of(y)[1].shape == (2,) and wg.tape_of(y)[1].dtype == np.float64
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = (np.sin(x) * 3.0).sum()
    y.backward()  # outside the view-keeping mode: the values are gone
    lines = str(wg.tape_of(y)).splitlines()
    assert "multiply(t0, None)" not in lines[1]  # a freed constant is not the value None
    assert lines[1].startswith("t1: ?[?] = multiply(t0, const)")
    assert all(line.endswith("# freed by backward()") for line in lines)
