"""Dynamic shapes: symbolic sizes, the shape rules of each op, and the passes in which sizes become known."""
