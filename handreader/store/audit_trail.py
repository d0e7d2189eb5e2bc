"""What checking the audit trail gives (:meth:`handreader.store.audit.AuditLog.verify`): a
report naming the first bad or missing record, and the signed checkpoints of the chain's head
that an operator keeps outside the database (re-exported by :mod:`handreader.store.audit`)."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from handreader.store.database import StoreError

__all__ = ["AuditAuthError", "AuditError", "ChainReport", "Checkpoint"]

_HEX64 = re.compile(r"[0-9a-f]{64}")


class AuditError(StoreError):
    """The audit log cannot do what was asked: bad record, bad filter, unusable database."""


class AuditAuthError(AuditError):
    """The operator token is missing or wrong, or none is configured."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The head of the chain at a moment: how many records, the last one's hash, and the
    HMAC-SHA256 of both under the operator secret (kept outside the database)."""

    count: int
    head: str
    signature: str

    @staticmethod
    def sign(count: int, head: str, secret: str) -> str:
        """The signature of ``count`` records ending in ``head``."""
        message = f"handreader-audit:{count}:{head}".encode("ascii")
        return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()

    def to_dict(self) -> dict[str, object]:
        """JSON form (what an operator keeps)."""
        return {"count": self.count, "head": self.head, "signature": self.signature}

    @classmethod
    def from_dict(cls, value: object) -> Checkpoint:
        """A checkpoint from its JSON form; AuditError naming what is wrong."""
        if not isinstance(value, dict):
            raise AuditError("a checkpoint is a JSON object with count, head and signature")
        count, head, signature = value.get("count"), value.get("head"), value.get("signature")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise AuditError(f"checkpoint count must be a whole number, got {count!r}")
        for name, text in (("head", head), ("signature", signature)):
            if not isinstance(text, str) or not _HEX64.fullmatch(text):
                raise AuditError(f"checkpoint {name} must be 64 hex digits, got {text!r}")
        return cls(count, str(head), str(signature))


@dataclass(frozen=True, slots=True)
class ChainReport:
    """What :meth:`AuditLog.verify` found: the records read, the head hash, and the first
    record that is bad or missing with the reason (None, None when the trail holds)."""

    records: int
    head: str
    first_bad: int | None
    problem: str | None

    @property
    def ok(self) -> bool:
        """Whether the trail holds."""
        return self.problem is None

    def to_dict(self) -> dict[str, object]:
        """JSON form (the route's answer)."""
        return {
            "ok": self.ok,
            "records": self.records,
            "head": self.head,
            "first_bad": self.first_bad,
            "problem": self.problem,
        }
