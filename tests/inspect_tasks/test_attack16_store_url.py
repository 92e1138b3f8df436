"""attack16reach: ``-T store=postgresql://user:password@host/db`` (the form ``clinseek run --store`` takes).

The task read the URL as a file path and answered ``StoreError /cwd/postgresql:/reader:s3cret@127.0.0.1:1/mimiciv:
no such store file``: the password in the message (inspect keeps a task's error in its log), and the wrong
reason. The answer must say what to do, name the database without its password, and never print it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clinseek.errors import ClinseekError


@pytest.mark.parametrize("url", ["postgresql://reader:s3cret@127.0.0.1:1/mimiciv",
                                 "postgres://reader:s3cret@db.example.org/mimiciv?sslmode=require"])
def test_a_postgresql_store_is_refused_clearly_without_its_password(inspect_bench: Path, url: str) -> None:
    from clinseek.inspect_tasks import clinseek_text

    with pytest.raises(ClinseekError) as caught:
        clinseek_text(bench=str(inspect_bench), store=url)
    message = str(caught.value)
    assert "s3cret" not in message
    assert "reader@" in message and "clinseek data ingest --postgres" in message
    assert "no such store file" not in message
