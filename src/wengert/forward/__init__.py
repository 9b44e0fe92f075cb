"""Forward mode's front end: dual numbers, one tangent riding on each value."""
