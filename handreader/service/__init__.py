"""The HTTP service: the app factory, its routes, request schemas, errors and the static page."""
