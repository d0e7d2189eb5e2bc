"""What is wrong with an upload the multipart parser refuses or misreads, in the client's terms.

The parser (python-multipart, through Starlette) says only ``Invalid multipart data.`` for a
part header over its limit, and reads a part whose file name is given only as RFC 5987
``filename*=`` as a text field; a form sent under another ``Content-Type`` is not parsed as
one at all. These helpers look at the raw body to name the problem:

- :func:`boundary`: the boundary a ``Content-Type`` names;
- :func:`looks_multipart`: whether a body begins as a multipart form (a boundary line, then a
  ``Content-Disposition`` header), for a body sent as JSON or as an image;
- :func:`oversized_part_header`: a part header line over :data:`MAX_PART_HEADER_BYTES` (the
  parser's limit), or more than :data:`MAX_PART_HEADERS` headers in a part;
- :func:`names_file_only_as_extended`: whether a field's part names its file only with
  ``filename*=``.
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_PART_HEADERS",
    "MAX_PART_HEADER_BYTES",
    "boundary",
    "looks_multipart",
    "multipart_sent_as",
    "names_file_only_as_extended",
    "oversized_part_header",
]

MAX_PART_HEADER_BYTES = 4096 + 128
"""The longest part header line the parser takes (python-multipart's default)."""
MAX_PART_HEADERS = 8
"""The most headers a part may have (python-multipart's default)."""

_START = re.compile(rb"\s*--[!-~]{1,200}\r?\n(?i:content-disposition)\s*:")
_BOUNDARY = re.compile(r'boundary=(?:"([^"]+)"|([^";]+))', re.IGNORECASE)


def boundary(content_type: str) -> bytes | None:
    """The boundary a ``Content-Type`` header names (``multipart/form-data; boundary=X``, the
    value maybe quoted, an unquoted one without the spaces around it, as the form parser reads
    it), as the body's bytes; None when it names none."""
    found = _BOUNDARY.search(content_type)
    if found is None:
        return None
    quoted, token = found.groups()
    named = quoted if quoted is not None else token.strip()
    return named.encode("latin-1") or None


def looks_multipart(head: bytes) -> bool:
    """Whether ``head``, a body's first bytes (a few hundred are enough), begins as a
    multipart form: ``--BOUNDARY`` on a line, then a ``Content-Disposition`` header."""
    return _START.match(head) is not None


def multipart_sent_as(kind: str) -> str:
    """The message for a multipart form sent with ``Content-Type: KIND``."""
    return (
        f"the body is a multipart form (it starts with a boundary line) sent with Content-Type: "
        f"{kind}: send it as multipart/form-data with its boundary (curl -F sets it; a "
        "-H 'Content-Type: ...' beside -F replaces it)"
    )


def _part_headers(body: bytes, content_type: str) -> list[list[bytes]]:
    """Each part's header lines, as far as the body and its boundary tell them."""
    named = boundary(content_type)
    if named is None:
        return []
    delimiter = b"--" + named
    parts = []
    for chunk in body.split(delimiter)[1:]:
        if chunk.startswith(b"--"):
            break
        head, _, _ = chunk.lstrip(b"\r\n").partition(b"\r\n\r\n")
        parts.append(head.split(b"\r\n"))
    return parts


def oversized_part_header(body: bytes, content_type: str) -> str | None:
    """A message naming a part header the parser refuses for its size or number, else None."""
    for lines in _part_headers(body, content_type):
        for line in lines:
            if len(line) > MAX_PART_HEADER_BYTES:
                name = line.split(b":", 1)[0].decode("latin-1")[:40]
                file_name = b"filename" in line.lower()
                what = " (its file name is that long: send a shorter one)" if file_name else ""
                return (
                    f"a multipart part header ({name}) of {len(line):,} bytes is over the limit "
                    f"of {MAX_PART_HEADER_BYTES:,} bytes{what}"
                )
        if len(lines) > MAX_PART_HEADERS:
            return (
                f"a multipart part has {len(lines)} headers, over the limit of {MAX_PART_HEADERS}"
            )
    return None


def names_file_only_as_extended(body: bytes, content_type: str, field: str) -> bool:
    """Whether the part of ``field`` names its file with ``filename*=`` (RFC 5987) and no
    plain ``filename=``, which the parser does not read (it takes the part for text)."""
    quoted = f'name="{field}"'.encode()
    for lines in _part_headers(body, content_type):
        for line in lines:
            lowered = line.lower()
            if lowered.startswith(b"content-disposition") and quoted in lowered:
                return b"filename*=" in lowered and re.search(rb";\s*filename=", lowered) is None
    return False
