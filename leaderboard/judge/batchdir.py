"""Batches as files in a folder, for a self-hosted judge run with vLLM's `run-batch` (JUDGE_BATCH_DIR).

vLLM's OpenAI-compatible server has no Files / Batches routes, but its
`vllm run-batch` reads and writes the same JSONL formats. With JUDGE_MODE=batch and
JUDGE_BATCH_DIR set, the batch judge writes each batch to
`<dir>/<batch id>.input.jsonl` and waits for `<dir>/<batch id>.output.jsonl`:

    vllm run-batch -i <id>.input.jsonl -o <id>.output.tmp --model <JUDGE_MODEL> && mv <id>.output.tmp <id>.output.jsonl

(the rename makes the output appear whole). Everything else — custom ids, strict
parsing, retries of failed or malformed lines in a follow-up batch, the verdict
cache, resuming after a restart — is the batch judge's, unchanged. This class
offers the few calls of the openai client the batch judge makes.

Its listing is always empty, and needs nothing more: a batch id here is its
upload's content (a hash of the bytes), so a batch made again after a lost
answer or a crash is the same batch, same input file and same output, never a
second one to pay for.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


class BatchDir:
    """`files.create`, `files.with_streaming_response.content`, `batches.create` / `retrieve` / `list` over a folder."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.files = SimpleNamespace(create=self._upload, with_streaming_response=SimpleNamespace(content=self._content))
        # nothing listed: the judge then makes the batch again, which lands on the same content-addressed id
        self.batches = SimpleNamespace(create=self._create, retrieve=self._retrieve, list=lambda **_: [])

    def _path(self, batch_id: str, kind: str) -> Path:
        if not _ID.match(batch_id):  # ids come back from the state file: never a path outside the folder
            raise ValueError(f"not a batch id: {batch_id[:80]!r}")
        return self.root / f"{batch_id}.{kind}.jsonl"

    def _upload(self, *, file: tuple[str, bytes], purpose: str) -> Any:
        data = file[1]
        file_id = "file-" + hashlib.sha256(data).hexdigest()[:24]
        _write(self.root / "uploads" / f"{file_id}.jsonl", data)
        return SimpleNamespace(id=file_id, bytes=len(data), purpose=purpose)

    def _create(self, *, input_file_id: str, endpoint: str, completion_window: str, metadata: dict | None = None) -> Any:
        batch_id = "local-" + input_file_id.removeprefix("file-")
        upload = self.root / "uploads" / f"{input_file_id}.jsonl"
        os.replace(upload, self._path(batch_id, "input"))
        return self._retrieve(batch_id)

    def _retrieve(self, batch_id: str) -> Any:
        output = self._path(batch_id, "output")
        done = output.is_file()
        with open(self._path(batch_id, "input"), "rb") as fh:
            total = sum(1 for line in fh if line.strip())
        return SimpleNamespace(
            id=batch_id,
            status="completed" if done else "in_progress",
            request_counts=SimpleNamespace(total=total, completed=total if done else 0, failed=0),
            output_file_id=f"{batch_id}.output" if done else None,
            error_file_id=None,
            errors=None,
        )

    @contextlib.contextmanager
    def _content(self, file_id: str) -> Iterator[Any]:
        batch_id = file_id.removesuffix(".output")
        with open(self._path(batch_id, "output"), "rb") as fh:
            yield SimpleNamespace(iter_bytes=lambda: iter(lambda: fh.read(1 << 16), b""))


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
