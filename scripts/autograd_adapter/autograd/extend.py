"""autograd.extend: autograd's rule definitions, internal to autograd (wengert's are
wg.custom_vjp / wg.custom_jvp, with another interface): their tests skip."""
import pytest


def _skip(name):
    def missing(*args, **kwargs):
        pytest.skip(f"autograd.extend.{name} (autograd's rule definitions) is internal to "
                    "autograd")
    return missing


primitive = _skip("primitive")
defvjp = _skip("defvjp")
defjvp = _skip("defjvp")
defvjp_argnum = _skip("defvjp_argnum")
notrace_primitive = _skip("notrace_primitive")
