"""Harbor 0.26.0, vendored in part: see ../README.md (the real package imports far more)."""
