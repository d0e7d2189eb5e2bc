"""handreader: read card hands from photos and score them (command line, HTTP API, live overlay)."""

__version__ = "0.1.0"
