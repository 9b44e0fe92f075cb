"""The explorer widget: frames computed up front (their schema), their layout and packing,
``explorer.js`` and ``explorer.css``."""
