"""The API's documentation page, whose script and style come from the package, not a CDN.

FastAPI's own ``/docs`` loads Swagger UI from a public CDN, so on a closed network (a casino's
floor, any machine offline) it stays blank. Here it loads it from the files that the pinned
``fastapi-offline`` package ships (Swagger UI 5, ``fastapi_offline/static``; only its files are
used), served under ``/docs-assets/<file>``:

- ``GET /docs``: Swagger UI (no validator badge: it would call ``validator.swagger.io``);
- ``GET /docs/oauth2-redirect``: Swagger UI's OAuth2 redirect page;
- ``GET /docs-assets/<file>``: the script, the style and the icon.

There is no ``/redoc``: ReDoc's page fetches its badge from ``cdn.redoc.ly`` whatever its
options. Call :func:`add_docs_routes` on an app made with ``docs_url=None, redoc_url=None``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import FileResponse, HTMLResponse
from starlette.exceptions import HTTPException

__all__ = ["ASSETS", "ASSETS_URL", "add_docs_routes", "assets_dir"]

ASSETS_URL = "/docs-assets"
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon.png": "image/png",
}
"""The files served, by name, with their media types."""


def assets_dir() -> Path:
    """The folder of Swagger UI's files inside the installed ``fastapi-offline``."""
    return Path(str(resources.files("fastapi_offline"))) / "static"


def add_docs_routes(app: FastAPI) -> None:
    """``/docs``, ``/docs/oauth2-redirect`` and ``/docs-assets/<file>``."""
    folder = assets_dir()
    redirect_url = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    def root(request: Request) -> str:
        return str(request.scope.get("root_path", "")).rstrip("/")

    @app.get("/docs", include_in_schema=False)
    def swagger(request: Request) -> HTMLResponse:
        base = root(request)
        return get_swagger_ui_html(
            openapi_url=f"{base}{app.openapi_url}",
            title=f"{app.title} - API",
            oauth2_redirect_url=f"{base}{redirect_url}",
            swagger_js_url=f"{base}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{base}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{base}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None},
        )

    @app.get(redirect_url, include_in_schema=False)
    def swagger_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(ASSETS_URL + "/{name}", include_in_schema=False)
    def asset(name: str) -> FileResponse:
        media = ASSETS.get(name)
        path = folder / name
        if media is None or not path.is_file():
            raise HTTPException(404, f"no documentation file {name!r}")
        return FileResponse(path, media_type=media, headers={"Cache-Control": "max-age=86400"})
