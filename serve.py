"""The handreader HTTP API: ``python serve.py [--host H] [--port P] [--workers N] [--models DIR]``.

The service itself is ``handreader.service`` (the app factory is
``handreader.service.app.create_app``); this file is its entry point.
"""

from __future__ import annotations

import sys

from handreader.service.app import create_app, main

__all__ = ["create_app", "main"]

if __name__ == "__main__":
    sys.exit(main())
