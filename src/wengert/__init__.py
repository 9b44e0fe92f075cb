"""wengert: automatic differentiation you can watch, over plain NumPy.

Examples
--------
>>> import numpy as np
>>> import wengert as wg
>>> def loss(w):
...     return np.sum(np.sin(w) * w)
>>> wg.grad(loss)(np.array([1.0, 2.0])).round(4)
array([1.3818, 0.077 ])
>>> w = wg.tensor([1.0, 2.0], requires_grad=True)
>>> loss(w).backward()
>>> w.grad.round(4)
array([1.3818, 0.077 ])
"""

from wengert import graph, numpy
from wengert.core import errors
from wengert.core.errors import WengertError
from wengert.core.modes import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from wengert.core.sweep import SweepObserver, observe_sweep
from wengert.custom.checkpoint import checkpoint
from wengert.custom.rules import custom_jvp, custom_vjp
from wengert.forward.dual import Dual
from wengert.graph import (
    Graph,
    Session,
    compile,
    grad_graph,
    gradients,
    jvp_graph,
    placeholder,
    trace,
)
from wengert.jupyter import (
    draw,
    draw_pass,
    explain,
    explore,
    load_ipython_extension,
    memory_plot,
    unload_ipython_extension,
)
from wengert.reverse import recording
from wengert.reverse.anomaly import detect_anomaly, is_anomaly_enabled
from wengert.reverse.gradient_tape import GradientTape, Variable
from wengert.reverse.tape_reading import keep_budget, keep_values, source_lines, tape_of
from wengert.reverse.tensor import Tensor, stop_gradient, tensor
from wengert.testing import GradcheckError, check_grads, gradcheck
from wengert.transforms.forward import (
    derivative,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linearize,
)
from wengert.transforms.reverse import grad, value_and_grad, vjp

__version__ = "0.1.0"

__all__ = [
    "Tensor", "tensor", "stop_gradient", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled",
    "grad", "value_and_grad", "vjp", "numpy", "GradientTape", "Variable", "gradcheck",
    "check_grads", "GradcheckError", "Dual", "jvp", "linearize", "derivative", "jacfwd",
    "jacrev", "jacobian", "hessian", "hvp", "custom_vjp", "custom_jvp", "checkpoint",
    "detect_anomaly", "is_anomaly_enabled", "tape_of", "source_lines", "keep_values",
    "keep_budget", "SweepObserver", "observe_sweep", "load_ipython_extension",
    "unload_ipython_extension",
    "draw", "explain", "explore", "trace", "Graph",
    "compile", "grad_graph", "jvp_graph", "placeholder", "Session", "gradients", "graph",
    "draw_pass", "memory_plot", "errors", "WengertError",
]
