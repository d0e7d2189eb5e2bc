"""The store's schema, as numbered migrations applied in order by
:class:`handreader.store.database.Database` when it opens.

Version 1 is the verification log (``verification``: one row per verification, its fields as
text so that the hash chain covers exactly what is stored) on both backends, and on PostgreSQL
the deck profiles (``deck_profile``: one row per deck, the profile's JSON text and its
SHA-256). On SQLite the deck profiles stay files in the data folder
(:mod:`handreader.store.decks`). A new migration appends a :class:`Migration` with the next
number; a released one is never edited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["MIGRATIONS", "STORE_TABLE", "Migration"]

STORE_TABLE = "verification"
"""The store's own table, which every schema version has on both backends: a database
without it is no handreader store, whatever else it holds."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema version: its number, what it does, and its statements per dialect."""

    version: int
    description: str
    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...]

    def statements(self, dialect: Literal["sqlite", "postgresql"]) -> tuple[str, ...]:
        """The statements for ``dialect``."""
        return self.sqlite if dialect == "sqlite" else self.postgresql


_VERIFICATION_COLUMNS = """
    time_utc TEXT NOT NULL,
    image_sha256 TEXT NOT NULL CHECK (length(image_sha256) = 64),
    profile TEXT NOT NULL,
    verdict TEXT NOT NULL,
    reading TEXT NOT NULL,
    declared TEXT NOT NULL,
    computed TEXT NOT NULL,
    differences TEXT NOT NULL,
    record_sha256 TEXT NOT NULL
"""

_INDEXES = (
    "CREATE INDEX IF NOT EXISTS verification_time ON verification (time_utc)",
    "CREATE INDEX IF NOT EXISTS verification_verdict ON verification (verdict, time_utc)",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "the verification log; deck profiles on PostgreSQL",
        sqlite=(
            "CREATE TABLE IF NOT EXISTS verification ("
            "id INTEGER PRIMARY KEY AUTOINCREMENT," + _VERIFICATION_COLUMNS + ")",
            *_INDEXES,
        ),
        postgresql=(
            "CREATE TABLE IF NOT EXISTS verification (id BIGINT PRIMARY KEY CHECK (id > 0),"
            + _VERIFICATION_COLUMNS
            + ")",
            *_INDEXES,
            "CREATE TABLE IF NOT EXISTS deck_profile ("
            "name TEXT PRIMARY KEY, body TEXT NOT NULL, "
            "body_sha256 TEXT NOT NULL CHECK (length(body_sha256) = 64), "
            "updated_utc TEXT NOT NULL)",
        ),
    ),
)
"""Every schema version, oldest first."""
