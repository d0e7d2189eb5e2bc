"""The HTTP routes, one module per group of endpoints."""
