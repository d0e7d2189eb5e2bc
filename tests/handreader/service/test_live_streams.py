"""How many live streams a worker holds and how long a silent one is kept
(handreader.service.live_streams): silent sockets never take the HTTP service, nor the live
one for long."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from web_fakes import NIU_TABLE, FakeReader, image_bytes

from handreader.service import app as serve
from handreader.service import deps as service_deps
from handreader.service.live_streams import LiveStreams


def test_a_worker_admits_half_its_connections_a_quarter_of_them_from_one_address() -> None:
    streams = LiveStreams.for_limit(768)
    assert (streams.most, streams.per_client) == (384, 96)
    assert [streams.admit("10.0.0.7") for _ in range(96)] == [None] * 96
    refused = streams.admit("10.0.0.7")
    assert refused is not None and "this address holds 96 live streams" in refused
    streams.leave("10.0.0.7")
    assert streams.admit("10.0.0.7") is None  # one closed: room again
    small = LiveStreams(most=2, per_client=2)
    assert small.admit("a") is None and small.admit("b") is None
    refused = small.admit("c")
    assert refused is not None and "holds its 2 live streams" in refused
    assert small.count() == 2
    assert LiveStreams.for_limit(1).most == 1  # never none


def _client(**settings: float) -> TestClient:
    app = serve.create_app(
        settings=serve.Settings(models_dir=Path("/nonexistent"), **settings)  # type: ignore[arg-type]
    )
    app.dependency_overrides[service_deps.get_reader] = lambda: FakeReader(NIU_TABLE)
    app.state.live_streams = LiveStreams(most=8, per_client=1)
    return TestClient(app)


def test_a_stream_past_the_limit_is_told_busy_and_closed_1013_while_http_answers() -> None:
    with _client() as client:
        with client.websocket_connect("/v1/live") as first:
            first.send_bytes(image_bytes())
            assert "cards" in first.receive_json()
            with client.websocket_connect("/v1/live") as second:
                assert second.receive_json()["error"]["code"] == "busy"
                with pytest.raises(WebSocketDisconnect) as closed:
                    second.receive_json()
                assert closed.value.code == 1013
            assert client.get("/health").status_code in (200, 503)  # HTTP is still answered
        with client.websocket_connect("/v1/live") as again:
            again.send_bytes(image_bytes())  # the first closed: the address may open one again
            assert "cards" in again.receive_json()


def test_a_silent_stream_is_closed_after_the_idle_timeout() -> None:
    with _client(live_idle_timeout_s=0.3) as client:
        with client.websocket_connect("/v1/live") as socket:
            socket.send_bytes(image_bytes())
            assert "cards" in socket.receive_json()  # a frame, then silence
            error = socket.receive_json()["error"]
            assert error["code"] == "request_timeout"
            assert "no frame or message for 0.3 s" in error["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                socket.receive_json()
            assert closed.value.code == 1000
        with client.websocket_connect("/v1/live") as socket:  # its place was given back
            socket.send_bytes(image_bytes())
            assert "cards" in socket.receive_json()


def test_the_idle_timeout_is_a_setting() -> None:
    settings = serve.Settings.from_env({"HANDREADER_LIVE_IDLE_TIMEOUT": "5"})
    assert settings.live_idle_timeout_s == 5.0 and serve.Settings().live_idle_timeout_s == 60.0
    for bad in ("0", "nan", "inf", "ten"):
        with pytest.raises(ValueError, match="HANDREADER_LIVE_IDLE_TIMEOUT"):
            serve.Settings.from_env({"HANDREADER_LIVE_IDLE_TIMEOUT": bad})
