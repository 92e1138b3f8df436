"""Rows out of PostgreSQL as Arrow: ``COPY (query) TO STDOUT`` in CSV, parsed by Arrow's streaming reader.

The server prints every value as text (floats exactly: ``extra_float_digits``), Arrow parses the text
straight into the registry's types block by block, so a whole table streams with memory bounded by
the block size, and a patient's rows come back as one Arrow table. The bytes are hashed on the way
(the provenance of an ingested table).
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.csv as pacsv

from ..schema import Table
from ._arrow import ARROW_TYPES

if TYPE_CHECKING:
    import psycopg

BLOCK_BYTES = 4 << 20
"""Bytes Arrow parses at a time (a record longer than this, such as a long discharge note, still parses)."""



def registry_arrow_schema(table: Table) -> pa.Schema:
    """The Arrow schema of a registry table: its columns in order, as Arrow types of the registry's DuckDB types."""
    return pa.schema([pa.field(c.name, ARROW_TYPES[c.type]) for c in table.columns])


class CopyStream(io.RawIOBase):
    """A readable byte stream over a running ``COPY ... TO STDOUT``: what Arrow's CSV reader reads.

    Attributes:
        sha256: the hash of every byte read so far.
        error: the exception the server connection raised while reading, if any (Arrow and DuckDB
            see only its text; the caller re-raises this one).
    """

    def __init__(self, chunks: Iterator[bytes | bytearray | memoryview]) -> None:
        super().__init__()
        self._chunks = chunks
        self._buffer = bytearray()
        self._done = False
        self.sha256 = hashlib.sha256()
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def _fill(self, size: int) -> None:
        """Read rows until ``size`` bytes are buffered or the copy ends."""
        buffer, chunks = self._buffer, self._chunks
        try:
            while len(buffer) < size and not self._done:
                chunk = next(chunks, None)
                if chunk is None:
                    self._done = True
                else:
                    buffer += chunk
        except BaseException as err:
            self.error = err
            raise

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        self._fill(len(view))
        n = min(len(view), len(self._buffer))
        view[:n] = self._buffer[:n]
        self.sha256.update(view[:n])
        del self._buffer[:n]
        return n

    def peek_empty(self) -> bool:
        """Whether the stream has no byte at all (reads ahead one row when needed)."""
        self._fill(1)
        return not self._buffer


def _options(schema: pa.Schema) -> tuple[pacsv.ReadOptions, pacsv.ParseOptions, pacsv.ConvertOptions]:
    read = pacsv.ReadOptions(column_names=schema.names, block_size=BLOCK_BYTES, use_threads=False)
    parse = pacsv.ParseOptions(delimiter=",", quote_char='"', double_quote=True, escape_char=False,
                               newlines_in_values=True)
    convert = pacsv.ConvertOptions(column_types=schema, null_values=[""], strings_can_be_null=True,
                                   quoted_strings_can_be_null=False, true_values=["t"], false_values=["f"])
    return read, parse, convert


@contextmanager
def copy_rows(
    con: psycopg.Connection[Any], query: str, params: Any, schema: pa.Schema
) -> Iterator[tuple[pa.RecordBatchReader, CopyStream]]:
    """Run ``COPY (query) TO STDOUT (FORMAT csv)`` and read its rows as Arrow batches of ``schema``.

    ``params`` are bound client-side (COPY takes no server-side parameters). The reader must be
    consumed inside the ``with`` block.

    Raises:
        psycopg.Error: the server refused the query or the connection failed (also later, while the
            reader is consumed: then :attr:`CopyStream.error` holds it).
        pyarrow.ArrowInvalid: a value does not parse as its column's type (see :func:`arrow_error_column`).
    """
    with con.cursor() as cur, cur.copy(f"COPY ({query}) TO STDOUT (FORMAT csv)", params) as copy:
        stream = CopyStream(iter(copy))
        if stream.peek_empty():
            yield pa.RecordBatchReader.from_batches(schema, iter(())), stream
            return
        read, parse, convert = _options(schema)
        yield pacsv.open_csv(stream, read_options=read, parse_options=parse,
                             convert_options=convert), stream


_COLUMN = re.compile(r"In CSV column #(\d+): (.*)", re.DOTALL)


def arrow_error_column(err: BaseException, schema: pa.Schema) -> tuple[str | None, str]:
    """``(column name, problem)`` of an Arrow CSV conversion error (``None`` when it names no column)."""
    found = _COLUMN.search(str(err))
    if found is None:
        return None, str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    index = int(found.group(1))
    name = schema.names[index] if index < len(schema.names) else None
    return name, found.group(2).strip().splitlines()[0]
