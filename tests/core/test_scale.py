"""Large tapes, freeing memory, threads."""

import gc
import threading
import weakref

import pytest

import numpy as np
import wengert as wg
import wengert.numpy as wnp


@pytest.mark.slow  # by far the longest unit test (about 1.6 s)
def test_chain_of_a_million_ops_backwards_without_recursion():
    x = wg.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0
    y.backward()
    assert x.grad == 1.0
    del y  # freeing a million-node chain must not overflow the C stack either
    gc.collect()


def test_saved_values_are_released_by_backward():
    x = wg.tensor(np.ones(1000), requires_grad=True)
    y = wnp.exp(x * 2.0)  # exp saves its output; multiply below saves y too
    ref = weakref.ref(y.detach().numpy())
    loss = (y * 3.0).sum()
    del y
    assert ref() is not None, "the graph keeps the saved value alive until backward"
    loss.backward()
    assert ref() is None, "backward() must release saved values"
    np.testing.assert_allclose(x.grad, 6.0 * np.exp(2.0))


def test_large_values_no_rule_reads_are_not_kept():
    # a = W @ x + b, h = tanh(a): neither matmul's output nor add's inputs and output
    # are read by a rule (add needs shapes, tanh its output), so once the user drops
    # them only h and what matmul reads stay alive, as in NumPy code without a tape.
    W = wg.tensor(np.full((300, 300), 0.01), requires_grad=True)
    x = wg.tensor(np.ones((300, 40)), requires_grad=True)
    b = wg.tensor(np.zeros((300, 1)), requires_grad=True)
    wx = W @ x
    a = wx + b
    refs = [weakref.ref(wx.detach().numpy()), weakref.ref(a.detach().numpy())]
    h = wnp.tanh(a)
    keep = weakref.ref(h.detach().numpy())
    del wx, a
    assert [r() for r in refs] == [None, None], "the tape keeps values no rule reads"
    assert keep() is not None, "tanh's rule reads its output: the tape keeps it"
    h.sum().backward()
    t = np.tanh(np.full((300, 40), 3.0))
    np.testing.assert_allclose(b.grad, (1 - t * t).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(W.grad, (1 - t * t) @ np.ones((40, 300)))


def test_graph_is_collected_without_backward():
    # Reference counting alone must free a graph (README: recording with the
    # collector disabled is safe): the tape holds no reference cycles.
    gc.disable()
    try:
        x = wg.tensor(np.ones(100), requires_grad=True)
        y = wnp.tanh(x * 3.0)
        w = wnp.sin(y)[:10]
        z = (y * y).sum() + (w * x[:10]).sum()
        # the values nodes saved
        saved = [weakref.ref(y.detach().numpy()), weakref.ref(w.detach().numpy())]
        del y, w
        assert all(r() is not None for r in saved), "the graph keeps its saved values"
        del z
        assert all(r() is None for r in saved), "no reference cycles: refcounting frees them"
    finally:
        gc.enable()


def test_threads_have_their_own_grad_mode():
    results = {}
    barrier = threading.Barrier(2)

    def no_grad_worker():
        with wg.no_grad():
            barrier.wait()
            x = wg.tensor(1.0, requires_grad=True)
            results["no_grad"] = (x * 2).requires_grad
            barrier.wait()

    def grad_worker():
        barrier.wait()
        x = wg.tensor(np.arange(5.0), requires_grad=True)
        (x * x).sum().backward()
        results["grad"] = x.grad.copy()
        barrier.wait()

    threads = [threading.Thread(target=no_grad_worker), threading.Thread(target=grad_worker)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["no_grad"] is False
    np.testing.assert_array_equal(results["grad"], 2 * np.arange(5.0))


def test_many_threads_computing_gradients():
    out = [None] * 8

    def work(i):
        out[i] = wg.grad(lambda x: (wnp.sin(x) * i).sum())(np.linspace(0, 1, 7))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(8):
        np.testing.assert_allclose(out[i], i * np.cos(np.linspace(0, 1, 7)))
