"""docs/api.md names every error code under its status and every environment variable the
service reads, so the reference cannot fall behind the code."""

from __future__ import annotations

import re
from pathlib import Path

from handreader.service.errors import ERROR_STATUS
from handreader.service.hosts import BIND_ENV

ROOT = Path(__file__).resolve().parents[3]
API_MD = ROOT / "docs" / "api.md"


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def documented_statuses() -> dict[str, set[int]]:
    """Each code in the errors table of docs/api.md, with the statuses of its row."""
    codes: dict[str, set[int]] = {}
    for line in _section(API_MD.read_text(encoding="utf-8"), "Errors").splitlines():
        cells = line.split("|")
        if len(cells) < 4 or not re.fullmatch(r"[\d, ]+", cells[1].strip()):
            continue
        statuses = {int(status) for status in re.findall(r"\d{3}", cells[1])}
        for code in re.findall(r"`([a-z_]+)`", "|".join(cells[2:])):
            codes.setdefault(code, set()).update(statuses)
    return codes


def variables_read() -> set[str]:
    """The ``HANDREADER_*`` names the service's packages and ``serve.py`` read."""
    names: set[str] = set()
    sources = [ROOT / "serve.py"]
    for package in ("handreader", "vision", "rules"):
        sources.extend((ROOT / package).rglob("*.py"))
    for source in sources:
        text = source.read_text(encoding="utf-8")
        names.update(re.findall(r"\bHANDREADER_[A-Z][A-Z_]*[A-Z]\b", text))
        if 'f"HANDREADER_{name}"' in text:  # the service's numeric limits, read by suffix
            suffixes = re.findall(r'number\("([A-Z_]+)"', text)
            names.update(f"HANDREADER_{suffix}" for suffix in suffixes)
    return names - {BIND_ENV}  # set by ``handreader serve`` for its own workers


def test_every_error_code_is_documented_under_its_status() -> None:
    documented = documented_statuses()
    missing = sorted(code for code in ERROR_STATUS if code not in documented)
    assert not missing, f"error codes missing from docs/api.md: {missing}"
    wrong = {
        code: (status, sorted(documented[code]))
        for code, status in ERROR_STATUS.items()
        if status not in documented[code]
    }
    assert not wrong, f"codes under the wrong status in docs/api.md: {wrong}"
    unknown = sorted(code for code in documented if code not in ERROR_STATUS)
    assert not unknown, f"docs/api.md lists codes the service never answers: {unknown}"


def test_every_environment_variable_is_documented() -> None:
    read = variables_read()
    assert {"HANDREADER_MAX_BYTES", "HANDREADER_AUDIT_TOKEN", "HANDREADER_DATA"} <= read
    text = API_MD.read_text(encoding="utf-8")
    missing = sorted(name for name in read if name not in text)
    assert not missing, f"environment variables missing from docs/api.md: {missing}"


def test_the_table_parser_reads_a_row_of_two_statuses() -> None:
    documented = documented_statuses()
    assert documented["not_found"] == {404, 405}
    assert documented["too_many_attempts"] == {429}
