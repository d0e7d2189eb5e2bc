"""Amounts at the HTTP edge: a stake written as huge decimal text is a 400 naming the stake,
answered at once (``rules.money.MAX_AMOUNT``), not a 500 or a billion-digit integer."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from handreader.service import app as serve
from handreader.service.requests import parse_json_object
from rules.money import json_amount, to_money

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


@pytest.mark.parametrize("stake", [1e16, "1e16"])
def test_a_stake_over_the_largest_amount_is_refused_alike_as_number_or_text(
    client: TestClient, stake: float | str
) -> None:
    response = client.post("/v1/score", json={"hands": HANDS, "stake": stake})
    assert response.status_code == 400
    assert "over the largest amount, 1,000,000,000,000,000" in response.json()["error"]["message"]


@pytest.mark.parametrize("stake", [1e13, "1e13", 1e15])
def test_the_api_takes_the_stakes_the_command_line_takes(
    client: TestClient, stake: float | str
) -> None:
    score = client.post("/v1/score", json={"hands": HANDS, "stake": stake})
    assert score.status_code == 200, score.text
    for path, body in (
        ("/v1/baccarat", {"player": "9H 5C", "banker": "KD 6S"}),
        ("/v1/blackjack", {"dealer": "KD 7S", "players": ["10H 9C"]}),
        ("/v1/paigow", {"cards": "AS KD 9C 9D 5H 3S JR", "banker": "QS QH 8D 7C 4S 3D 2H"}),
    ):
        response = client.post(path, json={**body, "stake": stake})
        assert response.status_code == 200, (path, response.text)


@pytest.mark.parametrize(("stake", "limit"), [("1e-400", "9 decimal places")])
def test_a_stake_finer_than_a_billionth_is_refused_not_rounded(
    client: TestClient, stake: str, limit: str
) -> None:
    # 1e-400 would come back as a stake of 0
    response = client.post("/v1/score", json={"hands": HANDS, "stake": stake})
    assert response.status_code == 400
    assert f"is written too finely: at most {limit}" in response.json()["error"]["message"]


def test_a_whole_number_too_long_for_any_option_is_named_not_parsed(
    client: TestClient,
) -> None:
    body = '{"hands": ["3H 7S KD 8C 6D", "AS 2S 3S 4S 5S"], "stake": ' + "9" * 5000 + "}"
    response = client.post("/v1/score", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "bad_options"
    assert "a whole number of 5,000 digits: numbers of at most 100 digits" in error["message"]
    assert "sys." not in error["message"]


GAMES = (
    ("/v1/baccarat", {"player": "9H 5C", "banker": "KD 6S"}),
    ("/v1/blackjack", {"dealer": "KD 7S", "players": ["10H 9C"]}),
    ("/v1/paigow", {"cards": "AS KD 9C 9D 5H 3S JR", "banker": "QS QH 8D 7C 4S 3D 2H"}),
)


@pytest.mark.parametrize(
    "stake",
    [-1, 0, -2.5, "abc", "1e16", 1e16, 10**16, "0.0000000001", "1e-400", "1,000"],
)
def test_a_stake_the_rules_refuse_is_the_same_400_on_every_game(
    client: TestClient, stake: float | str
) -> None:
    expected = client.post("/v1/score", json={"hands": HANDS, "stake": stake}).json()
    assert expected["error"]["code"] == "bad_options"
    assert repr(stake) in expected["error"]["message"]  # the value as it was sent
    for path, body in GAMES:
        response = client.post(path, json={**body, "stake": stake})
        assert response.status_code == 400, (path, response.text)
        assert response.json() == expected, path


def test_amounts_the_rules_refuse_are_named_together_and_a_wrong_type_is_a_422(
    client: TestClient,
) -> None:
    path, body = GAMES[0]
    both = client.post(path, json={**body, "stake": 0, "tie_pays": "-2"})
    assert both.status_code == 400
    assert both.json()["error"]["message"] == (
        "stake must be a positive number, got 0; tie_pays must be a positive number, got '-2'"
    )
    for stake in ([1], {"a": 1}, True, "1" * 41):
        response = client.post(path, json={**body, "stake": stake})
        assert response.status_code == 422, stake
        assert response.json()["error"]["message"].startswith("stake: ")
    mixed = client.post(path, json={**body, "stake": [1], "tie_pays": 0})
    assert mixed.status_code == 422  # a malformed request is a 422 whatever else it holds
    assert "tie_pays must be a positive number, got 0" in mixed.json()["error"]["message"]


def test_a_stake_in_the_query_of_a_game_photo_is_refused_in_the_same_words(
    client: TestClient,
) -> None:
    response = client.post(
        "/v1/blackjack?stake=-1", content=b"\xff\xd8", headers={"content-type": "image/jpeg"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "bad_options", "message": "stake must be a positive number, got '-1'"
    }  # fmt: skip


def test_a_stake_of_nan_is_refused_alike_on_every_endpoint(client: TestClient) -> None:
    headers = {"Content-Type": "application/json"}
    answers = [
        client.post("/v1/score", content='{"hands": ["3H 7S KD 8C 6D"], "stake": NaN}',
                    headers=headers),
        client.post("/v1/baccarat", content='{"player": "9H 5C", "banker": "KD 6S", "stake": NaN}',
                    headers=headers),
    ]  # fmt: skip
    for answer in answers:
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"] == {
            "code": "bad_options", "message": "stake must be a positive number, got nan"
        }  # fmt: skip


EXACT_STAKE = "573523967952514.141"
"""A stake of 18 significant digits: its nearest double is 573523967952514.125 (shortest form
573523967952514.1), whose net would come back as 544847769554888.4."""


@pytest.mark.parametrize("path", ["/v1/score"])
def test_a_json_number_stake_is_read_with_all_its_digits(client: TestClient, path: str) -> None:
    # the default profile pays Niu Niu 1x an equal bet less 5 %: net = 0.95 x stake, exactly
    expected = json_amount(Decimal(EXACT_STAKE) * Decimal("0.95"))  # 544847769554888.43395
    assert expected != json_amount(Decimal(repr(float(EXACT_STAKE))) * Decimal("0.95"))
    body = f'{{"hands": {json.dumps(HANDS)}, "stake": {EXACT_STAKE}}}'
    answer = client.post(path, content=body, headers={"Content-Type": "application/json"})
    as_text = client.post(path, json={"hands": HANDS, "stake": EXACT_STAKE})
    assert answer.status_code == 200, answer.text
    assert answer.json()["players"][0]["net"] == expected
    assert answer.json() == as_text.json()


@pytest.mark.parametrize(
    ("number", "message"),
    [
        # a double would take it for 1 (and 1e-400 for 0): read whole, it is too fine
        ("1.00000000000000001", "stake 1.00000000000000001 is written too finely"),
        ("1e-400", "stake 1e-400 is written too finely"),
        ("-123456789012345.678", "stake must be a positive number, got -123456789012345.678"),
    ],
)
def test_a_json_number_stake_a_double_cannot_carry_is_refused_by_its_digits(
    client: TestClient, number: str, message: str
) -> None:
    body = f'{{"hands": {json.dumps(HANDS)}, "stake": {number}}}'
    answer = client.post("/v1/score", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "bad_options"
    assert answer.json()["error"]["message"].startswith(message), answer.json()


@pytest.mark.parametrize("field", ["decks", "banker"])
@pytest.mark.parametrize("number", ["1e20000000", "-1e999999999", "1e300"])
def test_a_count_written_with_a_huge_exponent_is_refused_at_once(
    client: TestClient, field: str, number: str
) -> None:
    # a whole-number field takes such a number as the double it is (inf, or 1e300): refused by
    # its limits, never first expanded into an integer of 20 million digits (a minute's work)
    body = f'{{"hands": {json.dumps(HANDS)}, "{field}": {number}}}'
    started = time.perf_counter()
    answer = client.post("/v1/score", content=body, headers={"Content-Type": "application/json"})
    assert time.perf_counter() - started < 1
    assert 400 <= answer.status_code < 500, answer.text
    assert "Decimal" not in answer.text


@pytest.mark.parametrize(
    ("number", "read_as"),
    [
        ("0.10000000000000001", "0.1"),  # %.17g of 0.1
        ("0.1", "0.1"),  # the shortest form, as JSON.stringify and json.dumps write it
        ("2.2999999999999998", "2.3"),  # %.17g of 2.3
        ("1.0000000000000000e1", "10"),  # 17 digits, an exponent
        ("573523967952514.14", "573523967952514.14"),  # 17 digits, but no double's: as written
        # a double's 17 digits, but an amount the rules take (9 places at most): as written
        ("573523967952514.12", "573523967952514.12"),  # %.17g of the double nearest EXACT_STAKE
        ("33977286960856.172", "33977286960856.172"),  # its shortest form is 33977286960856.17
    ],
)
def test_a_stake_written_too_finely_as_a_doubles_17_digits_is_that_double(
    client: TestClient, number: str, read_as: str
) -> None:
    body = f'{{"hands": {json.dumps(HANDS)}, "stake": {number}}}'
    answer = client.post("/v1/score", content=body, headers={"Content-Type": "application/json"})
    expected = client.post("/v1/score", json={"hands": HANDS, "stake": read_as})
    assert answer.status_code == 200, answer.text
    assert answer.json() == expected.json()


@pytest.mark.parametrize(
    ("number", "amount"),
    [
        ("33977286960856.172", "33977286960856.172"),  # 3 places: every digit, not ...56.17
        ("573523967952514.12", "573523967952514.12"),
        ("0.123456789", "0.123456789"),
        ("0.10000000000000001", "0.1"),  # 17 places: the double %.17g wrote
        ("2.2999999999999998", "2.3"),
    ],
)
def test_a_json_amount_keeps_its_digits_where_the_rules_take_them(number: str, amount: str) -> None:
    body = parse_json_object(f'{{"stake": {number}}}', "a body")
    assert to_money(body["stake"]) == Decimal(amount)
