"""Linear algebra primitives: products, solves, inverses, determinants and the matrix decompositions
(``eigh``, ``eig``, ``svd``, ``qr``, ``pinv``), each with its forward, JVP and VJP."""
