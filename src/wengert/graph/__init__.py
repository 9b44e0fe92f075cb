"""Static graphs: trace a function into a graph, look at it, optimise it, compile it.

The pieces (imports flow downward): :mod:`.ir` (variables, equations, guards),
:mod:`.tracer` (the third kind of traced value), :mod:`.codegen` (Python source),
:mod:`.program` (:class:`Graph`), :mod:`.trace`, :mod:`.autodiff` (gradient graphs),
:mod:`.compile` (``wg.compile``), :mod:`.session` (define-and-run: placeholders and
``Session``).
"""

from wengert.graph.backends.compile import Compiled, compile
from wengert.graph.backends.export import NotExportable, to_jax, to_jax_source
from wengert.graph.derivatives import grad_graph, jvp_graph
from wengert.graph.ir import Equation, Guard, GuardFailed, Literal, Var
from wengert.graph.program import Graph, GuardError
from wengert.graph.session import (
           GraphDefinition,
           Session,
           SessionCacheInfo,
           default_graph,
           define,
           gradients,
           placeholder,
           reset_default_graph,
)
from wengert.graph.trace import trace
from wengert.graph.tracer import Traced, TraceError

__all__ = ["Graph", "Equation", "Var", "Literal", "Guard", "GuardError", "GuardFailed",
           "TraceError", "Traced", "trace", "grad_graph", "jvp_graph", "compile", "Compiled",
           "GraphDefinition", "Session", "SessionCacheInfo", "default_graph", "define",
           "gradients", "placeholder", "reset_default_graph", "NotExportable", "to_jax",
           "to_jax_source"]
