from wengert.core.bind import is_traced as isbox  # noqa: F401
