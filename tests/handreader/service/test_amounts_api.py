"""Amounts at the HTTP edge: a stake written as huge decimal text is a 400 naming the stake,
answered at once (``rules.money.MAX_AMOUNT``), not a 500 or a billion-digit integer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from handreader.service import app as serve

HANDS = ["3H 7S KD 8C 6D", "AS 2S 3S 4S 5S"]


@pytest.fixture
def client() -> Iterator[TestClient]:
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    with TestClient(app) as test_client:
        yield test_client


@pytest.mark.parametrize("stake", ["1e999999999", "-1e999999999", "1e16"])
def test_a_stake_out_of_range_is_a_400(client: TestClient, stake: str) -> None:
    response = client.post("/v1/score", json={"hands": HANDS, "stake": stake})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_options"
    assert stake in response.json()["error"]["message"]


def test_the_largest_stake_is_scored(client: TestClient) -> None:
    response = client.post("/v1/score", json={"hands": HANDS, "stake": "1e15"})
    assert response.status_code == 200
