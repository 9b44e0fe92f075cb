"""Grad mode: no_grad / enable_grad as blocks and decorators, per thread, in generators."""

import asyncio
import threading

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


def test_each_thread_has_its_own_grad_mode():
    x = wg.tensor(1.0, requires_grad=True)
    inside, outside = threading.Event(), threading.Event()
    seen = {}

    def quiet():
        with wg.no_grad():
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
    assert seen == {"quiet": False, "loud": True}


def test_a_grad_mode_given_something_else_than_a_function_is_refused():
    with pytest.raises(TypeError, match=r"wg\.no_grad\(\) takes no argument"):
        wg.no_grad(True)
