"""The explorer widget: frames computed up front, their layout and packing, and ``explorer.js``."""
