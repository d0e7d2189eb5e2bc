"""The smaller holes of the service, closed: security headers, what ``/v1/source`` publishes,
where the audit log lives, the accept-error log flood, the connection limit's arithmetic, and
the OpenAPI document's statuses and types.

Expectations from the modules' contracts: ``handreader.service.headers`` (the headers and the
page's policy), ``handreader.service.routes.source`` (git-tracked files, else plain source
files), ``handreader.service.routes.verification.default_audit_path`` (``$HANDREADER_DATA``),
``handreader.service.connections`` (a quarter of the descriptors, at most 256, kept back; one
log line per window).
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, fake_client

from handreader.service import connections
from handreader.service.headers import PAGE_POLICY
from handreader.service.origins import normal_origin, origin_allowed, parse_allowed_origins
from handreader.service.routes.source import source_files
from handreader.service.routes.verification import default_audit_path
from handreader.service.settings import Settings


@pytest.fixture
def client() -> Iterator[TestClient]:
    with fake_client(FakeReader(NIU_TABLE)) as test_client:
        yield test_client


# --- headers -------------------------------------------------------------------------------------


def test_the_page_has_a_content_security_policy(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-security-policy"] == PAGE_POLICY
    assert "frame-ancestors 'none'" in PAGE_POLICY and "default-src 'self'" in PAGE_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"


@pytest.mark.parametrize("path", ["/health", "/v1/trainer/deal", "/static/app.js", "/nothing"])
def test_every_answer_says_nosniff_and_no_frames(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert "content-security-policy" not in response.headers  # (only the page has one)


# --- the source archive --------------------------------------------------------------------------


def _tree(root: Path) -> None:
    (root / "vision").mkdir(parents=True)
    (root / "vision" / "reader.py").write_text("print('read')\n")
    (root / "serve.py").write_text("print('serve')\n")
    (root / "LICENSE").write_text("GNU AFFERO GENERAL PUBLIC LICENSE\n")
    # what must never be published: secrets and data left in the tree
    (root / "vision" / ".env").write_text("HANDREADER_AUDIT_TOKEN=secret\n")
    (root / "vision" / "key").write_text("-----BEGIN PRIVATE KEY-----\n")
    (root / "vision" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")


def test_a_checkout_publishes_only_what_git_tracks(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "vision" / "tokens.json").write_text('{"token": "secret"}\n')
    for command in (
        ["init", "-q"],
        ["add", "vision/reader.py", "serve.py", "LICENSE"],
    ):
        subprocess.run(["git", "-C", str(tmp_path), *command], check=True)
    names = [str(path) for path in source_files(tmp_path)]
    assert names == ["LICENSE", "serve.py", "vision/reader.py"]


def test_without_git_hidden_and_typeless_files_stay_out(tmp_path: Path) -> None:
    _tree(tmp_path)
    names = [str(path) for path in source_files(tmp_path)]
    assert names == ["LICENSE", "serve.py", "vision/reader.py"]


def test_an_installed_package_publishes_its_own_packages_only(tmp_path: Path) -> None:
    """site-packages holds other distributions' top-level folders (``tests``, ``docs``): the
    archive of an installed package takes the project's packages and its dist-info licence."""
    _tree(tmp_path)
    (tmp_path / "LICENSE").unlink()  # (a wheel keeps it in its dist-info)
    info = tmp_path / "handreader-0.1.0.dist-info"
    (info / "licenses").mkdir(parents=True)
    (info / "licenses" / "LICENSE").write_text("GNU AFFERO GENERAL PUBLIC LICENSE\n")
    (info / "METADATA").write_text("Name: handreader\n")
    (info / "RECORD").write_text("vision/reader.py,,\n")
    for other in ("tests", "docs", "benchmarks"):
        (tmp_path / other).mkdir()
        (tmp_path / other / "readme.md").write_text("another distribution's file\n")
    names = [str(path) for path in source_files(tmp_path)]
    assert names == [
        "handreader-0.1.0.dist-info/METADATA",
        "handreader-0.1.0.dist-info/licenses/LICENSE",
        "serve.py",
        "vision/reader.py",
    ]


# --- where the audit log lives -------------------------------------------------------------------


def test_handreader_data_moves_the_audit_log(tmp_path: Path) -> None:
    assert default_audit_path({"HANDREADER_DATA": str(tmp_path)}) == tmp_path / "audit.sqlite3"
    both = {"HANDREADER_DATA": str(tmp_path / "a"), "XDG_DATA_HOME": str(tmp_path / "b")}
    assert default_audit_path(both) == tmp_path / "a" / "audit.sqlite3"


# --- connections ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("descriptors", "connections_kept"), [(256, 192), (1024, 768), (20_000, 19_744), (16, 12)]
)
def test_the_connection_limit_keeps_descriptors_back(
    descriptors: int, connections_kept: int
) -> None:
    assert connections.default_max_connections(descriptors) == connections_kept


def test_accept_errors_are_logged_once_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("asyncio")
    before = list(logger.filters)
    logger.filters[:] = [f for f in before if type(f).__name__ != "_AcceptErrorFilter"]
    others = len(logger.filters)
    try:
        connections.quiet_accept_errors()
        connections.quiet_accept_errors()  # (installed once)
        assert len(logger.filters) == others + 1
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            for _ in range(1000):
                try:
                    raise OSError(24, "Too many open files")
                except OSError:
                    logger.error(
                        "socket.accept() out of system resource\nsocket: <socket>", exc_info=True
                    )
            logger.error("another loop error")
        reports = [r for r in caplog.records if r.name == "asyncio"]
        assert len(reports) == 2
        first = reports[0]
        assert first.exc_info is None and "\n" not in first.getMessage()
        assert "Too many open files" in first.getMessage()
        assert reports[1].getMessage() == "another loop error"
    finally:
        logger.filters[:] = before


def test_a_live_text_message_not_in_utf8_is_one_warning_line_not_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """uvicorn logs a client's text frame that is not UTF-8 as an error with a traceback; any
    client could fill the log with them. The filter makes it one warning, then a count."""
    import inspect

    from uvicorn.protocols.websockets import websockets_sansio_impl

    message = "Invalid UTF-8 sequence received from client."
    assert message in inspect.getsource(websockets_sansio_impl)  # the text the filter knows
    logger = logging.getLogger("uvicorn.error")
    before = list(logger.filters)
    logger.filters[:] = [f for f in before if type(f).__name__ != "_BadTextFilter"]
    try:
        connections.quiet_accept_errors()
        with caplog.at_level(logging.INFO, logger="uvicorn.error"):
            for _ in range(50):
                try:
                    b"\xff".decode()
                except UnicodeDecodeError:
                    logger.error(message, exc_info=True)
            logger.error("another server error")
        reports = [r for r in caplog.records if r.name == "uvicorn.error"]
        assert len(reports) == 2
        first = reports[0]
        assert first.levelno == logging.WARNING and first.exc_info is None
        assert first.getMessage().startswith(message[:-1]) and "1007" in first.getMessage()
        assert reports[1].getMessage() == "another server error"
    finally:
        logger.filters[:] = before


# --- origins and settings ------------------------------------------------------------------------


def test_origins_are_compared_by_scheme_host_and_port() -> None:
    assert normal_origin("HTTPS://Tables.Example") == "https://tables.example:443"
    assert parse_allowed_origins(" http://a:8000, https://b ") == (
        "http://a:8000",
        "https://b:443",
    )
    with pytest.raises(ValueError, match="no origin"):
        parse_allowed_origins("https://a/path")
    own = {"host": "cards.local:8000"}
    assert origin_allowed({**own, "origin": "http://cards.local:8000"})
    assert origin_allowed({**own, "origin": "https://cards.local:8000"})
    assert not origin_allowed({**own, "origin": "http://cards.local:8001"})
    assert not origin_allowed({**own, "origin": "null"})
    assert origin_allowed({**own, "origin": "null"}, ("null",))
    assert origin_allowed({**own, "origin": "https://x.example"}, ("*",))


def test_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="HANDREADER_ALLOWED_ORIGINS"):
        Settings.from_env({"HANDREADER_ALLOWED_ORIGINS": "not an origin"})
    with pytest.raises(ValueError, match="HANDREADER_DECODE_MEMORY"):
        Settings.from_env({"HANDREADER_DECODE_MEMORY": "-1"})
    chosen = Settings.from_env(
        {"HANDREADER_BODY_TIMEOUT": "5", "HANDREADER_MAX_DECODED_BYTES": "1000000"}
    )
    assert (chosen.body_timeout_s, chosen.max_decoded_bytes) == (5.0, 1_000_000)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "0"])
@pytest.mark.parametrize("name", ["READ_TIMEOUT", "BODY_TIMEOUT", "HEADER_TIMEOUT"])
def test_a_timeout_that_is_no_finite_positive_time_stops_the_server_at_start(
    name: str, value: str
) -> None:
    """NaN closed every idle connection at once, infinity made every photo a 500: each is
    refused at start, naming its variable."""
    environ = {f"HANDREADER_{name}": value}
    with pytest.raises(ValueError, match=f"HANDREADER_{name}"):
        if name == "HEADER_TIMEOUT":
            connections.ConnectionLimits(environ)
        else:
            Settings.from_env(environ)


# --- the OpenAPI document ------------------------------------------------------------------------


def test_the_openapi_document_lists_415_and_the_audit_csv(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            if any(kind.startswith("image/") or kind.startswith("multipart/") for kind in content):
                assert "415" in operation["responses"], (method, path)
    audit = spec["paths"]["/v1/audit"]["get"]["responses"]["200"]["content"]
    assert set(audit) == {"application/json", "text/csv"}


# --- the server's configuration ------------------------------------------------------------------


def test_the_server_caps_live_frames_and_guards_connections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import argparse

    import uvicorn

    from handreader.service import app as serve

    seen: list[uvicorn.Config] = []

    def record(server: uvicorn.Server, *args: object, **kwargs: object) -> None:
        seen.append(server.config)

    monkeypatch.setattr(uvicorn.Server, "run", record)
    monkeypatch.setenv("HANDREADER_MAX_BYTES", "5000000")
    # run_server tells its workers the address they bind; set here, it is undone after the test
    # (else later tests' apps would answer only that address's Host)
    monkeypatch.setenv(serve.BIND_ENV, "127.0.0.1")
    arguments = argparse.Namespace(
        host="127.0.0.1", port=0, workers=1, models=None, access_log=False
    )
    serve.run_server(arguments)
    (config,) = seen
    assert config.ws_max_size == 5_000_000  # a frame is one image, within the byte limit
    assert config.ws_max_queue == serve.LIVE_QUEUE == 2
    assert config.http == "handreader.service.connections:GuardedHttpToolsProtocol"
