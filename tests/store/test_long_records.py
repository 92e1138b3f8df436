"""Records near the CSV size limit span DuckDB's read buffers and still load whole."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from clinseek.errors import IngestError
from clinseek.store import connect_store, ingest
from clinseek.store._csvload import BUFFER_BYTES, MAX_LINE_BYTES

_HEADER = "note_id,subject_id,hadm_id,note_type,note_seq,charttime,storetime,text\n"


def _note(seq: int, text: str) -> str:
    quoted = text.replace('"', '""')
    return f'10000032-DS-{seq},10000032,22841357,DS,{seq},2180-06-{seq:02d} 00:00:00,,"{quoted}"\n'


def _text(seq: int, size: int) -> str:
    line = f"note {seq}: words, commas, and a line\n"
    return (line * (size // len(line) + 1))[:size]


def _write(root: Path, rows: list[str]) -> Path:
    root.mkdir()
    with gzip.open(root / "discharge.csv.gz", "wt", compresslevel=1) as fh:
        fh.write(_HEADER + "".join(rows))
    (root / "radiology.csv").write_text(_HEADER)
    return root


def test_notes_longer_than_half_a_buffer_cross_buffer_boundaries(tmp_path: Path) -> None:
    # 3 MB, then two notes just under the limit: each starts inside one read buffer and ends in the next
    sizes = {1: 3 << 20, 2: MAX_LINE_BYTES - 4096, 3: 100, 4: MAX_LINE_BYTES - 4096, 5: 100}
    texts = {seq: _text(seq, n) for seq, n in sizes.items()}
    texts[3] = 'a "quoted" word,\n and a comma'
    sizes[3] = len(texts[3])
    assert BUFFER_BYTES <= 2 * (MAX_LINE_BYTES - 4096)  # the layout above really crosses buffers
    note = _write(tmp_path / "note", [_note(seq, t) for seq, t in texts.items()])
    out = tmp_path / "s.duckdb"
    report = ingest(out, note=note, progress=False)
    assert report.table("note.discharge").rows == len(sizes)
    con = connect_store(out)
    try:
        got = dict(con.execute("SELECT note_seq, text FROM note.discharge").fetchall())
    finally:
        con.close()
    assert {seq: len(t) for seq, t in got.items()} == sizes
    assert got == texts


def test_a_record_over_the_limit_is_a_clear_error(tmp_path: Path) -> None:
    note = _write(tmp_path / "note", [_note(1, "short"), _note(2, _text(2, MAX_LINE_BYTES + 1024))])
    out = tmp_path / "s.duckdb"
    with pytest.raises(IngestError, match="line size") as info:
        ingest(out, note=note, progress=False)
    assert info.value.path == note / "discharge.csv.gz"
    assert info.value.line == 3  # header, the short note, then the long one
