"""Static views: pure functions from tapes and graphs to text, HTML, DOT and plots."""
