"""The audit log's CSV export as a stream: the answer of ``GET /v1/audit?format=csv``.

:class:`HeldChunks` gives back the worker's one long read (``AuditLogHolder.stream``) when the
last chunk is taken, the stream is closed or it is dropped. :class:`ExportResponse` streams
the chunks; a store error after the first chunk (the database gone mid-export) is logged in
one line and the connection closed without the stream's end, so that a client sees an
incomplete answer (curl: "transfer closed with outstanding read data remaining"), never a
short CSV it would take for the whole trail.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from starlette.responses import StreamingResponse
from starlette.types import Send

from handreader.store.database import StoreError

__all__ = ["ExportResponse", "HeldChunks"]

LOG = logging.getLogger("handreader.serve")


class HeldChunks:
    """``chunks``, calling ``release`` once when they end, fail, are closed or dropped."""

    def __init__(self, chunks: Iterator[str], release: Callable[[], None]) -> None:
        self._chunks = chunks
        self._release: Callable[[], None] | None = release

    def __iter__(self) -> HeldChunks:
        return self

    def __next__(self) -> str:
        try:
            return next(self._chunks)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Give back what the stream holds (once)."""
        release, self._release = self._release, None
        if release is not None:
            release()

    def __del__(self) -> None:
        self.close()


class ExportResponse(StreamingResponse):
    """A streamed export cut off, not ended, by a store error (see the module)."""

    async def stream_response(self, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        sent = 0
        try:
            async for chunk in self.body_iterator:
                data = chunk if isinstance(chunk, bytes) else str(chunk).encode(self.charset)
                await send({"type": "http.response.body", "body": data, "more_body": True})
                sent += len(data)
        except StoreError as error:
            LOG.error("GET /v1/audit export cut off after %d bytes: %s", sent, error)
            return  # (the server closes the connection: the answer has no end)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
