"""``GET /v1/source`` (handreader.service.routes.source): the service offers its own source
code, as the AGPL-3.0 (section 13) asks of a program its users reach over a network, and the page
links to it.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, fake_client

from handreader.service.routes.reading import STATIC_DIR
from handreader.service.routes.source import ROOT, SOURCE_URL_VARIABLE, source_archive, source_files


@pytest.fixture
def client() -> Iterator[TestClient]:
    with fake_client(FakeReader(NIU_TABLE)) as test_client:
        yield test_client


def _members(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        return {
            member.name: archive.extractfile(member).read()  # type: ignore[union-attr]
            for member in archive.getmembers()
        }


def test_the_source_is_served_as_a_tar_gz_of_the_running_code(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SOURCE_URL_VARIABLE, raising=False)
    response = client.get("/v1/source")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/gzip"
    assert "handreader-source.tar.gz" in response.headers["content-disposition"]
    members = _members(response.content)
    # the code this process runs, byte for byte
    for name in (
        "serve.py",
        "handreader/service/routes/source.py",
        "vision/reader.py",
        "rules/niuniu.py",
        "handreader/service/static/index.html",
    ):
        assert members[f"handreader-source/{name}"] == (ROOT / name).read_bytes()
    if (ROOT / "LICENSE").is_file():  # a checkout (a wheel's install holds the packages only)
        licence = members["handreader-source/LICENSE"].decode()
        assert "GNU AFFERO GENERAL PUBLIC LICENSE" in licence
        # what builds the package again: its configuration and the source distribution's list
        for name in ("pyproject.toml", "MANIFEST.in"):
            assert members[f"handreader-source/{name}"] == (ROOT / name).read_bytes()
    assert not [name for name in members if name.endswith((".pyc", ".onnx", ".jpg", ".png"))]
    assert not [name for name in members if "__pycache__" in name]


def test_the_archive_is_the_same_bytes_each_time(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "a.py").write_text("A = 1\n")
    (tmp_path / "rules" / "__pycache__").mkdir()
    (tmp_path / "rules" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0" * 10)
    (tmp_path / "serve.py").write_text("print('serve')\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "detector.onnx").write_bytes(b"\0" * 10)
    (tmp_path / "unrelated.py").write_text("x = 1\n")
    assert source_files(tmp_path) == [Path("rules/a.py"), Path("serve.py")]
    first = source_archive(tmp_path)
    source_archive.cache_clear()
    assert source_archive(tmp_path) == first  # no times, no owners: reproducible
    assert _members(first) == {
        "handreader-source/rules/a.py": b"A = 1\n",
        "handreader-source/serve.py": b"print('serve')\n",
    }


def test_an_operator_can_point_to_the_published_source(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SOURCE_URL_VARIABLE, "https://example.org/our-handreader")
    response = client.get("/v1/source", follow_redirects=False)
    assert response.status_code == 307
    assert response.headers["location"] == "https://example.org/our-handreader"


def test_the_page_links_to_the_source() -> None:
    html = (STATIC_DIR / "index.html").read_text()
    assert 'href="/v1/source"' in html
    assert "AGPL-3.0-or-later" in html
