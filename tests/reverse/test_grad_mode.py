"""Grad mode: no_grad / enable_grad / set_grad_enabled as blocks and decorators, per thread, in
generators."""

import asyncio
import sys
import threading
from typing import Any

import pytest

import wengert as wg


def _records(x):
    return (x * 2).requires_grad


def test_no_grad_decorates_with_or_without_parentheses():
    x = wg.tensor(1.0, requires_grad=True)

    @wg.no_grad
    def bare():
        return _records(x)

    @wg.no_grad()
    def called():
        return _records(x)

    @wg.enable_grad
    def enabled():
        return _records(x)

    assert not bare() and not called()
    with wg.no_grad():
        assert enabled()
    assert bare.__name__ == "bare"


def test_a_decorated_generator_runs_each_step_in_its_mode():
    x = wg.tensor(1.0, requires_grad=True)

    @wg.no_grad()
    def steps():
        received = yield _records(x)
        yield received, _records(x)
        return "done"

    it = steps()
    first = next(it)
    between = _records(x)
    second = it.send("sent")
    with pytest.raises(StopIteration) as stop:
        next(it)
    assert (first, between, second) == (False, True, ("sent", False))
    assert stop.value.value == "done"

    @wg.enable_grad()
    def inner():
        yield _records(x)

    with wg.no_grad():
        assert list(inner()) == [True]


def test_a_decorated_generator_takes_throw_and_close():
    x = wg.tensor(1.0, requires_grad=True)
    seen = []

    @wg.no_grad()
    def steps():
        try:
            yield 1
        except ValueError:
            seen.append(("caught", _records(x)))
            yield 2
        finally:
            seen.append(("closed", _records(x)))

    it = steps()
    assert next(it) == 1
    assert it.throw(ValueError("in")) == 2
    it.close()
    assert seen == [("caught", False), ("closed", False)]
    assert _records(x)


def test_a_decorated_coroutine_runs_in_its_mode():
    x = wg.tensor(1.0, requires_grad=True)

    @wg.no_grad()
    async def work():
        await asyncio.sleep(0)
        return _records(x)

    seen = []  # (a thread of its own: the test may run inside another event loop)
    thread = threading.Thread(target=lambda: seen.append(asyncio.run(work())))
    thread.start()
    thread.join()
    assert seen == [False]
    assert _records(x)


def _modes_of_two_threads(off: Any) -> dict[str, bool]:
    """Whether ``x * x`` records in a thread inside ``off()`` (a block that turns grad
    off) and, meanwhile, in another thread outside it."""
    x = wg.tensor(1.0, requires_grad=True)
    inside, outside = threading.Event(), threading.Event()
    seen = {}

    def quiet():
        with off():
            inside.set()
            outside.wait(5)
            seen["quiet"] = _records(x)

    def loud():
        inside.wait(5)
        seen["loud"] = _records(x)
        outside.set()

    threads = [threading.Thread(target=quiet), threading.Thread(target=loud)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return seen


def test_each_thread_has_its_own_grad_mode():
    assert _modes_of_two_threads(wg.no_grad) == {"quiet": False, "loud": True}


def test_a_grad_mode_given_something_else_than_a_function_is_refused():
    with pytest.raises(TypeError, match=r"wg\.no_grad\(\) takes no argument"):
        wg.no_grad(True)


# -- set_grad_enabled: PyTorch's torch.set_grad_enabled (block, decorator, plain call) ---------
@pytest.fixture
def grad_mode_restored():
    """set_grad_enabled as a plain call changes this thread's mode: put it back."""
    before = wg.is_grad_enabled()
    yield
    wg.set_grad_enabled(before)


def test_set_grad_enabled_as_a_block_nests_and_restores_the_mode_around_it():
    x = wg.tensor(1.0, requires_grad=True)
    for mode in (False, True):
        with wg.set_grad_enabled(mode):
            assert wg.is_grad_enabled() is mode and _records(x) is mode
            with wg.set_grad_enabled(not mode):
                assert _records(x) is not mode
            assert _records(x) is mode
        assert wg.is_grad_enabled() and _records(x)
    with wg.no_grad():
        with wg.set_grad_enabled(True):  # (torch: inner True, outer False after)
            assert _records(x)
        assert not _records(x)
        with wg.enable_grad(), wg.set_grad_enabled(False):
            assert not _records(x)
        assert not wg.is_grad_enabled()
    assert wg.is_grad_enabled()


def test_set_grad_enabled_restores_the_mode_when_an_exception_leaves_the_block():
    x = wg.tensor(1.0, requires_grad=True)
    with pytest.raises(KeyError), wg.set_grad_enabled(False):
        raise KeyError("inside")
    assert wg.is_grad_enabled() and _records(x)

    @wg.set_grad_enabled(False)
    def fails():
        raise ValueError("inside")

    with pytest.raises(ValueError):
        fails()
    assert wg.is_grad_enabled()


def test_set_grad_enabled_decorates_without_changing_the_mode_around_it():
    x = wg.tensor(1.0, requires_grad=True)

    @wg.set_grad_enabled(False)
    def evaluate():
        return wg.is_grad_enabled(), _records(x)

    assert wg.is_grad_enabled()  # (torch: decorating restores the mode it set at once)
    assert evaluate() == (False, False)
    assert evaluate.__name__ == "evaluate"
    with wg.no_grad():
        assert wg.set_grad_enabled(True)(lambda: _records(x))()
        assert not _records(x)

    @wg.set_grad_enabled(False)
    def steps():
        yield _records(x)
        yield _records(x)

    assert list(steps()) == [False, False] and _records(x)
    with pytest.raises(TypeError, match="decorates a function"):
        wg.set_grad_enabled(False)(3)
    assert wg.is_grad_enabled()


def test_set_grad_enabled_called_alone_sets_the_mode_until_set_again(grad_mode_restored):
    x = wg.tensor(1.0, requires_grad=True)
    wg.set_grad_enabled(False)
    assert not wg.is_grad_enabled() and not _records(x)
    with wg.enable_grad():
        assert _records(x)
    assert not _records(x)
    wg.set_grad_enabled(True)
    assert _records(x)
    mode = wg.set_grad_enabled(False)  # made, then used as a block: torch's order
    with mode:
        assert not _records(x)
    assert _records(x)
    assert repr(mode) == "wg.set_grad_enabled(False)"


def test_set_grad_enabled_is_per_thread(grad_mode_restored):
    x = wg.tensor(1.0, requires_grad=True)
    wg.set_grad_enabled(False)
    seen = []

    def other():
        seen.append(wg.is_grad_enabled())
        wg.set_grad_enabled(False)  # its own mode only
        seen.append(wg.is_grad_enabled())

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    # a new thread starts with grad enabled, as in PyTorch (unless Python gives new threads
    # a copy of their creator's context variables: sys.flags.thread_inherit_context)
    assert seen == [not getattr(sys.flags, "thread_inherit_context", 0), False]
    assert not _records(x)
    wg.set_grad_enabled(True)

    assert _modes_of_two_threads(lambda: wg.set_grad_enabled(False)) == {
        "quiet": False, "loud": True}


@pytest.mark.parametrize("mode", [1, 0, None, "yes", 1.0])
def test_set_grad_enabled_takes_only_a_bool_as_pytorch_does(mode):
    with pytest.raises(TypeError, match="must be bool"):
        wg.set_grad_enabled(mode)
    assert wg.is_grad_enabled()


def test_set_grad_enabled_takes_numpys_bools():
    import numpy as np

    x = wg.tensor(1.0, requires_grad=True)
    with wg.set_grad_enabled(np.float64(1.0) > 2.0):
        assert not _records(x)
    assert _records(x)
