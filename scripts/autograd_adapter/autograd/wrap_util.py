"""autograd.wrap_util.unary_to_nary: an operator on one-argument functions made to take
``fun(*args)`` and ``argnum`` (an int, or a tuple differentiating a tuple of arguments)."""
import functools


def unary_to_nary(unary_operator):
    @functools.wraps(unary_operator)
    def nary_operator(fun, argnum=0, *op_args, **op_kwargs):
        assert type(argnum) in (int, tuple, list), argnum

        def nary_f(*args, **kwargs):
            def unary_f(x):
                full = list(args)
                if isinstance(argnum, int):
                    full[argnum] = x
                else:
                    for i, xi in zip(argnum, x):
                        full[i] = xi
                return fun(*full, **kwargs)

            x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
            return unary_operator(unary_f, x, *op_args, **op_kwargs)

        # autograd's names and docstrings of the functions it makes
        name = getattr(fun, "__name__", "[unknown name]")
        nary_f.__name__ = f"{unary_operator.__name__}_of_{name}_wrt_argnum_{argnum}"
        nary_f.__doc__ = (f"    {unary_operator.__name__} of function {name} with respect to "
                          f"argument number {argnum}. Takes the\n    same arguments as "
                          f"{name} but returns the {unary_operator.__name__}.\n    ")
        return nary_f

    return nary_operator
