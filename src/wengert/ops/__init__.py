"""The primitives, grouped by family; :data:`REGISTRY` holds them all.

Each family module declares its ops and public functions on its own
:class:`~wengert.ops.base.Family` (``FAMILY``), each where it is written; the registry
is built here, explicitly, from the families listed in :data:`FAMILIES` (importing a
module registers nothing anywhere else), and ``wengert.numpy`` and ``np.*`` dispatch
read the same declarations. The families import only
:mod:`wengert.core` and each other, in this order (each one only those before
it): ``broadcast``, ``elementwise``, ``indexing``, ``shape``, ``reduce``,
``linalg``, ``checks``, ``floating``, ``bessel``, ``eigen``, ``svd``, ``qr``, ``lstsq``, ``fft``,
``eig``, ``composite``, ``order_statistics``, ``polynomial``, ``partition``, ``conditioning``,
``array_api_linalg``, ``histograms``, ``assembly``, ``set_routines``, ``selection`` and
``emath`` (NumPy functions written with the others, no ops of their own).
"""

from __future__ import annotations

from wengert.core.op import Registry
from wengert.ops import bessel, broadcast, elementwise, fft, floating, indexing, reduce, shape
from wengert.ops.decompositions import (
            array_api_linalg,
            assembly,
            composite,
            conditioning,
            emath,
            histograms,
            order_statistics,
            partition,
            polynomial,
            selection,
            set_routines,
)
from wengert.ops.linalg import basic as linalg
from wengert.ops.linalg import checks, eig, lstsq, qr, svd
from wengert.ops.linalg import eigh as eigen

FAMILIES = (broadcast, elementwise, indexing, shape, reduce, linalg, checks, floating, bessel,
            eigen, svd, qr, lstsq, fft, eig, composite, order_statistics, polynomial, partition,
            conditioning, array_api_linalg, histograms, assembly, set_routines, selection,
            emath)
REGISTRY = Registry(op for family in FAMILIES for op in family.FAMILY.ops)
#: The calls that give several parts of a decomposition at once (``ops.base.Joint``).
JOINTS = tuple(joint for family in FAMILIES for joint in family.FAMILY.joints)

__all__ = ["REGISTRY", "JOINTS", "FAMILIES", "broadcast", "elementwise", "reduce", "shape",
           "indexing",
           "linalg", "checks", "floating", "bessel", "eigen", "svd", "qr", "lstsq", "fft", "eig",
           "composite", "order_statistics", "polynomial", "partition", "conditioning",
           "array_api_linalg", "histograms", "assembly", "set_routines", "selection",
           "emath"]
