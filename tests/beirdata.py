"""BEIR-layout dataset repos as ViDoRe publishes them (configs qrels / queries / corpus, parquet), for the fake Hub.

Shared by tests/test_vdr_gold_hub.py and bench/bench_hub_gold.py.
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq

README = b"""---
configs:
- config_name: corpus
  data_files:
  - split: test
    path: corpus/test-*.parquet
- config_name: queries
  data_files:
  - split: test
    path: queries/test-*.parquet
- config_name: qrels
  data_files:
  - split: test
    path: qrels/test-*.parquet
---
# A BEIR-layout test dataset
"""


def parquet(columns: dict) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table(columns), buf)
    return buf.getvalue()


def beir_files(qrels: list[tuple], corpus_ids: list | None = None, image: bytes = b"\x89PNG" * 100) -> dict[str, bytes]:
    """The repo's files for `qrels` ((query, doc, grade) rows). The corpus stands in for the page images
    (gigabytes on the real Hub, never to be fetched): by default one `image` per judged doc."""
    queries = sorted({q for q, _, _ in qrels}, key=str)
    docs = corpus_ids if corpus_ids is not None else sorted({d for _, d, _ in qrels}, key=str)
    return {
        "README.md": README,
        "qrels/test-00000-of-00001.parquet": parquet(
            {"query-id": [q for q, _, _ in qrels], "corpus-id": [d for _, d, _ in qrels], "score": [g for _, _, g in qrels]}
        ),
        "queries/test-00000-of-00001.parquet": parquet({"query-id": queries, "query": [f"question {q}" for q in queries]}),
        "corpus/test-00000-of-00001.parquet": parquet({"corpus-id": docs, "image": [image for _ in docs]}),
    }
