"""The core: op records, grad modes, tape nodes, pytrees and the backward sweep.

Imports only NumPy and the standard library.
"""
