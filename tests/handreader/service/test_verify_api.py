"""``POST /v1/verify`` and ``GET /v1/audit`` (handreader.service.routes.verification)
with a fake recognizer and an audit log in a temporary folder.

Expectations: the table of ``web_fakes.NIU_TABLE`` under the trainer profile (seed 002's rules:
No Niu banker at seat 0, Niu Niu at seat 1 and Niu 4 at seat 2 both win; the equal bet pays 1:1
less 5%, so +95 on a stake of 100 and -190 for the banker), handreader/verify.py for the
verdicts and differences, handreader/web_verify.py for the configuration, the token and the
filters.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, error_message, image_bytes

from handreader.service import app as serve
from handreader.service import deps as service_deps
from handreader.service.routes.verification import AuditSettings, bearer_token, default_audit_path

TOKEN = "s3cret-operator-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
RIGHT = {"players": [{"seat": 1, "outcome": "win", "payout": 95}, {"seat": 2, "outcome": "win"}]}


@pytest.fixture
def fake() -> FakeReader:
    return FakeReader(NIU_TABLE)


def _app(fake: FakeReader) -> Any:
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    app.dependency_overrides[service_deps.get_reader] = lambda: fake
    return app


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "logs" / "audit.sqlite3"
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    monkeypatch.setenv("HANDREADER_AUDIT_DB", str(path))
    return path


@pytest.fixture
def client(fake: FakeReader, database: Path) -> Iterator[TestClient]:
    with TestClient(_app(fake), raise_server_exceptions=False) as test_client:
        yield test_client


def _verify(
    client: TestClient,
    declared: Any,
    headers: dict[str, str] | None = None,
    image: bytes | None = None,
    **options: Any,
) -> Any:
    files = {"image": ("round.jpg", image or image_bytes(), "image/jpeg")}
    data = {"options": json.dumps({"stake": 100, **options, "declared": declared})}
    return client.post(
        "/v1/verify", files=files, data=data, headers=AUTH if headers is None else headers
    )


def test_a_right_declaration_matches_and_is_logged(client: TestClient, database: Path) -> None:
    photo = image_bytes()
    response = _verify(client, RIGHT, image=photo)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["verdict"] == "match" and body["differences"] == []
    assert body["record_id"] == 1
    assert body["image_sha256"] == hashlib.sha256(photo).hexdigest()
    assert body["computed"]["banker"] == 0 and body["computed"]["banker_net"] == -190
    assert [p["payout"] for p in body["computed"]["players"]] == [95, 95]
    assert [hand["score"]["label"] for hand in body["table"]["hands"]] == [
        "No Niu", "Niu Niu", "Niu 4",
    ]  # fmt: skip
    assert database.is_file()  # the folder was created on first use
    listed = client.get("/v1/audit", headers=AUTH).json()
    assert listed["count"] == 1
    record = listed["records"][0]
    assert record["verdict"] == "match" and record["image_sha256"] == body["image_sha256"]
    assert record["profile"] == "trainer" and len(record["reading"]["cards"]) == 15


@pytest.mark.parametrize(
    ("declared", "kinds"),
    [
        ({"1": "win", "2": "lose"}, [("outcome", 2)]),
        ({"players": [{"seat": 1, "outcome": "win", "payout": 100}, {"seat": 2, "outcome": "win"}]},
         [("payout", 1)]),
        ({"1": "win"}, [("missing_player", 2)]),
        ({"0": "win", "1": "win", "2": "win"}, [("extra_player", 0)]),
        ({"1": "win", "2": "win", "banker_net": -200}, [("banker_net", None)]),
    ],
)  # fmt: skip
def test_a_wrong_declaration_names_each_difference(
    client: TestClient, declared: dict[str, Any], kinds: list[tuple[str, int | None]]
) -> None:
    body = _verify(client, declared).json()
    assert body["verdict"] == "mismatch"
    assert [(d["kind"], d["seat"]) for d in body["differences"]] == kinds
    assert all(d["message"] for d in body["differences"])


def test_an_uncertain_hand_cannot_be_verified(client: TestClient, fake: FakeReader) -> None:
    fake.uncertain = ["6D"]  # a card of seat 2's Niu 4
    body = _verify(client, RIGHT).json()
    assert body["verdict"] == "unverified"
    assert [(d["kind"], d["seat"]) for d in body["differences"]] == [("unscored", 2)]


@pytest.mark.parametrize("declared", [{}, {"players": [], "banker_net": 0}])
def test_a_photo_with_nothing_to_settle_is_logged_unverified_never_a_match(
    client: TestClient, fake: FakeReader, declared: dict[str, Any]
) -> None:
    fake.hands = {}  # a blank photo: no hand, no banker
    body = _verify(client, declared).json()
    assert body["verdict"] == "unverified"
    assert [(d["kind"], d["seat"]) for d in body["differences"]] == [("unscored", None)]
    assert body["differences"][0]["message"].startswith("cannot verify: ")
    record = client.get("/v1/audit", headers=AUTH).json()["records"][0]
    assert record["verdict"] == "unverified"


def test_the_declaration_as_a_query_parameter_with_a_raw_image(client: TestClient) -> None:
    response = client.post(
        "/v1/verify",
        content=image_bytes(),
        params={"declared": json.dumps(RIGHT), "stake": "100"},
        headers={**AUTH, "Content-Type": "image/jpeg"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["verdict"] == "match"


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
     {"Authorization": "Bearer "}],
)  # fmt: skip
def test_verification_needs_the_operator_token(
    client: TestClient, headers: dict[str, str], database: Path
) -> None:
    error_message(_verify(client, RIGHT, headers=headers), 401, "unauthorized")
    error_message(client.get("/v1/audit", headers=headers), 401, "unauthorized")
    # nothing was logged
    assert client.get("/v1/audit", headers=AUTH).json()["count"] == 0


VERIFY_BAD = [
    ({"1": "maybe"}, {}, 400, "bad_declaration"),
    ({"one": "win"}, {}, 400, "bad_declaration"),
    ({"players": [{"seat": 1, "outcome": "win", "payout": "lots"}]}, {}, 400, "bad_declaration"),
    ({"players": [{"seat": 1, "outcome": "win"}, {"seat": 1, "outcome": "lose"}]}, {}, 400,
     "bad_declaration"),
    ("{not json", {}, 400, "malformed_json"),
    ("[1, 2]", {}, 400, "malformed_json"),
    ([1, 2], {}, 422, "validation_error"),
    (RIGHT, {"profile": "nope"}, 400, "unknown_profile"),
    (RIGHT, {"bet": "triple"}, 400, "bad_options"),
    (RIGHT, {"colour": "red"}, 422, "validation_error"),
]  # fmt: skip


@pytest.mark.parametrize(("declared", "options", "status", "code"), VERIFY_BAD)
def test_verify_bad_input(
    client: TestClient, declared: Any, options: dict[str, Any], status: int, code: str
) -> None:
    error_message(_verify(client, declared, **options), status, code)
    assert client.get("/v1/audit", headers=AUTH).json()["count"] == 0


def test_verify_needs_a_photo_and_a_declaration(client: TestClient) -> None:
    error_message(
        client.post("/v1/verify", json={"declared": RIGHT}, headers=AUTH), 422, "missing_image"
    )
    files = {"image": ("round.jpg", image_bytes(), "image/jpeg")}
    error_message(client.post("/v1/verify", files=files, headers=AUTH), 422, "validation_error")
    declared = {"declared": json.dumps(RIGHT)}
    not_image = client.post("/v1/verify", content=b"%PDF-1.4", params=declared, headers=AUTH)
    error_message(not_image, 415, "unsupported_type")


def test_the_audit_names_a_repeated_or_unknown_filter_and_the_scheme_it_wants(
    client: TestClient,
) -> None:
    assert _verify(client, RIGHT).json()["verdict"] == "match"
    twice = [("verdict", "match"), ("verdict", "mismatch")]
    answer = client.get("/v1/audit", params=twice, headers=AUTH)
    assert "the query parameter verdict is given more than once" in error_message(
        answer, 400, "bad_options"
    )
    answer = client.get("/v1/audit", params={"verdicts": "match"}, headers=AUTH)
    assert "unknown query parameter 'verdicts': known are format, limit" in error_message(
        answer, 400, "bad_options"
    )
    refused = client.get("/v1/audit")
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"] == 'Bearer realm="handreader"'
    assert "'Authorization: Bearer TOKEN'" in refused.json()["error"]["message"]
    other_scheme = client.get("/v1/audit", headers={"Authorization": f"Token {TOKEN}"})
    assert other_scheme.status_code == 401


def test_audit_filters_and_exports(client: TestClient) -> None:
    assert _verify(client, RIGHT).json()["verdict"] == "match"
    assert _verify(client, {"1": "win", "2": "lose"}).json()["verdict"] == "mismatch"
    assert _verify(client, RIGHT, profile="classic").json()["verdict"] == "mismatch"
    everything = client.get("/v1/audit", headers=AUTH).json()
    assert everything["count"] == 3
    assert [record["id"] for record in everything["records"]] == [1, 2, 3]  # oldest first
    # classic pays no commission: +100, not the declared +95 (a payout difference)
    assert everything["records"][2]["differences"][0]["kind"] == "payout"
    mismatches = client.get("/v1/audit", params={"verdict": "mismatch"}, headers=AUTH).json()
    assert [record["id"] for record in mismatches["records"]] == [2, 3]
    classic = client.get("/v1/audit", params={"profile": "classic"}, headers=AUTH).json()
    assert classic["count"] == 1
    page = client.get("/v1/audit", params={"limit": 1, "offset": 1}, headers=AUTH).json()
    assert page["count"] == 3 and [record["id"] for record in page["records"]] == [2]
    first = everything["records"][0]["time_utc"]
    since = client.get("/v1/audit", params={"since": first}, headers=AUTH).json()
    until = client.get("/v1/audit", params={"until": first}, headers=AUTH).json()
    assert since["count"] == 3 and until["count"] == 0  # since inclusive, until exclusive
    future = client.get("/v1/audit", params={"since": "2999-01-01T00:00:00Z"}, headers=AUTH)
    assert future.json() == {"count": 0, "records": [], "next_offset": None}
    exported = client.get("/v1/audit", params={"format": "csv"}, headers=AUTH)
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("text/csv")
    assert "attachment" in exported.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(exported.text)))
    assert rows[0][:5] == ["id", "time_utc", "image_sha256", "profile", "verdict"]
    assert [row[4] for row in rows[1:]] == ["match", "mismatch", "mismatch"]


@pytest.mark.parametrize(
    ("params", "status", "code"),
    [
        ({"since": "yesterday"}, 400, "bad_options"),
        ({"until": "2026-01-01T00:00:00"}, 400, "bad_options"),  # no zone
        ({"verdict": "maybe"}, 422, "validation_error"),
        ({"format": "xml"}, 422, "validation_error"),
        ({"limit": -1}, 422, "validation_error"),
        ({"offset": 2**63}, 422, "validation_error"),  # past the stores' 64-bit counts
        ({"since": "0001-01-01T00:00:00+05:00"}, 400, "bad_options"),  # before year 1 in UTC
        ({"until": "9999-12-31T23:59:59-05:00"}, 400, "bad_options"),  # past year 9999 in UTC
        ({"since": "2026-01-01T00:00:00 05:00"}, 400, "bad_options"),  # a '+' sent unencoded
    ],
)
def test_audit_bad_filters(
    client: TestClient, params: dict[str, Any], status: int, code: str
) -> None:
    error_message(client.get("/v1/audit", params=params, headers=AUTH), status, code)


def test_the_ends_of_the_filters_are_answered(client: TestClient) -> None:
    assert _verify(client, RIGHT).status_code == 200
    last = client.get("/v1/audit", params={"offset": 2**63 - 1}, headers=AUTH)
    assert last.status_code == 200 and last.json() == {
        "count": 1,
        "records": [],
        "next_offset": None,
    }
    unencoded = client.get("/v1/audit", params={"since": "2026-01-01T00:00:00 05:00"}, headers=AUTH)
    assert "write it %2B" in unencoded.json()["error"]["message"]
    far = {"since": "0001-01-02T00:00:00Z", "until": "9999-12-30T00:00:00Z"}
    assert client.get("/v1/audit", params=far, headers=AUTH).json()["count"] == 1


def test_a_checkpoint_without_the_secret_or_with_a_forged_signature_is_no_server_error(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verifying against a checkpoint with no operator secret set is a 503 naming the setting
    (a configuration, not a bug); a signature that does not hold is a 400 naming it."""
    assert _verify(client, RIGHT).status_code == 200
    head = client.get("/v1/audit/verify", headers=AUTH).json()["head"]
    forged = json.dumps({"count": 1, "head": head, "signature": "0" * 64})
    monkeypatch.delenv("HANDREADER_AUDIT_KEY", raising=False)
    answer = client.post("/v1/audit/verify", content=forged, headers=AUTH)
    assert "HANDREADER_AUDIT_KEY" in error_message(answer, 503, "audit_not_configured")
    monkeypatch.setenv("HANDREADER_AUDIT_KEY", "operator secret")
    answer = client.post("/v1/audit/verify", content=forged, headers=AUTH)
    assert "signature does not hold" in error_message(answer, 400, "bad_options")


def test_records_outlive_the_app(fake: FakeReader, database: Path) -> None:
    with TestClient(_app(fake)) as first:
        assert _verify(first, RIGHT).json()["record_id"] == 1
    with TestClient(_app(fake)) as second:
        assert _verify(second, RIGHT).json()["record_id"] == 2
        assert second.get("/v1/audit", headers=AUTH).json()["count"] == 2


def test_without_a_token_verification_is_off(
    fake: FakeReader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HANDREADER_AUDIT_TOKEN", raising=False)
    path = tmp_path / "audit.sqlite3"
    monkeypatch.setenv("HANDREADER_AUDIT_DB", str(path))
    with TestClient(_app(fake), raise_server_exceptions=False) as client:
        message = error_message(_verify(client, RIGHT), 503, "audit_not_configured")
        assert message == "audit log not configured: set HANDREADER_AUDIT_TOKEN"
        error_message(client.get("/v1/audit", headers=AUTH), 503, "audit_not_configured")
    assert not path.exists()  # nothing is created while verification is off


def test_an_unusable_database_is_a_json_error(
    fake: FakeReader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    monkeypatch.setenv("HANDREADER_AUDIT_DB", str(blocker / "audit.sqlite3"))
    with TestClient(_app(fake), raise_server_exceptions=False) as client:
        error_message(_verify(client, RIGHT), 500, "audit_failed")


def test_settings_from_the_environment(tmp_path: Path) -> None:
    data_home = {"XDG_DATA_HOME": str(tmp_path)}
    assert default_audit_path(data_home) == tmp_path / "handreader" / "audit.sqlite3"
    assert default_audit_path({}) == Path.home() / ".local/share/handreader/audit.sqlite3"
    settings = AuditSettings.from_env({"HANDREADER_AUDIT_DB": str(tmp_path / "a.db")})
    assert settings == AuditSettings(tmp_path / "a.db", None)
    assert AuditSettings.from_env({"HANDREADER_AUDIT_TOKEN": ""}).token is None


@pytest.mark.parametrize(
    ("header", "token"),
    [("Bearer abc", "abc"), ("bearer  abc ", "abc"), ("Basic abc", None), ("Bearer", None),
     ("", None)],
)  # fmt: skip
def test_bearer_token(header: str, token: str | None) -> None:
    from starlette.requests import Request

    scope = {"type": "http", "headers": [(b"authorization", header.encode())] if header else []}
    assert bearer_token(Request(scope)) == token


def test_the_trail_is_verified_by_a_route_and_the_command_line(
    client: TestClient,
    database: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A route and ``handreader audit`` name the first bad or missing record; a checkpoint
    signed before the newest records were deleted shows the deletion."""
    import sqlite3

    from handreader import cli

    monkeypatch.setenv("HANDREADER_AUDIT_KEY", "operator secret")  # a keyed chain
    for _ in range(3):
        assert _verify(client, RIGHT).status_code == 200
    assert client.get("/v1/audit/verify").status_code == 401
    assert client.get("/v1/audit/verify", headers=AUTH).json() == {
        "ok": True, "records": 3, "head": client.get("/v1/audit", headers=AUTH).json()[
            "records"][-1]["record_sha256"], "first_bad": None, "problem": None,
    }  # fmt: skip
    kept = tmp_path / "checkpoint.json"
    assert cli.main(["audit", "checkpoint", "--out", str(kept)]) == 0
    assert cli.main(["audit", "verify", "--checkpoint", str(kept)]) == 0
    assert "the trail holds: 3 records and the checkpoint" in capsys.readouterr().out
    with sqlite3.connect(database) as connection:
        connection.execute("DELETE FROM verification WHERE id = 3")
    assert client.get("/v1/audit/verify", headers=AUTH).json()["ok"] is True  # chain alone
    answer = client.post("/v1/audit/verify", content=kept.read_bytes(), headers=AUTH).json()
    assert answer["ok"] is False and answer["first_bad"] == 3
    assert cli.main(["audit", "verify", "--checkpoint", str(kept)]) == 1
    assert "record 3 was deleted" in capsys.readouterr().out
    bad = client.post("/v1/audit/verify", content=b'{"count": -1}', headers=AUTH)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_options"
    with sqlite3.connect(database) as connection:
        connection.execute("DELETE FROM verification WHERE id = 1")
    gap = client.get("/v1/audit/verify", headers=AUTH).json()
    assert gap["first_bad"] == 1 and gap["problem"] == "record 1 is missing"


def test_audit_verify_fails_a_forged_checkpoint_and_never_starts_a_trail(
    client: TestClient,
    database: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/cli.md: a checkpoint whose signature does not hold fails the check (exit 1, and
    ``--json`` says why); no action opens a new, empty trail where none was kept; a store URL
    that is no PostgreSQL URL is refused as the service refuses it."""
    from handreader import cli

    monkeypatch.setenv("HANDREADER_AUDIT_KEY", "operator secret")
    assert _verify(client, RIGHT).status_code == 200
    kept = tmp_path / "checkpoint.json"
    assert cli.main(["audit", "checkpoint", "--out", str(kept)]) == 0
    signed = json.loads(kept.read_text())
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({**signed, "count": signed["count"] + 1}))
    capsys.readouterr()
    assert cli.main(["audit", "verify", "--checkpoint", str(forged)]) == 1
    assert "does not hold under this secret" in capsys.readouterr().out
    assert cli.main(["audit", "verify", "--json", "--checkpoint", str(forged)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["records"] == 1
    assert "does not hold under this secret" in report["problem"]
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(b"\xff\xd8\xff\xe0 not json")
    assert cli.main(["audit", "verify", "--checkpoint", str(photo)]) == 2
    assert f"--checkpoint '{photo}': not JSON" in capsys.readouterr().err

    mistyped = tmp_path / "logs" / "audit.sqlite33"
    monkeypatch.setenv("HANDREADER_AUDIT_DB", str(mistyped))
    for action in ("verify", "checkpoint", "rekey"):
        assert cli.main(["audit", action]) == 2
        assert f"no audit trail at '{mistyped}'" in capsys.readouterr().err
    assert not mistyped.exists()
    monkeypatch.setenv("HANDREADER_DATABASE_URL", "garbage")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["audit", "verify"]) == 2
    assert "HANDREADER_DATABASE_URL must be a postgresql:// URL" in capsys.readouterr().err
    assert not (tmp_path / "garbage").exists()


def test_a_stalled_store_answers_503_in_time_and_photos_are_still_read(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's database stops answering: a verification waits its deadline and answers
    503 store_unavailable; reading a photo, which needs no database, goes on meanwhile."""
    import threading
    import time

    from handreader.service.routes import verification as routes

    release = threading.Event()

    def stalled(*args: Any, **kwargs: Any) -> Any:
        release.wait(10)
        raise AssertionError("released")

    monkeypatch.setattr(routes, "verify_and_log", stalled)
    monkeypatch.setattr(routes, "STORE_DEADLINE_S", 0.5)
    answers: list[Any] = []
    threads = [
        threading.Thread(target=lambda: answers.append(_verify(client, RIGHT))) for _ in range(3)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    read = client.post("/v1/read", content=image_bytes())  # meanwhile, no database needed
    assert read.status_code == 200
    for thread in threads:
        thread.join(5)
    assert time.monotonic() - started < 4
    assert [answer.status_code for answer in answers] == [503, 503, 503]
    assert {answer.json()["error"]["code"] for answer in answers} == {"store_unavailable"}
    assert "did not answer within 0.5 s" in answers[0].json()["error"]["message"]
    release.set()


def test_a_full_disk_is_a_507_that_names_no_path(
    client: TestClient, database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite reports its disk full (the database held at the pages it has): the verification
    answers 507 storage_full without the file's path, nothing is written, and the log keeps
    what it held."""
    from handreader.store.database import SqliteDatabase

    assert _verify(client, RIGHT).status_code == 200
    write = SqliteDatabase.write

    def on_a_full_disk(self: SqliteDatabase, work: Any, **kwargs: Any) -> Any:
        pages = self.connection.execute("PRAGMA page_count").fetchone()[0]
        self.connection.execute(f"PRAGMA max_page_count = {pages}")
        return write(self, work, **kwargs)

    monkeypatch.setattr(SqliteDatabase, "write", on_a_full_disk)
    attempts = [_verify(client, RIGHT) for _ in range(40)]  # the free room of the last page
    full = [answer for answer in attempts if answer.status_code == 507]
    assert full, [answer.status_code for answer in attempts]
    message = error_message(full[0], 507, "storage_full")
    assert message == "the store's disk is full: nothing was written"
    assert str(database.parent) not in full[0].text
    assert all(answer.status_code in (200, 507) for answer in attempts)
    monkeypatch.setattr(SqliteDatabase, "write", write)
    kept = client.get("/v1/audit", headers=AUTH).json()
    assert kept["count"] == 1 + sum(answer.status_code == 200 for answer in attempts)
    assert client.get("/v1/audit/verify", headers=AUTH).json()["ok"] is True


def test_a_trail_kept_without_the_secret_is_chained_under_it_by_the_command_line(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from handreader import cli

    for _ in range(2):
        assert _verify(client, RIGHT).status_code == 200
    monkeypatch.setenv("HANDREADER_AUDIT_KEY", "operator secret")
    assert cli.main(["audit", "verify"]) == 1
    assert "chained without the operator secret: run 'handreader audit rekey'" in (
        capsys.readouterr().out
    )
    assert cli.main(["audit", "rekey"]) == 0
    assert capsys.readouterr().out.startswith("2 records chained under the operator secret")
    assert cli.main(["audit", "verify"]) == 0
    assert "the trail holds: 2 records" in capsys.readouterr().out
    assert cli.main(["audit", "rekey"]) == 0
    assert "already chained" in capsys.readouterr().out
