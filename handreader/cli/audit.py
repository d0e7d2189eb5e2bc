"""``handreader audit verify|checkpoint|rekey``: check the dealer's audit trail, sign its head.

Usage::

    handreader audit verify [--checkpoint FILE] [--json]
    handreader audit checkpoint [--out FILE]
    handreader audit rekey

The store is the service's (``HANDREADER_DATABASE_URL``, a ``postgresql://`` URL, else
``HANDREADER_AUDIT_DB``, else the data folder's SQLite file, which must exist: no action starts a
new trail, migrates one, or writes to a database that is not a handreader audit store, which is
refused in one line), the operator token ``HANDREADER_AUDIT_TOKEN``, the operator secret that
signs checkpoints ``HANDREADER_AUDIT_KEY``. ``verify`` checks every record (ids with no gap,
each hash following from the one before) and, with ``--checkpoint``, that the checkpoint's
signature holds and its record still has the head it signed; it prints the first bad or missing
record (or the checkpoint's signature that does not hold) and exits 1 when the trail does not
hold, 0 when it does. ``checkpoint`` prints (or writes) the head now, signed: keep it outside
the database, for instance after each shift. Both only read the database. With
``HANDREADER_AUDIT_KEY`` set, the records are chained under it (a keyed chain); ``rekey``
chains a trail kept without it under it, once the trail holds (sign a new checkpoint after).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from handreader.tables.wording import counted

__all__ = ["SETTINGS", "register", "run"]

SETTINGS = (
    "The store, token and secret come from the environment, as the service's: "
    "HANDREADER_DATABASE_URL (else HANDREADER_AUDIT_DB, else the data folder's SQLite file), "
    "HANDREADER_AUDIT_TOKEN (the operator token), HANDREADER_AUDIT_KEY (the operator secret)."
)
"""What every audit action reads, shown under each one's ``--help``."""


def register(subparsers: Any) -> None:
    """Add the ``audit`` command to the CLI."""
    parser = subparsers.add_parser(
        "audit",
        help="verify the dealer's audit trail, or sign a checkpoint of its head",
        description="Check the audit trail's chain (and a signed checkpoint), or sign its head.",
    )
    parser.epilog = SETTINGS
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = actions.add_parser(
        "verify", help="check every record (and a checkpoint)", epilog=SETTINGS
    )
    verify.add_argument("--checkpoint", type=Path, metavar="FILE", help="a signed checkpoint")
    verify.add_argument("--json", action="store_true", help="one JSON object")
    checkpoint = actions.add_parser(
        "checkpoint", help="sign the head of the trail now", epilog=SETTINGS
    )
    checkpoint.add_argument("--out", type=Path, metavar="FILE", help="write it here")
    rekey = actions.add_parser(
        "rekey", help="chain a trail kept without the operator secret under it", epilog=SETTINGS
    )
    for action in (verify, checkpoint, rekey):  # its usage errors name the action
        action.set_defaults(parser=action)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Verify the trail or sign a checkpoint (see the module docstring)."""
    from handreader.service.routes.verification import DB_ENV, AuditSettings
    from handreader.store.audit import KEY_ENV, AuditError, AuditLog, Checkpoint
    from handreader.store.audit_trail import ChainReport, CheckpointError

    settings = AuditSettings.from_env()  # (a database URL that does not read is refused there)
    if settings.token is None:
        raise ValueError("the audit trail needs the operator token: set HANDREADER_AUDIT_TOKEN")
    if settings.database_url is None and not settings.path.is_file():
        # an action on a trail never opens a new, empty one: a mistyped name would pass
        raise ValueError(
            f"no audit trail at {str(settings.path)!r}: the service starts it at its first "
            f"verification ({DB_ENV} names another file, HANDREADER_DATA another data folder)"
        )
    secret = os.environ.get(KEY_ENV) or None
    given = None
    if args.action == "verify" and args.checkpoint is not None:
        try:
            given = Checkpoint.from_dict(json.loads(args.checkpoint.read_text()))
        except OSError as error:
            raise ValueError(f"--checkpoint {str(args.checkpoint)!r}: {error.strerror}") from None
        except json.JSONDecodeError as error:
            raise ValueError(
                f"--checkpoint {str(args.checkpoint)!r}: not JSON ({error.msg})"
            ) from None
        except UnicodeDecodeError:
            raise ValueError(
                f"--checkpoint {str(args.checkpoint)!r}: not JSON (not UTF-8 text)"
            ) from None
        except RecursionError:  # (a checkpoint is one flat object)
            raise ValueError(
                f"--checkpoint {str(args.checkpoint)!r}: not a checkpoint (its JSON nests "
                "arrays or objects too deeply)"
            ) from None
    checking = args.action != "rekey"  # (verify and checkpoint open the store read-only)
    with AuditLog(settings.location, settings.token, create=False, read_only=checking) as log:
        if args.action == "rekey":
            count = log.rekey(settings.token)
            print(
                f"{counted(count, 'record')} chained under the operator secret: "
                "sign a new checkpoint"
                if count
                else "the trail is already chained under the operator secret"
            )
            return 0
        if args.action == "checkpoint":
            if secret is None:
                raise AuditError(f"a checkpoint needs the operator secret: set {KEY_ENV}")
            text = json.dumps(log.checkpoint(settings.token, secret).to_dict())
            if args.out is not None:
                args.out.write_text(text + "\n")
                print(f"checkpoint written to {args.out}")
            else:
                print(text)
            return 0
        try:
            report = log.verify(settings.token, given, secret)
        except CheckpointError as error:  # a forged or edited checkpoint: the check fails
            walked = log.verify(settings.token)
            problem = "; ".join(filter(None, (str(error), walked.problem)))
            report = ChainReport(walked.records, walked.head, walked.first_bad, problem)
    if args.json:
        print(json.dumps(report.to_dict()))
    elif report.ok:
        against = " and the checkpoint" if given is not None else ""
        print(f"the trail holds: {counted(report.records, 'record')}{against}, head {report.head}")
    else:
        print(f"the trail does not hold: {report.problem}")
    return 0 if report.ok else 1
