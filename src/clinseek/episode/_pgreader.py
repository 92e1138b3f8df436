"""The PostgreSQL store reader: sealed episodes from a live mimic-code database (:class:`~clinseek.store.PgSource`)."""

from __future__ import annotations

from typing import Any, ClassVar

import pyarrow as pa

from ..store import PgSource
from ._reader import StoreReader


class PostgresStoreReader(StoreReader):
    """A mimic-code PostgreSQL database as a source of sealed episodes (``open_store_reader("postgresql://...")``).

    Every read is the policy's SQL written for PostgreSQL (:class:`~clinseek.store.PgSource`): one
    patient's rows, masked and cut at the key's cutoff on the server, over a pool of read-only
    connections; the rows arrive as Arrow with the registry's types and are copied into the episode's
    own sealed DuckDB database, exactly as from a DuckDB store. The model never gets a PostgreSQL
    connection. The dictionaries are read once per reader (at their first use) and kept.

    Args:
        url: ``postgresql://user:password@host:port/database``; a role that may only read suffices.
        pool_size, connect_timeout_s, statement_timeout_s: see :class:`~clinseek.store.PgSource`.

    Raises:
        StoreError: the server cannot be reached or refuses the login, or the database is not a usable
            mimic-code build (a missing schema, table, column or grant): one line naming it.
        MissingExtraError: psycopg is not installed (the ``postgres`` extra).
    """

    dialect: ClassVar[str] = "postgres"

    def __init__(self, url: str, **options: Any) -> None:
        self._source = PgSource(url, **options)
        super().__init__(self._source.location, self._source.present)

    @property
    def source(self) -> PgSource:
        """The database reads go through."""
        return self._source

    def _arrow(self, sql: str, params: list[Any], *, what: str) -> pa.Table:
        self.check_open()
        return self._source.arrow(sql, params, what=what)

    def _tuples(self, sql: str, params: list[Any], *, what: str) -> list[tuple[Any, ...]]:
        self.check_open()
        return self._source.tuples(sql, params, what=what)

    def _release(self) -> None:
        self._source.close()
