"""wg.checkpoint: same gradients, one node, only the inputs kept until backward."""

import gc
import tracemalloc

import pytest

import numpy as np
import wengert as wg
from wengert.core.node import Node


def block(x, w):
    h = np.tanh(x @ w)
    return np.sin(h) * x + h ** 2


def chain(x, n=40):
    for k in range(n):
        x = np.sin(x) * 0.9 + 0.01 * k
    return x


def reachable_nodes(t):
    """The tape nodes reachable from a tensor (what its graph keeps alive)."""
    seen, stack = set(), [t._node]
    while stack:
        node = stack.pop()
        if type(node) is not Node or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(node.parents())
        stack.extend(x for x in node.inputs() if type(x) is Node)
    return len(seen)


def saved_bytes(t):
    """Bytes of the arrays held by the nodes reachable from ``t``."""
    seen, stack, total, arrays = set(), [t._node], 0, set()
    while stack:
        node = stack.pop()
        if type(node) is not Node or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(node.parents())
        for v in (*node.inputs(), node.out):
            if isinstance(v, np.ndarray) and id(v) not in arrays:
                arrays.add(id(v))
                total += v.nbytes
    return total


RNG = np.random.default_rng(0)
X0 = RNG.standard_normal((4, 3))
W0 = RNG.standard_normal((3, 3))


def test_values_and_gradients_equal_the_plain_function():
    f = lambda x, w: block(x, w).sum()
    cf = lambda x, w: wg.checkpoint(block)(x, w).sum()
    np.testing.assert_allclose(cf(X0, W0), f(X0, W0))
    g_plain = wg.grad(f, argnums=(0, 1))(X0, W0)
    g_ckpt = wg.grad(cf, argnums=(0, 1))(X0, W0)
    for a, b in zip(g_plain, g_ckpt):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    # Tensor.backward
    x = wg.tensor(X0, requires_grad=True)
    w = wg.tensor(W0, requires_grad=True)
    y = wg.checkpoint(block)(x, w).sum()
    assert y.grad_fn.next_functions[0].name == "CheckpointBlockBackward"
    y.backward()
    np.testing.assert_allclose(x.grad, g_plain[0], rtol=1e-12)
    np.testing.assert_allclose(w.grad, g_plain[1], rtol=1e-12)
    # vjp with a non-scalar output
    ct = RNG.standard_normal((4, 3))
    _, f_vjp = wg.vjp(block, X0, W0)
    _, c_vjp = wg.vjp(wg.checkpoint(block), X0, W0)
    for a, b in zip(f_vjp(ct), c_vjp(ct)):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_gradcheck():
    assert wg.gradcheck(wg.checkpoint(block), (X0, W0))


def test_one_node_and_fewer_saved_values():
    x = wg.tensor(np.linspace(0.0, 1.0, 1000), requires_grad=True)
    plain = chain(x)
    ckpt = wg.checkpoint(chain)(x)
    assert ckpt.grad_fn.name == "CheckpointChainBackward"
    assert reachable_nodes(plain) == 120  # sin, multiply, add per step: the whole graph
    assert reachable_nodes(ckpt) == 1  # one node, whose parent is the leaf x
    assert saved_bytes(plain) >= 80 * x.numpy().nbytes  # two new arrays per step
    assert saved_bytes(ckpt) == 2 * x.numpy().nbytes  # the input and the output


def test_memory_kept_alive_before_backward_is_much_smaller():
    n, steps = 20_000, 100
    x = wg.tensor(np.linspace(-1.0, 1.0, n), requires_grad=True)

    def chain_n(x):
        for _ in range(steps):
            x = np.sin(x)
        return x

    def kept(fn):
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            y = fn(x).sum()
            gc.collect()
            alive = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        y.backward()
        return alive, x.grad.copy()

    alive_plain, g_plain = kept(chain_n)
    x.grad = None
    alive_ckpt, g_ckpt = kept(wg.checkpoint(chain_n))
    np.testing.assert_array_equal(g_ckpt, g_plain)
    assert alive_plain > steps * n * 8 * 0.9  # one float64 array per step
    assert alive_ckpt < 3 * n * 8  # the output (and bookkeeping), nothing per step
    assert alive_plain > 30 * alive_ckpt


def test_segments_of_a_long_chain():
    x0 = np.linspace(0.1, 0.9, 7)
    segment = wg.checkpoint(lambda x: chain(x, 10))

    def segmented(x):
        for _ in range(4):
            x = segment(x)
        return x.sum()

    np.testing.assert_allclose(
        wg.grad(segmented)(x0), wg.grad(lambda x: chain(chain(chain(chain(x, 10), 10), 10),
                                                         10).sum())(x0), rtol=1e-12
    )


def test_higher_order():
    f = lambda x: np.sin(x) * np.exp(x)
    cf = wg.checkpoint(f)
    for order in (1, 2, 3):
        gp, gc_ = f, cf
        for _ in range(order):
            gp, gc_ = wg.grad(gp), wg.grad(gc_)
        assert gc_(0.7) == pytest.approx(gp(0.7), rel=1e-12)
    # create_graph with Tensor.backward
    x = wg.tensor(0.7, requires_grad=True)
    cf(x).backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.backward()
    assert x.grad == pytest.approx(wg.grad(wg.grad(f))(0.7), rel=1e-12)
    # forward over reverse
    x0 = np.array([0.2, -0.4])
    np.testing.assert_allclose(
        wg.hessian(lambda x: cf(x).sum())(x0), wg.hessian(lambda x: f(x).sum())(x0), rtol=1e-12
    )
    np.testing.assert_allclose(wg.hvp(lambda x: cf(x).sum(), x0, np.array([1.0, 2.0])),
                               wg.hvp(lambda x: f(x).sum(), x0, np.array([1.0, 2.0])), rtol=1e-12)


def test_closed_over_tensors_get_their_gradients():
    w = wg.tensor(W0, requires_grad=True)
    x = wg.tensor(X0, requires_grad=True)
    layer = wg.checkpoint(lambda x: np.tanh(x @ w))
    y = layer(x).sum()
    assert len(y.grad_fn.next_functions[0].next_functions) == 3  # x, w and the saved box
    y.backward()
    w_grad, x_grad = w.grad, x.grad
    w.grad = x.grad = None
    np.tanh(x @ w).sum().backward()
    np.testing.assert_allclose(w_grad, w.grad, rtol=1e-12)
    np.testing.assert_allclose(x_grad, x.grad, rtol=1e-12)
    # functional: the closed-over tensor is wg.grad's own leaf
    g = wg.grad(lambda w: wg.checkpoint(lambda x: np.tanh(x @ w))(X0).sum())(W0)
    np.testing.assert_allclose(g, w.grad, rtol=1e-12)


def test_gradient_tapes():
    v = wg.Variable(W0)
    with wg.GradientTape() as tape:
        y = wg.checkpoint(block)(X0, v).sum()
    g = tape.gradient(y, v)
    np.testing.assert_allclose(g.numpy(), wg.grad(lambda w: block(X0, w).sum())(W0), rtol=1e-12)
    x = wg.tensor(0.3)
    cube = wg.checkpoint(lambda x: x ** 3)
    with wg.GradientTape() as outer:
        outer.watch(x)
        with wg.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        dy = inner.gradient(y, x)
    assert dy.item() == pytest.approx(0.27)
    assert outer.gradient(dy, x).item() == pytest.approx(1.8)


def test_several_outputs_and_pytrees():
    def cell(state, x):
        h, c = state["h"], state["c"]
        c = np.tanh(c + x)
        return {"h": np.sin(h) * c, "c": c}

    state = {"h": np.array([0.1, 0.2]), "c": np.array([0.3, -0.1])}
    xin = np.array([0.5, 0.7])
    loss = lambda fn: (lambda s, x: (fn(s, x)["h"] * 3.0 + fn(s, x)["c"]).sum())
    gp = wg.grad(loss(cell), argnums=(0, 1))(state, xin)
    gc_ = wg.grad(loss(wg.checkpoint(cell)), argnums=(0, 1))(state, xin)
    for key in ("h", "c"):
        np.testing.assert_allclose(gc_[0][key], gp[0][key], rtol=1e-12)
    np.testing.assert_allclose(gc_[1], gp[1], rtol=1e-12)


def test_random_state_is_replayed():
    def noisy(x):
        return x * np.random.uniform(0.5, 1.5, size=np.shape(x))

    x = wg.tensor(np.ones(5), requires_grad=True)
    np.random.seed(3)
    y = wg.checkpoint(noisy)(x)
    mask = y.detach().numpy().copy()
    np.random.uniform(size=100)  # the global state moves on before backward
    after = np.random.get_state()[1].copy()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, mask)  # d(x * m)/dx = m, the same m
    np.testing.assert_array_equal(np.random.get_state()[1], after)  # and the state is restored


def test_a_recomputation_that_gives_other_values_raises():
    # a Generator (or a closure array changed in place, or preserve_rng_state=False) makes
    # the backward pass's run differ from the forward pass's: the pullback would be that
    # of another function
    x0 = np.array([0.5, 1.5])
    rng = np.random.default_rng(3)

    def drawn(x):
        return np.sin(x * rng.normal(size=np.shape(x)))

    with pytest.raises(RuntimeError, match="other values.*Generator"):
        wg.grad(lambda x: np.sum(wg.checkpoint(drawn)(x) ** 2))(x0)
    scale = np.array([2.0, 3.0])

    def scaled(x):
        return np.sin(x * scale)

    t = wg.tensor(x0, requires_grad=True)
    y = np.sum(wg.checkpoint(scaled)(t) ** 2)
    scale[:] = 7.0
    with pytest.raises(RuntimeError, match="other values"):
        y.backward()

    def noisy(x):
        return x * np.random.uniform(0.5, 1.5, size=np.shape(x))

    t = wg.tensor(x0, requires_grad=True)
    y = np.sum(wg.checkpoint(noisy, preserve_rng_state=False)(t))
    with pytest.raises(RuntimeError, match="other values"):
        y.backward()
    # a deterministic function, with NaN in its output too, recomputes to the same values
    t = wg.tensor(np.array([0.5, -1.0]), requires_grad=True)
    with np.errstate(invalid="ignore"):
        y = np.nansum(wg.checkpoint(lambda x: np.sqrt(x) * 2.0)(t))
        y.backward()
    assert t.grad[0] == pytest.approx(1 / np.sqrt(0.5))


def test_plain_values_no_grad_and_duals_just_call():
    calls = []

    def f(x):
        calls.append(type(x).__name__)
        return x * 2.0

    cf = wg.checkpoint(f)
    assert cf(1.5) == 3.0
    with wg.no_grad():
        y = cf(wg.tensor(1.0, requires_grad=True))
    assert y.grad_fn is None
    assert wg.jvp(cf, (1.0,), (1.0,)) == (2.0, 2.0)
    assert wg.derivative(cf)(3.0) == 2.0


def test_backward_twice_needs_retain_graph_and_inplace_is_detected():
    x = wg.tensor([0.5, 1.0], requires_grad=True)
    y = wg.checkpoint(chain)(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    h = x * 1.0
    z = wg.checkpoint(chain)(h).sum()
    h[0] = 3.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_hooks_on_leaves_run_once():
    w = wg.tensor(2.0, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(float(g)))
    y = wg.checkpoint(lambda x: x * w)(3.0) + w
    y.backward()
    assert seen == [4.0]
    assert w.grad == 4.0


@pytest.mark.parametrize("what", ["register_hook", "retain_grad"])
def test_a_hook_inside_a_checkpointed_function_is_refused_with_the_reason(what):
    def f(x):
        y = x * x
        if what == "register_hook":
            y.register_hook(lambda g: g * 10.0)
        else:
            y.retain_grad()
        return y * 3.0

    x = wg.tensor(2.0, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Inside wg.checkpoint\(f\), f's forward run "
                                           r"computes constants.*not supported"):
        wg.checkpoint(f)(x)
    y = f(x)  # without the checkpoint, as before
    y.backward()
    assert x.grad == (120.0 if what == "register_hook" else 12.0)
