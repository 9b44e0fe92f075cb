"""``%load_ext wengert`` and ``%%autodiff``: the extension, rewriting and running a cell, its
result card."""
