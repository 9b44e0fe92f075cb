"""Tensors: the PyTorch dialect of reverse mode.

A :class:`Tensor` wraps a NumPy value (an ``ndarray``, a NumPy scalar, a
Python ``float`` for the fast scalar path, or a traced value of an outer level
such as a dual number). Applying a primitive to tensors runs its NumPy forward
and, when some input requires grad (or is watched by an open
:class:`~wengert.GradientTape`), records a :class:`~wengert.core.node.Node`;
that part lives in :mod:`wengert.reverse.recording`.

=================  ==============  ===========  ====================
requires_grad      created by      ``is_leaf``  ``.grad`` populated
=================  ==============  ===========  ====================
False              user            True         no
False              an op           True         no
True               user            True         yes
True               an op           False        only after retain_grad()
=================  ==============  ===========  ====================

``float(t)``, ``int(t)``, ``t.item()`` and ``t.tolist()`` give plain Python
numbers, cut from the graph (as in PyTorch); inside a functional transform
(``wg.grad``, ``wg.jvp``...) they raise instead, since the transform would
lose the derivative.
"""

from __future__ import annotations

import contextlib
import copy
import math
import threading
import warnings
import weakref
from typing import Any

import numpy as np
from wengert.core.bind import (
    dtype_of,
    is_traced,
    kind_of,
    number_kind,
    primal,
    shape_of,
    ufunc_method,
)
from wengert.core.collector import collector_paused
from wengert.core.display import html_of
from wengert.core.errors import LostDerivativeError, NoGradientError
from wengert.core.kept import KEEPER, Keeper
from wengert.core.levels import (
    DUAL_TAG,
    TRACE_LEVEL,
    escaped_error,
    is_open,
    is_transform_level,
    transform_name,
)
from wengert.core.modes import GRAD_ENABLED, RECORDERS
from wengert.core.node import GradFn, Node, Version, new_version
from wengert.core.source import storing_item
from wengert.core.subclasses import masked_caller, masked_message, refuse_subclass
from wengert.core.sweep import observe_sweep, run_hooks
from wengert.core.sweep_fast import backprop
from wengert.forward.dual import Dual
from wengert.interop import dispatch as _dispatch
from wengert.interop.arraylike import ArrayMethods, refuse_dtype_set, refuse_shape_set
from wengert.interop.dispatch import lost_in_conversion, lost_in_store
from wengert.reverse.inplace import InPlaceMethods

__all__ = [
    "Tensor",
    "tensor",
    "stop_gradient",
    "constant",
    "value_of",
    "connected",
    "is_float_value",
    "as_value",
    "lifter",
    "level_over",
    "check_seed",
    "seed_dtype_error",
    "in_dtype_of",
    "tensor_backward",
    "finishing",
]

_ndarray = np.ndarray
_FLOAT64 = np.dtype(np.float64)
_NEW = object.__new__


def value_of(x: Any) -> Any:
    """The value of a tensor (one level down); anything else is returned as is."""
    return x._value if isinstance(x, Tensor) else x


def connected(x: Any) -> bool:
    """Whether ``x`` is a tensor on a graph (it requires grad or was recorded)."""
    return isinstance(x, Tensor) and (x._rg or x._node is not None)


def is_float_value(value: Any) -> bool:
    """Whether a raw value is floating point (real or complex)."""
    if type(value) is float:
        return True
    dt = getattr(value, "dtype", None)
    return dt is not None and dt.kind in "fc"


def level_over(value: Any) -> float:
    """The level of a user's tensor holding ``value``: 0 over a plain value (or a dual
    number the user made); just inside the level of a traced value of a transform
    (a dual number of a running ``wg.jvp``), or of the graph trace running the
    function that makes it."""
    kind = kind_of(value)
    if kind is None:
        return TRACE_LEVEL.get()  # (made inside a traced function: just inside its level)
    level = kind.level(value)
    return level + 0.5 if level else 0


def constant(value: Any, level: float | None = None) -> Tensor:
    """A tensor holding ``value`` that records nothing (no grad, no node).

    ``level``: the level of the transform it belongs to (see
    :mod:`wengert.core.levels`); by default that of a user's tensor.
    """
    t = _NEW(Tensor)
    t._value = value
    t._node = None
    t._rg = False
    t._version = new_version()
    t._extra = None
    t._level = level_over(value) if level is None else level
    return t


def as_value(data: Any, dtype: Any = None) -> Any:
    """``data`` as a tensor's value: a copy, as an array (a float stays a float)."""
    if isinstance(data, Tensor):
        if is_transform_level(data._level) and (data._rg or data._node is not None):
            raise LostDerivativeError(
                "wg.tensor() of a value that wg.grad / wg.vjp differentiates would cut it from "
                "the computation (its gradient would silently be zero): use the value itself "
                "(or np.copy(x), which keeps the gradient), or wg.stop_gradient(x) to cut it "
                "on purpose."
            )
        data = data._value
    refuse_subclass(data, "wg.tensor")
    if dtype is None and is_traced(data):
        kind = kind_of(data)
        if kind.records_calls:
            # a graph tracer: the copy is a step of its graph that does, when the graph
            # is differentiated, what wg.tensor does eagerly (cut, or refuse inside wg.grad)
            return kind.record_call(as_value, (data,), {}, "wg.tensor", False, True)
        return data  # a tensor over a traced value (a tape inside wg.jvp)
    if dtype is None and type(data) is float:
        return data
    if dtype is None and isinstance(data, np.float64) and np.ndim(data) == 0:
        return float(data)
    if is_traced(data):
        raise LostDerivativeError(
            f"wg.tensor(..., dtype=) of a {type(data).__name__} would drop its derivative; "
            "convert with x.astype(dtype) instead."
        )
    arr = np.array(data, dtype=dtype, copy=True)
    if arr.dtype == object:
        raise TypeError(
            f"wengert tensors hold numeric data; got an object array from {type(data).__name__}. "
            "Convert it to numbers first (np.asarray(data, dtype=float)); to build an array "
            "from tensors, use np.stack or np.concatenate."
        )
    if arr.dtype.kind in "US":
        raise TypeError(f"wengert tensors hold numeric data, not {arr.dtype} strings.")
    if arr.dtype.kind == "V":
        raise TypeError(
            f"wengert tensors hold numeric data, not records ({arr.dtype}): take a field "
            "(data['a'], a record array's data.a) or np.lib.recfunctions."
            "structured_to_unstructured(data).")
    return arr


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """Create a leaf tensor holding a copy of ``data``.

    Parameters
    ----------
    data : array_like
        Numbers, nested lists, a NumPy array or another tensor (copied).
    requires_grad : bool
        Record operations on this tensor so ``backward()`` fills ``.grad``.
        Only floating point tensors can require gradients.
    dtype : numpy dtype, optional
        Convert to this dtype.

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    array([2., 4.])
    """
    t = constant(as_value(data, dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def stop_gradient(x: Any) -> Any:
    """Return ``x`` as a constant: no derivative of any order or mode flows through it.

    As JAX's ``lax.stop_gradient``, it cuts every level at once: the graph of a
    tensor (reverse mode) and the tangent of a dual number (forward mode), also
    when they are nested (``wg.hessian``, ``wg.jvp`` of ``wg.grad``). A tensor
    gives a constant tensor sharing the value; any other traced value its plain
    value. (``Tensor.detach()`` cuts only the tensor's own graph, as in PyTorch.)

    Examples
    --------
    >>> import wengert as wg
    >>> x = wg.tensor(3.0, requires_grad=True)
    >>> y = x * wg.stop_gradient(x)
    >>> y.backward()
    >>> float(x.grad)
    3.0
    >>> wg.derivative(lambda x: x * wg.stop_gradient(x))(2.0)
    2.0
    """
    if isinstance(x, Tensor):
        t = constant(_cut(primal(x._value)))
        t._version = x._version
        return t
    return _cut(primal(x)) if is_traced(x) else x


def _cut(v: Any) -> Any:
    """A graph tracer's value records the cut as a step of its graph (replayed on tensors
    or dual numbers, that step runs ``stop_gradient`` on them again); plain values pass."""
    kind = kind_of(v)
    if kind is not None and kind.records_calls:
        return kind.record_call(stop_gradient, (v,), {}, "stop_gradient")
    return v


#: NumPy ufunc -> the tensor kind's function for its op (``np.sin(t)`` without the
#: general dispatch); filled by :mod:`wengert.reverse.recording`, which defines them.
FAST_UFUNCS: dict[Any, Any] = {}


class Tensor(ArrayMethods, InPlaceMethods):
    """An array that records the operations applied to it.

    Create tensors with :func:`wengert.reverse.tensor`; see the module docstring for
    the leaf table. Arithmetic operators, comparisons, indexing and plain
    ``np.*`` functions all work and are differentiable.
    """

    __slots__ = ("_value", "_node", "_rg", "_version", "_extra", "_level", "__weakref__")
    _value: Any
    _node: Node | None
    _rg: bool
    _version: Any
    _extra: dict[str, Any] | None
    #: The level this tensor belongs to (see :mod:`wengert.core.levels`): 0 for the
    #: user's tensors, the transform's order inside ``wg.grad`` and friends.
    _level: float

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        self._value = as_value(data, dtype)
        self._node = None
        self._rg = False
        self._version = Version()
        self._extra = None
        self._level = level_over(self._value)
        if requires_grad:
            self.requires_grad_(True)

    # -- leaf semantics -------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded for ``backward()``."""
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place on a leaf; returns the tensor."""
        if self._node is not None and self._rg:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        kind = number_kind(self._value) if requires_grad else "f"
        if kind != "f" and kind != "c":
            raise RuntimeError(
                "only Tensors of floating point (real or complex) dtype can require gradients "
                f"(this one is {self.dtype}); create it with dtype=float, e.g. "
                "wg.tensor(data, dtype=float, requires_grad=True)."
            )
        if requires_grad and not self._rg:
            tag = DUAL_TAG.get()
            if tag is not None and tag.active:
                # A leaf made inside wg.jvp belongs to a reverse level inside it: it holds
                # a dual of that level (zero tangent), as the reverse transforms' leaves do.
                v = self._value
                if not (type(v) is Dual and v.tag.order >= tag.order):
                    zero = 0.0 if type(v) is float else np.zeros(shape_of(v), np.result_type(v))
                    self._value = Dual(v, zero, tag)
                    self._level = level_over(self._value)
        self._rg = bool(requires_grad)
        if not requires_grad:
            self._node = None
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors the user created and for all that do not require grad."""
        return not self._rg or self._node is None

    @property
    def grad_fn(self) -> GradFn | None:
        """The node that produced this tensor (``None`` for leaves)."""
        return GradFn(self._node) if self._rg and self._node is not None else None

    @property
    def grad(self) -> Any:
        """The accumulated gradient (a NumPy array) of a leaf, or ``None``.

        Reading it on a non-leaf warns: such gradients are not kept unless
        :meth:`retain_grad` was called before ``backward()`` (or the tensor
        was among ``backward(inputs=...)``).
        """
        extra = self._extra
        if extra is not None and "grad" in extra:
            return extra["grad"]
        if self._rg and self._node is not None and not (extra and extra.get("retains")):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during backward(). If you indeed want the "
                ".grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor before calling backward(). If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.",
                UserWarning,
                stacklevel=2,
            )
        return None

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            if self._extra is not None:
                self._extra.pop("grad", None)
            return
        refuse_subclass(value, "tensor.grad = ...")
        value = value._value if isinstance(value, Tensor) and not value._rg else value
        if not (isinstance(value, (Tensor, np.ndarray, np.generic, float, int, complex))
                or is_traced(value)) or isinstance(value, bool):
            raise TypeError(
                f"assigned grad expected to be an array, a number, a tensor or None, but got "
                f"{type(value).__name__}; convert it first: x.grad = np.asarray(value)."
            )
        if shape_of(value) != self.shape:
            raise RuntimeError(
                f"assigned grad has shape {shape_of(value)} but the tensor has shape {self.shape}"
            )
        kind = number_kind(value)
        if kind == "o":  # integers (a gradient of whole numbers) pass; booleans do not
            kind = np.result_type(primal(value)).kind if not is_traced(value) else "o"
        mine = number_kind(self._value)
        if kind not in "fciu" or (kind == "c" and mine != "c"):
            raise RuntimeError(
                f"assigned grad has dtype {dtype_of(value)}, which cannot be the gradient of a "
                f"tensor of dtype {self.dtype}: a gradient is a floating point array of the "
                "tensor's kind (real for a real tensor)"
                + (". Take np.real of it if that is what you mean." if kind == "c" else ".")
            )
        self._extras()["grad"] = _grad_value(self, value, True)  # (the tensor's dtype)

    def _extras(self) -> dict[str, Any]:
        extra = self._extra
        if extra is None:
            extra = self._extra = {}
        return extra

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf tensor in ``.grad`` during ``backward()``."""
        if not self._rg:
            raise RuntimeError(
                "can't retain_grad on Tensor that has requires_grad=False; create it from a "
                "tensor with requires_grad=True." + _constant_note()
            )
        if self._node is None:
            return
        extras = self._extras()
        if extras.get("retains"):
            return
        ref = weakref.ref(self)

        def retain_at(node: Node) -> None:
            # Called again by an in-place update that gives the tensor a new node: as in
            # PyTorch, .grad is then the gradient of the value written last. (The node is
            # known by its id: a reference would be a cycle through its own extras.)
            key = id(node)

            def keep(g: Any) -> None:
                t = ref()
                if t is not None and id(t._node) == key:
                    _store_grad(t, g, isinstance(g, Tensor) and g._node is not None)

            node.extras().setdefault("on_grad", []).append(keep)

        extras["retains"] = retain_at
        retain_at(self._node)

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed.

        The hook may return a replacement gradient of the same shape. Returns
        a handle whose ``remove()`` unregisters it.
        """
        if not self._rg:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient; set "
                "requires_grad=True on it (or on the leaves it is computed from) first."
                + _constant_note()
            )
        if self._node is None:
            hooks = self._extras().setdefault("hooks", [])
        else:
            hooks = self._node.extras().setdefault("hooks", [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def detach(self) -> Tensor:
        """A new tensor sharing this value (and its version counter), cut from the graph."""
        t = constant(self._value)
        t._version = self._version
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place: it becomes a leaf that does not
        require grad (as PyTorch's ``detach_``). A view of another tensor refuses, since its
        writes go through to its base's graph: use :meth:`detach`.

        Examples
        --------
        >>> import wengert as wg
        >>> x = wg.tensor(2.0, requires_grad=True)
        >>> y = (x * x).detach_()
        >>> y.requires_grad, y.is_leaf, y.grad_fn
        (False, True, None)
        """
        extra = self._extra
        if extra is not None and "view_of" in extra:
            raise RuntimeError(
                "Can't detach views in-place: this tensor is a view of another one (a slice, "
                "a reshape...), and writes to it go through to its base's graph. Use "
                "y = y.detach() instead (a new tensor cut from the graph)."
            )
        self._node = None
        self._rg = False
        return self

    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves.

        Parameters
        ----------
        gradient : array_like, optional
            The output cotangent; needed unless this tensor has one element.
        retain_graph : bool, optional
            Keep the saved values so ``backward()`` can run again; defaults to
            ``create_graph``.
        create_graph : bool
            Record the backward pass, so the gradients can be differentiated.
        inputs : tensor or sequence of tensors, optional
            Accumulate only into these tensors' ``.grad`` (leaves, or
            non-leaves, whose ``.grad`` is then filled as with ``retain_grad``).
        """
        tensor_backward([self], [gradient], retain_graph=retain_graph,
                        create_graph=create_graph, inputs=inputs)

    # -- copies and pickles ---------------------------------------------
    def _on_a_graph(self) -> bool:
        """Whether this tensor carries how it was computed (a non-leaf, or a value of a
        transform or a trace), rather than being a user's leaf."""
        return self._node is not None or bool(self._level) or is_traced(self._value)

    def __copy__(self) -> Tensor:
        return self.__deepcopy__({})

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """``copy.copy(t)`` and ``copy.deepcopy(t)``: a user's leaf copies into a new leaf
        (its value, ``requires_grad`` and ``.grad``, as in PyTorch); a tensor on a graph (a
        non-leaf, a value a transform differentiates) into a recorded copy, so its
        derivative flows through the copy (as through a JAX tracer's)."""
        if self._on_a_graph():
            new = self.copy()
        else:
            new = _NEW(type(self))
            new._value = copy.deepcopy(self._value, memo)
            new._node = None
            new._rg = self._rg
            new._version = new_version()
            extra = self._extra
            new._extra = ({"grad": copy.deepcopy(extra["grad"], memo)}
                          if extra and "grad" in extra else None)
            new._level = self._level
            for cls in type(self).__mro__[:-1]:
                if cls is Tensor:
                    break
                for slot in getattr(cls, "__slots__", ()):
                    if hasattr(self, slot):
                        setattr(new, slot, copy.deepcopy(getattr(self, slot), memo))
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        if self._on_a_graph():
            raise LostDerivativeError(
                "cannot pickle a tensor that carries a graph (a non-leaf, or a value a wengert "
                "transform differentiates): a pickle keeps values, not how they were computed, "
                "so its gradient would be lost. Pickle t.detach() for the value (or the leaves "
                "the graph starts from)."
            )
        return super().__reduce_ex__(protocol)

    # -- data access ----------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The value as a NumPy array (shares memory where possible).

        Of a tensor on a graph (it requires grad, or an op made it) the array is a
        read-only view: the tape may hold this very array for a rule, and a write through
        NumPy would change it unseen, so ``backward()`` would give a wrong gradient. Write
        to ``x.detach().numpy()`` (as in PyTorch), or update the tensor itself under
        ``wg.no_grad()``.

        Examples
        --------
        >>> import wengert as wg
        >>> x = wg.tensor([1.0, 2.0], requires_grad=True)
        >>> x.numpy().flags.writeable, x.detach().numpy().flags.writeable
        (False, True)
        """
        if self._level and is_open(self._level):  # (an escaped value is only read)
            _refuse_inside_transform(self, "numpy()")
        v = self._value
        if is_traced(v) and kind_of(v).opaque:
            return v  # a graph tracer's value: the graph computes it (inside wg.compile)
        if is_traced(v):
            raise LostDerivativeError(
                "numpy() of a tensor over a traced value (inside wg.jvp) would drop its "
                "derivative; compute with the tensor instead."
            )
        if not isinstance(v, np.ndarray):
            return np.asarray(v)
        if (self._rg or self._node is not None) and v.flags.writeable:
            v = v.view()
            v.flags.writeable = False
        return v

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number (cut from the graph)."""
        _refuse_inside_transform(self, "item()")
        v = self._value
        if type(v) is float:
            return v
        if np.size(v) != 1:
            raise ValueError(
                f"a Tensor with {np.size(v)} elements cannot be converted to Scalar; "
                "index it first or call .sum()"
            )
        return v.item() if is_traced(v) else np.asarray(v).item()

    def tolist(self) -> Any:
        """The value as nested Python lists (cut from the graph)."""
        _refuse_inside_transform(self, "tolist()")
        return np.asarray(self._value).tolist()

    @property
    def data(self) -> Tensor:
        """A detached tensor sharing this value (as PyTorch's ``.data``).

        Assigning ``t.data = value`` replaces the value without recording
        anything; ``t`` keeps ``requires_grad`` (an optimizer step).
        """
        return self.detach()

    @data.setter
    def data(self, value: Any) -> None:
        new = value._value if isinstance(value, Tensor) else value
        if new is self._value:
            return  # t.data -= x: the detached alias was already updated in place
        self._value = as_value(new)
        self._version.version += 1

    @property
    def shape(self) -> tuple[int, ...]:
        return shape_of(self._value)

    @property
    def dtype(self) -> np.dtype:
        v = self._value
        t = type(v)
        if t is _ndarray:
            return v.dtype
        if t is float:
            return _FLOAT64
        return dtype_of(v)

    shape = shape.setter(refuse_shape_set)  # (x.shape = ... says what to write instead)
    dtype = dtype.setter(refuse_dtype_set)

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __float__(self) -> float:
        if _carries_derivative(self) and storing_item():
            # buf[i] = x with a NumPy array buf: NumPy asks for float(x) and stores a number
            raise lost_in_store("buf[i] = x (NumPy converts x with float())")
        _refuse_inside_transform(self, "float()")
        return float(self.item())

    def __int__(self) -> int:
        _refuse_inside_transform(self, "int()")
        return int(self.item())

    def __complex__(self) -> complex:
        if _carries_derivative(self) and storing_item():
            raise lost_in_store("buf[i] = x (NumPy converts x with complex())")
        _refuse_inside_transform(self, "complex()")
        return complex(self.item())

    def __index__(self) -> int:
        v = self._value
        if np.ndim(v) == 0 and np.asarray(v).dtype.kind in "iu":
            return int(v)
        raise TypeError("only integer scalar tensors can be converted to a scalar index")

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                "The truth value of a tensor with more than one element is ambiguous. "
                "Use .any() or .all()"
            )
        v = _plain(self._value)
        if kind_of(v) is not None:  # a graph tracer beneath converts itself (a guard)
            return bool(v)
        return bool(np.asarray(v).item())

    def __hash__(self) -> int:
        return id(self)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if dtype is not None and np.dtype(dtype).kind in "iub":
            # an integer or boolean cast (np.int64(t), np.asarray(t, dtype=int)): its
            # derivative is zero, as for t.astype(int); NumPy's values, no gradient dropped
            arr = np.asarray(self._value, dtype=dtype)
            return arr.copy() if copy and arr is self._value else arr
        if _carries_derivative(self):
            if storing_item():  # buf[...] = x, NumPy converting x for an array buf
                raise lost_in_store("buf[...] = x (NumPy converts x with np.asarray())")
            if masked_caller():
                raise TypeError(masked_message("a masked array meeting a tensor that requires "
                                               "grad (np.ma converts the tensor to an array)"))
            default = ("To build an array from tensors use np.stack / np.concatenate (or "
                       "wengert.numpy.stack); to store into an existing array, compute the new "
                       "array with np.where or x[i] = v on a tensor instead; use "
                       "tensor.detach().numpy() (or wg.stop_gradient) only if no gradient "
                       "should flow.")
            raise lost_in_conversion("a tensor that requires grad", default) or (
                LostDerivativeError("Can't convert a tensor that requires grad to a NumPy "
                                    f"array: the gradient would be lost. {default}"))
        arr = np.asarray(self._value, dtype=dtype)
        return arr.copy() if copy else arr

    def __repr__(self) -> str:
        v = self._value
        body = repr(v) if is_traced(v) else np.array2string(
            np.asarray(v), separator=", ", prefix="tensor("
        )
        if not is_traced(v):  # as PyTorch: what the numbers alone do not say
            a = np.asarray(v)
            if a.size == 0 and a.ndim != 1:
                body += f", size={a.shape}"
            if a.dtype not in _DEFAULT_DTYPES:
                body += f", dtype={a.dtype}"
        if self._rg and self._node is not None:
            return f"tensor({body}, grad_fn=<{self._node.name}>)"
        if self._rg:
            return f"tensor({body}, requires_grad=True)"
        return f"tensor({body})"

    def _repr_html_(self) -> str | None:
        return html_of(self)

    # -- NumPy dispatch -------------------------------------------------
    __array_ufunc__ = ufunc_method(FAST_UFUNCS, _dispatch.array_ufunc)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _dispatch.array_function(func, args, kwargs)

    # -- comparisons and bitwise operators: no gradient, boolean tensors; set below the
    # class (``_constant_of``) ------------------------------------------------------


def _plain(x: Any) -> Any:
    """The plain value under every traced layer (comparisons), down to a graph tracer."""
    while True:
        if isinstance(x, Tensor):
            x = x._value
            continue
        kind = kind_of(x)
        if kind is None or kind.opaque:  # a graph tracer: compared as a recorded step
            return x
        x = kind.primal(x)


def _constant_of(ufunc: Any, reflected: bool = False) -> Any:
    """The method ``t.__eq__(other)`` (and so on): ``ufunc`` on the plain values, a
    constant tensor; ``reflected``: ``t.__rand__(other)``, ``ufunc(other, t)``."""
    if ufunc.nin == 1:
        def method(self: Tensor) -> Any:
            return constant(ufunc(_plain(self)))
    elif reflected:
        def method(self: Tensor, other: Any) -> Any:  # type: ignore[misc]
            return constant(ufunc(_plain(other), _plain(self)))
    else:
        def method(self: Tensor, other: Any) -> Any:  # type: ignore[misc]
            return constant(ufunc(_plain(self), _plain(other)))
    method.__name__ = method.__qualname__ = ufunc.__name__
    return method


for _name, _ufunc in (("__eq__", np.equal), ("__ne__", np.not_equal), ("__lt__", np.less),
                      ("__le__", np.less_equal), ("__gt__", np.greater),
                      ("__ge__", np.greater_equal), ("__invert__", np.invert),
                      ("and", np.bitwise_and), ("or", np.bitwise_or),
                      ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                      ("rshift", np.right_shift)):
    if _name.startswith("__"):
        setattr(Tensor, _name, _constant_of(_ufunc))
    else:  # a binary operator and its reflected form
        setattr(Tensor, f"__{_name}__", _constant_of(_ufunc))
        setattr(Tensor, f"__r{_name}__", _constant_of(_ufunc, reflected=True))
del _name, _ufunc


def _carries_derivative(t: Tensor) -> bool:
    """Whether ``t`` carries a derivative: it requires grad, was recorded, holds a traced
    value, or an open ``GradientTape`` records the ops on it (a watched tensor)."""
    if t._rg or t._node is not None or is_traced(t._value):
        return True
    recs = RECORDERS.get()
    return bool(recs) and any(r.recording and r.tracks(t) for r in recs)


def _carries_beneath(value: Any) -> bool:
    """Whether a tensor's value is itself a derivative carrier (a dual number, an outer
    level's tensor); a plain value or a graph tracer's (which records the conversion as
    a guard) is not."""
    kind = kind_of(value)
    return kind is not None and not kind.opaque


#: The dtypes a tensor's text leaves unsaid (those NumPy gives Python numbers).
_DEFAULT_DTYPES = frozenset(map(np.dtype, (np.float64, np.int64, np.bool_, np.complex128)))


def _refuse_inside_transform(t: Tensor, what: str) -> None:
    """``float(t)`` and friends drop the derivative: fine for a user's tensor (as in
    PyTorch), an error for a value a functional transform differentiates."""
    if t._level and not is_open(t._level):
        raise escaped_error(t._level)
    if t._level and (is_transform_level(t._level) or _carries_beneath(t._value)):
        name = transform_name(t._level)  # the %%autodiff cell
        raise LostDerivativeError(
            (f"{what} of a value computed in {name} from its inputs would drop its derivative, "
             f"so {name} would show a wrong derivative." if name else
             f"{what} of a traced value inside a wengert transform (wg.grad, wg.vjp, wg.jvp, "
             "wg.hessian, ...) would drop its derivative, so the transform would return a wrong "
             "gradient.")
            + " Keep it an array: use wengert.numpy / np.* functions instead of math.* "
            "(np.exp(x), not math.exp(x)), and np.stack / np.where / x[i] = v on tensors instead "
            "of Python lists or writing into NumPy arrays. Use wg.stop_gradient(x) if no "
            "gradient should flow."
            + (" To print a value, use print(y) or an f-string (f'{y:.3f}'): they keep it "
               "whole ('%.3f' % y calls float())." if what in ("float()", "item()") else "")
        )


class _HookHandle:
    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self) -> _HookHandle:
        """``with x.register_hook(f): ...``: the hook is removed at the end of the block
        (also when an exception leaves it), as PyTorch's handles are."""
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        """``<hook handle: double, registered>`` (the last line of a notebook cell shows
        it: no memory address, so the same cell shows the same text)."""
        name = getattr(self._hook, "__qualname__", None) or type(self._hook).__name__
        state = "registered" if self._hook in self._hooks else "removed"
        return f"<hook handle: {name}, {state}>"


# -- backward() ---------------------------------------------------------------------
def lifter(level: float) -> Any:
    """``lift(raw, edge)`` for a sweep of the graph at ``level`` (``create_graph=True``):
    a saved value as a tensor on the graph at ``edge`` (a node, a leaf or ``None``), so
    the rules run on it record the backward pass."""

    def lift(raw: Any, edge: Any) -> Any:
        if edge is None:
            return raw if isinstance(raw, Tensor) else constant(raw, level)
        if isinstance(edge, Tensor):
            return edge
        t = constant(raw, level)
        t._node = edge
        t._rg = True
        return t

    return lift


def _constant_note() -> str:
    """What an open recorder says about why the values computed now are constants (a
    checkpointed function's forward run), for the messages about them; else nothing."""
    for r in RECORDERS.get():
        note = getattr(r, "constant_note", None)
        if note:
            return " " + note
    return ""


def check_seed(out: Tensor, gradient: Any) -> Any:
    """Validate the output cotangent for ``backward``; ``None`` means 1 for scalars."""
    shape = out.shape
    if gradient is None:
        if math.prod(shape) != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs (this output has shape "
                f"{shape}). Reduce it first (y.sum().backward()), or pass gradient= with the "
                "output's shape (y.backward(gradient=np.ones_like(y))), or use wg.jacobian."
            )
        if out.dtype.kind == "c":
            raise RuntimeError(
                f"grad can be implicitly created only for real scalar outputs (this one is "
                f"{out.dtype}); take np.real or np.abs of it first, or pass gradient= (the "
                "cotangent g: backward() then computes the gradient of Re(g·y))."
            )
        v = out._value
        if type(v) is float:
            return 1.0
        return np.ones(shape, dtype=out.dtype)
    g = gradient
    refuse_subclass(g, "backward(gradient=...)")
    gv = value_of(g)
    if shape_of(gv) != shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output has a shape of {shape_of(gv)} and output has a "
            f"shape of {shape}. Pass a gradient with exactly the output's shape."
        )
    if not isinstance(g, Tensor):
        g = np.asarray(g) if not isinstance(g, float) else g
        kind = np.asarray(g).dtype.kind
        if kind not in "iufc":
            raise seed_dtype_error(np.asarray(g).dtype)
        if kind in "iu":  # (integers are numbers: cast, as PyTorch does)
            g = np.asarray(g, dtype=np.result_type(out.dtype, 0.0))
        if kind == "c" and out.dtype.kind != "c":
            g = np.real(g)  # a real output pairs with g through Re(g)·dy
    elif not is_traced(gv):
        kind = g.dtype.kind
        if kind not in "iufc":
            raise seed_dtype_error(g.dtype)
        if kind in "iu":
            g = constant(np.asarray(gv, dtype=np.result_type(out.dtype, 0.0)))
        if kind == "c" and out.dtype.kind != "c":
            g = np.real(g)  # (recorded when the seed is on a graph: create_graph=True)
    return g


def seed_dtype_error(dtype: Any, what: str = "the gradient seed") -> TypeError:
    """The refusal of a seed or cotangent that is not a number array (a boolean mask)."""
    return TypeError(
        f"{what} must be a number array (floating point, or integers, which are cast), got "
        f"{dtype}: a boolean mask is not a cotangent. Pass it as floats (mask.astype(float)) "
        "if that is what you mean.")


#: One lock for every ``.grad`` update: concurrent backward passes into a shared
#: leaf must not lose an accumulation.
_GRAD_LOCK = threading.Lock()


def _own_array(g: Any, given: set[int]) -> Any:
    """``g`` as an array nobody else holds: the caller's seed, another tensor's
    ``.grad`` or a read-only view are copied."""
    if type(g) is _ndarray and (id(g) in given or not g.flags.writeable or g.base is not None):
        g = g.copy()
    given.add(id(g))
    return g


def _grad_value(t: Tensor, g: Any, keep_graph: bool) -> Any:
    """Cotangent ``g`` in the form of ``t``'s value (shape, dtype, float), or a tensor
    on the graph when the backward pass is recorded."""
    if keep_graph and isinstance(g, Tensor) and (g._rg or g._node is not None):
        return in_dtype_of(t, g)
    g = value_of(g)
    v = t._value
    if is_traced(g) or is_traced(v):
        return g  # forward over reverse: the gradient carries a tangent
    if type(v) is float:
        return float(g)
    g = np.asarray(g)
    if g.shape != np.shape(v):
        g = np.broadcast_to(g, np.shape(v))
    if g.dtype != v.dtype:
        g = g.astype(v.dtype)
    return g


def in_dtype_of(t: Tensor, g: Tensor) -> Tensor:
    """A recorded gradient ``g`` (``create_graph=True``) in the dtype of ``t`` when both
    are real or both complex (a float32 leaf keeps float32 gradients, as without
    ``create_graph``); the cast is recorded, so the gradient still differentiates."""
    mine, its = t.dtype, g.dtype
    if its != mine and its.kind == mine.kind and mine.kind in "fc":
        token = GRAD_ENABLED.set(True)  # (recorded as the sweep was, also under no_grad)
        try:
            return g.astype(mine)
        finally:
            GRAD_ENABLED.reset(token)
    return g


def _store_grad(t: Tensor, g: Any, keep_graph: bool, given: set[int] | None = None) -> None:
    """Add cotangent ``g`` to ``t.grad`` (atomically: other threads may be adding too)."""
    g = _grad_value(t, g, keep_graph)
    g = _own_array(g, given if given is not None else set())
    with _GRAD_LOCK:
        extra = t._extras()
        prev = extra.get("grad")
        if prev is not None:
            total = prev + g
            if type(prev) is _ndarray and isinstance(total, np.generic):
                total = np.asarray(total)  # (NumPy gives a scalar for two 0-d arrays)
            g = total
        extra["grad"] = g


def _no_grad_error(out: Tensor) -> NoGradientError:
    """What ``backward()`` says of an output that does not require grad."""
    if out._node is not None or hasattr(out, "trainable"):  # a tape's value, a Variable
        return NoGradientError(
            "element 0 of tensors does not require grad: it is "
            + ("a value recorded by a wg.GradientTape" if out._node is not None
               else "a wg.Variable")
            + ", and tapes do not make tensors require grad (as in TensorFlow, the "
            "tape keeps the operations, not the tensors). Tapes give gradients with "
            "tape.gradient(target, sources), e.g. tape.gradient(z, [x]) after the "
            "with block. backward() (the PyTorch style) needs the inputs created with "
            "wg.tensor(..., requires_grad=True) instead of watched tensors or Variables."
        )
    return NoGradientError(
        "element 0 of tensors does not require grad and does not have a grad_fn: this "
        "tensor was not computed from any tensor with requires_grad=True (or it was "
        "computed under wg.no_grad()). Create the inputs with "
        "wg.tensor(..., requires_grad=True)."
    )


def tensor_backward(
    outputs: list[Tensor],
    gradients: list[Any],
    *,
    retain_graph: bool | None,
    create_graph: bool,
    inputs: Any = None,
) -> None:
    """``Tensor.backward`` for one or several outputs."""
    if retain_graph is None:
        retain_graph = create_graph
    roots = []
    given: set[int] = set()  # arrays already handed out as seeds or grads (copied if again)
    for out, gradient in zip(outputs, gradients):
        if is_transform_level(out._level) and (name := transform_name(out._level)):
            raise RuntimeError(
                f"backward() was called in {name} on a value computed from its inputs: "
                f"{name} computes their derivatives itself, and the .grad of tensors made "
                "inside would not depend on its inputs. Use the derivatives it gives, or call "
                "backward() where no transform runs."
            )
        if is_transform_level(out._level):
            raise RuntimeError(
                "backward() was called on a value traced by a functional transform (inside "
                "a function given to wg.grad, wg.vjp, wg.hessian...): its gradient belongs to "
                "the transform, and the .grad of tensors made inside would not depend on the "
                "transform's input (as torch.func, wengert refuses). Compute the inner "
                "gradient with wg.grad (or wg.vjp) instead, or call backward() outside."
            )
        if not out._rg:
            raise _no_grad_error(out)
        seed = check_seed(out, gradient)
        if not create_graph:
            seed = value_of(seed)
        given.add(id(seed))
        roots.append((out._node if out._node is not None else out, seed))
    level = outputs[0]._level
    only = None
    wanted = []
    if inputs is not None:
        items = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if not items:
            raise RuntimeError(
                "backward(inputs=...): `inputs` argument to `backward()` cannot be empty: "
                "no .grad would be filled. Name the tensors whose .grad you want, or leave "
                "inputs out to fill every leaf's."
            )
        for t in items:
            if not isinstance(t, Tensor) or not t._rg:
                raise RuntimeError(
                    "backward(inputs=...): every input must be a tensor that requires grad; "
                    f"got {t!r:.60}."
                )
        only = {id(t) for t in items}
        wanted = [t for t in items if t._node is not None]
    keeper = KEEPER.get() or keeper_of(roots)
    record = None
    if keeper is not None:  # the view-keeping mode: the sweep is kept for the views
        record = keeper.record(retain_graph=retain_graph, create_graph=create_graph,
                               plain=value_of, restricted=inputs is not None)
    with finishing(record):
        with contextlib.ExitStack() as kept:
            if record is not None:  # (no cyclic collection meanwhile: records are acyclic)
                kept.enter_context(observe_sweep(record))
                kept.enter_context(collector_paused())
            node_cts, reached = backprop(
                roots,
                wanted=[t._node for t in wanted],
                need_leaves=only is None or len(wanted) < len(only),
                retain_graph=retain_graph,
                grad_mode=create_graph,
                lift=lifter(level) if create_graph else None,
            )
        for leaf, g in reached:
            if only is not None and id(leaf) not in only:
                if record is not None:
                    record.not_stored(leaf)
                continue
            extra = leaf._extra
            if extra is not None and extra.get("hooks"):
                before = g
                g = run_hooks(extra["hooks"], g, "a leaf tensor")
                if record is not None:
                    record.leaf_hooked(leaf, before, g, extra["hooks"])
            if leaf._rg:
                _store_grad(leaf, g, create_graph, given)
            elif record is not None:
                record.not_stored(leaf)
        for t in wanted:
            g = node_cts.get(id(t._node))
            if g is not None:
                _store_grad(t, g, create_graph, given)


@contextlib.contextmanager
def finishing(record: Any) -> Any:
    """Finish a view-keeping mode's record of a backward pass (``Keeper.record``; ``None``:
    nothing to do) when the block ends, with the error if it raises."""
    try:
        yield
    except BaseException as e:
        if record is not None:
            record.finish(e)
        raise
    if record is not None:
        record.finish()


def keeper_of(roots: list[tuple[Any, Any]]) -> Keeper | None:
    """The view-keeping mode a root was recorded in (``wg.keep_values()``), when the
    backward pass runs outside it."""
    for edge, _ in roots:
        if type(edge) is Node and edge.extra is not None:
            keeper = edge.extra.get("keeper")
            if keeper is not None:
                return keeper
    return None
