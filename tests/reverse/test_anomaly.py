"""wg.detect_anomaly: the first NaN/Inf names the op and the line of user code that made it."""

import inspect
import threading

import pytest

import numpy as np
import wengert as wg
from wengert.core.errors import AnomalyError
from wengert.reverse.anomaly import creation_stack

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's nan warnings


def line_of(marker, fn):
    """The line number of the source line of ``fn`` that contains ``marker``."""
    lines, start = inspect.getsourcelines(fn)
    hits = (i for i, text in enumerate(lines) if marker in text and "line_of" not in text)
    return start + next(hits)


def where(fn, marker, code):
    return f'  File "{__file__}", line {line_of(marker, fn)}, in {fn.__name__}\n    {code}'


def test_backward_nan_names_the_op_and_the_line():
    x = wg.tensor([0.0, 4.0], requires_grad=True)
    with wg.detect_anomaly():
        y = np.sqrt(x)  # <- sqrt
        loss = (y * 0.0).sum()
        with pytest.raises(RuntimeError) as info:
            loss.backward()
    assert str(info.value) == (
        "Function 'SqrtBackward' returned nan values in its 0th output. The operation was "
        "created at:\n" + where(test_backward_nan_names_the_op_and_the_line, "<- sqrt",
                                "y = np.sqrt(x)  # <- sqrt")
    )
    note = info.value.__notes__[0]
    assert note.startswith("Traceback of the forward call that created the operation")
    assert "y = np.sqrt(x)" in note


def test_backward_inf_and_the_input_index():
    x = wg.tensor([0.0, 1.0], requires_grad=True)
    with wg.detect_anomaly(), pytest.raises(
        RuntimeError, match=r"^Function 'LogBackward' returned inf values in its 0th output\. "
                            r"The operation was created at:\n  File \".*test_anomaly.py\", line "
                            rf"{line_of('<- log', test_backward_inf_and_the_input_index)}, in "
                            r"test_backward_inf_and_the_input_index\n    y = np\.log\(x\)"
    ):
        y = np.log(x).sum()  # <- log
        y.backward()
    b = wg.tensor(0.0, requires_grad=True)
    with wg.detect_anomaly(), pytest.raises(
        RuntimeError, match=r"^Function 'DivideBackward' returned inf values in its 1th output\."
    ):
        (1.0 / b).backward()  # d/db 1/b = -1/b**2; the constant 1.0 is input 0


def test_check_forward_raises_at_once():
    x = wg.tensor([-1.0, 2.0], requires_grad=True)
    with wg.detect_anomaly(check_forward=True):
        ok = np.sqrt(x + 1.0)
        with pytest.raises(RuntimeError) as info:
            np.log(x)  # <- forward
    assert str(info.value) == (
        "Function 'log' returned nan values in its output during the forward pass. The "
        "operation was called at:\n"
        + where(test_check_forward_raises_at_once, "<- forward", "np.log(x)  # <- forward")
    )
    assert ok.requires_grad
    with wg.detect_anomaly(check_forward=True), pytest.raises(
        RuntimeError, match="^Function 'divide' returned inf values in its output during the "
                            "forward pass"
    ):
        1.0 / x[0:1] / 0.0
    with wg.detect_anomaly():  # forward checks are off by default
        y = np.log(x)
    assert np.isnan(y.detach().numpy()[0])


def test_off_by_default_records_nothing_and_raises_nothing():
    x = wg.tensor([0.0, 4.0], requires_grad=True)
    y = np.sqrt(x)
    (y * 0.0).sum().backward()
    assert np.isnan(x.grad[0])
    assert y.grad_fn.node.extra is None
    assert creation_stack(y) is None
    assert not wg.is_anomaly_enabled()


def test_stack_is_recorded_only_inside_the_context():
    x = wg.tensor(2.0, requires_grad=True)
    with wg.detect_anomaly():
        assert wg.is_anomaly_enabled()
        y = x * x  # <- recorded
        z = np.exp(y)
    outside = np.sin(z)
    stack = creation_stack(y)
    assert stack[-1].line == "y = x * x  # <- recorded"
    here = test_stack_is_recorded_only_inside_the_context
    assert stack[-1].lineno == line_of("<- recorded", here)
    assert creation_stack(z.grad_fn)[-1].line == "z = np.exp(y)"
    assert creation_stack(outside) is None


def test_node_recorded_outside_the_context():
    x = wg.tensor([0.0], requires_grad=True)
    y = np.sqrt(x).sum() * 0.0
    with wg.detect_anomaly(), pytest.raises(
        RuntimeError, match=r"^Function 'SqrtBackward' returned nan values in its 0th output\. "
                            r"The operation was recorded outside wg\.detect_anomaly\(\), so the "
                            r"line that created it is unknown; run the forward pass inside the "
                            r"context as well\.$"
    ):
        y.backward()


def test_functional_transforms_and_decorator():
    @wg.detect_anomaly()
    def loss_grad(x):
        return wg.grad(lambda x: (np.sqrt(x) * 0.0).sum())(x)  # <- lambda

    with pytest.raises(RuntimeError, match=r"^Function 'SqrtBackward' returned nan values in its "
                                           r"0th output\. The operation was created at:\n  File "
                                           r"\".*\", line \d+, in <lambda>\n    return wg\.grad"):
        loss_grad(np.array([0.0, 1.0]))
    # finite gradients: transforms behave as without the mode (plain arrays out)
    with wg.detect_anomaly():
        g = wg.grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
        v = wg.Variable(3.0)
        with wg.GradientTape() as tape:
            y = v * v
        tg = tape.gradient(y, v)
    assert type(g) is np.ndarray
    np.testing.assert_array_equal(g, [2.0, 4.0])
    assert tg.item() == 6.0 and tg.grad_fn is None


def test_custom_rules_and_checkpoint_are_checked():
    @wg.custom_vjp
    def bad_identity(x):
        return x

    bad_identity.defvjp(lambda x: (x, None), lambda r, g: (g * np.nan,))
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    with wg.detect_anomaly(), pytest.raises(
        RuntimeError, match=r"^Function 'BadIdentityBackward' returned nan values in its 0th "
                            r"output\. The operation was created at:\n.*\n    y = "
                            r"bad_identity\(x\)\.sum\(\)"
    ):
        y = bad_identity(x).sum()
        y.backward()

    def inner(x):
        return np.sqrt(x) * 0.0  # <- inside the checkpoint

    with wg.detect_anomaly(), pytest.raises(
        RuntimeError, match=r"^Function 'SqrtBackward' returned nan values in its 0th output\. "
                            r"The operation was created at:\n.*, in inner\n    return np\.sqrt"
    ):
        wg.checkpoint(inner)(wg.tensor([0.0], requires_grad=True)).sum().backward()


def test_mode_is_per_thread_and_nests():
    seen = []
    with wg.detect_anomaly():
        t = threading.Thread(target=lambda: seen.append(wg.is_anomaly_enabled()))
        t.start()
        t.join()
        with wg.detect_anomaly(check_forward=True):
            assert wg.is_anomaly_enabled()
        assert wg.is_anomaly_enabled()
    assert seen == [False]
    assert not wg.is_anomaly_enabled()


def test_gradients_unchanged_in_anomaly_mode():
    x0 = np.array([0.3, 1.2, -0.7])

    def f(x):
        h = np.tanh(x) * x
        h = h[1:] * 2.0
        return np.sum(np.exp(h)) + np.max(x)

    expected = wg.grad(f)(x0)
    with wg.detect_anomaly(check_forward=True):
        np.testing.assert_array_equal(wg.grad(f)(x0), expected)
        x = wg.tensor(x0, requires_grad=True)
        y = x * 1.0
        y[0] = -5.0  # in-place writes take the recording path too
        f(y).backward()
    np.testing.assert_allclose(x.grad[1:], expected[1:])
    assert x.grad[0] == 0.0


def run_as_notebook_cell(source, filename="/tmp/ipykernel_31157/1256817430.py"):
    """Run ``source`` as the kernel runs a cell: compiled under a temporary file name whose
    lines are in ``linecache``."""
    import linecache
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        namespace = {"np": np, "wg": wg}
        exec(compile(source, filename, "exec"), namespace)
    finally:
        linecache.cache.pop(filename, None)


def test_frames_of_a_notebook_cell_are_named_cell_not_by_the_kernels_temporary_file():
    source = (
        "def root_sum(x):\n"
        "    y = np.sqrt(x)\n"
        "    return (y * 0.0).sum()\n"
        "x = wg.tensor([0.0, 4.0], requires_grad=True)\n"
        "with wg.detect_anomaly():\n"
        "    loss = root_sum(x)\n"
        "    loss.backward()\n"
    )
    with pytest.raises(RuntimeError) as info:
        run_as_notebook_cell(source)
    text = info.value.args[0]
    assert text.endswith("created at:\n  Cell, line 2, in root_sum\n    y = np.sqrt(x)")
    note = info.value.__notes__[0]
    assert "ipykernel" not in note
    assert "  Cell, line 6\n    loss = root_sum(x)\n  Cell, line 2, in root_sum\n" in note
    assert f'File "{__file__}"' in note  # a frame of a file keeps its file name


def test_check_forward_names_a_notebook_cell_as_cell():
    source = (
        "x = wg.tensor([-1.0, 2.0], requires_grad=True)\n"
        "with wg.detect_anomaly(check_forward=True):\n"
        "    y = np.log(x)\n"
    )
    with pytest.raises(RuntimeError) as info:
        run_as_notebook_cell(source)
    assert info.value.args[0].endswith("called at:\n  Cell, line 3\n    y = np.log(x)")


def test_a_hook_that_returns_nan_is_named_rather_than_the_next_op():
    a = wg.tensor([0.0, 1.0], requires_grad=True)

    def poison(g):
        return g * np.nan

    with wg.detect_anomaly():
        y = a * 2.0
        y.register_hook(poison)
        with pytest.raises(AnomalyError, match=r"hook registered on the output of "
                                               r"'MultiplyBackward' \(register_hook: '.*poison'"
                                               r"\) returned nan values(?s:.*)y = a \* 2"):
            (y * 3.0).sum().backward()
    z = a * 2.0
    z.register_hook(lambda g: g * 1.0)  # a hook keeping a nan gradient is not blamed
    with wg.detect_anomaly(), pytest.raises(AnomalyError, match="'MultiplyBackward' returned nan"):
        (z * np.nan).sum().backward()
