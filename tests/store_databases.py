"""Test helper: the store's databases reached behind its back (both backends)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

__all__ = ["raw", "with_schema"]


def with_schema(url: str, schema: str) -> str:
    """``url`` whose connections use ``schema`` (libpq's ``options`` parameter)."""
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}options={quote(f'-csearch_path={schema}')}"


def raw(location: str, sql: str, values: Sequence[object] = ()) -> list[tuple[Any, ...]]:
    """Run one statement on the store's database behind its back (``?`` placeholders),
    committed; its rows."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as connection:
            cursor = connection.execute(sql.replace("?", "%s"), tuple(values))
            return list(cursor.fetchall()) if cursor.description is not None else []
    with sqlite3.connect(location) as connection:
        return connection.execute(sql, tuple(values)).fetchall()
