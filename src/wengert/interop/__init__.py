"""What every kind of traced value shares: NumPy's protocols (``np.*`` calls routed to wengert's
functions) and the ndarray-like operators and methods."""
