"""Offline knowledge index: corpus generation, index build, cached load, query latency and top-3 hits.

Prints wall time and process CPU time (a busy machine inflates wall time, not CPU) for: generating
the bundled corpus, building the BM25 index, saving it, loading it back from the cache, and p50 /
p95 latency of ``Knowledge.search`` over a set of clinical look-ups (with whether the expected
entry is in the top 3). Target (issue 9): the index builds in seconds and is reused from disk.
Run: ``.venv/bin/python benchmarks/knowledge.py [--store path/to/store.duckdb] [--repeats 20]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clinseek.knowledge import (
    CorpusSpec,
    KnowledgeConfig,
    KnowledgeIndex,
    corpus_documents,
    corpus_version,
    open_knowledge,
)

LOOKUPS = {
    "CCS category of ICD-10 I50.23": "clinseek-kb://icd10cm/I5023",
    "CCS category of ICD-9 428.0": "clinseek-kb://icd9cm/4280",
    "reference range of potassium": "clinseek-kb://labs/50971",
    "serum creatinine reference range": "clinseek-kb://labs/50912",
    "lactate": "clinseek-kb://labs/50813",
    "heart rate ICU item": "clinseek-kb://icu_items/220045",
    "MedMod phenotype septicemia": "clinseek-kb://phenotype/septicemia-except-in-labor",
    "pneumonia J18.9 CCS": "clinseek-kb://icd10cm/J189",
}


def _timed(label: str, fn: Callable[[], Any]) -> Any:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    print(f"{label:<34} wall {time.perf_counter() - wall:7.2f} s   cpu {time.process_time() - cpu:7.2f} s")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    spec = CorpusSpec(store=args.store)
    docs = _timed("generate corpus", lambda: list(corpus_documents(spec)))
    print(f"{'documents':<34} {len(docs):,}   characters {sum(len(d.text) for d in docs):,}")
    index = _timed("build BM25 index", lambda: KnowledgeIndex.build(docs, corpus_version(spec)))
    with tempfile.TemporaryDirectory() as tmp:
        _timed("save index", lambda: index.save(Path(tmp) / "index"))
        _timed("load index from disk", lambda: KnowledgeIndex.load(Path(tmp) / "index"))
        config = KnowledgeConfig(cache_dir=Path(tmp) / "cache", store=args.store)
        _timed("open_knowledge (cold: build+save)", lambda: open_knowledge(config))
        knowledge = _timed("open_knowledge (warm: load)", lambda: open_knowledge(config))
    for query, url in LOOKUPS.items():
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            results, _ = knowledge.search(query, 10)
            times.append((time.perf_counter() - started) * 1000)
        top3 = [r.url for r in results[:3]]
        p95 = statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]
        print(f"{query:<40} p50 {statistics.median(times):6.1f} ms  p95 {p95:6.1f} ms  "
              f"top3 {'yes' if url in top3 else 'NO '}")


if __name__ == "__main__":
    main()
