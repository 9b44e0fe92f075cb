"""Running a graph: generated Python source, ``wg.compile``'s cache of traces, and export to JAX."""
