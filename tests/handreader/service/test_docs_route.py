"""``GET /docs`` from the package's own files (handreader/service/routes/docs.py).

The browser side (the page rendered with the network cut) is in ``test_browser_phone.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from web_fakes import NIU_TABLE, FakeReader, fake_client

from handreader.service.routes.docs import ASSETS, ASSETS_URL, assets_dir


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with fake_client(FakeReader(NIU_TABLE)) as running:
        yield running


def test_the_docs_page_loads_only_the_services_own_files(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources and all(source.startswith(ASSETS_URL + "/") for source in sources), sources
    assert "url: '/openapi.json'" in page.text
    assert '"validatorUrl": null' in page.text  # no badge from validator.swagger.io


@pytest.mark.parametrize("name", sorted(ASSETS))
def test_each_asset_is_served_with_its_type(client: TestClient, name: str) -> None:
    answer = client.get(f"{ASSETS_URL}/{name}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == ASSETS[name]
    assert answer.content == (assets_dir() / name).read_bytes()


@pytest.mark.parametrize("name", ["index.html", "..%2Fcore.py", "redoc.standalone.js"])
def test_other_files_are_not_served(client: TestClient, name: str) -> None:
    answer = client.get(f"{ASSETS_URL}/{name}")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "not_found"


def test_there_is_no_redoc_page(client: TestClient) -> None:
    # ReDoc fetches its badge from cdn.redoc.ly whatever its options (see routes/docs.py)
    assert client.get("/redoc").status_code == 404
