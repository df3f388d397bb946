"""The Hub calls every part of HubStore makes, and the one place Hub errors become store errors.

Calls used (all repo_type="dataset"): dataset_info (head commit), list_repo_tree
(listings with blob and tree ids), hf_hub_download (into our own cache folder),
create_commit, create_repo and whoami.

Every operation starts with dataset_info: it is the one call huggingface_hub
does not retry with backoff, so a Hub that is down or answering 5xx is
reported at once instead of after ~20 s of retries.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2  # huggingface_hub's HTTP library: its exceptions are what a dead network raises
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub import constants as hf_constants
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoFile
from huggingface_hub.utils.tqdm import silent_tqdm

from . import hub_http
from .errors import StoreError, StoreMisconfigured, StoreUnavailable, redact

REPO_TYPE = "dataset"


def http_status(exc: HfHubHTTPError) -> int | None:
    return exc.response.status_code if exc.response is not None else None


class HubClient:
    """One configured huggingface_hub client (endpoint, token, timeout, revision) shared by pull, submit, results."""

    def __init__(
        self,
        repo_id: str,
        token: str | None,
        endpoint: str | None,
        downloads_dir: Path,
        *,
        timeout: float,
        revision: str,
    ):
        self.repo_id = repo_id  # the submissions repo: what an error names unless told otherwise
        self.endpoint = (endpoint or hf_constants.ENDPOINT).rstrip("/")
        self.timeout = timeout
        self.revision = revision
        self.token = token or None
        self.downloads_dir = downloads_dir
        hub_http.install_request_timeout(timeout)
        # token=False when unset: use exactly the configured token, never one lying in ~/.cache.
        self.api = HfApi(endpoint=self.endpoint, token=self.token or False, library_name="open-rag-leaderboard")

    @contextmanager
    def errors(self, action: str, repo_id: str | None = None) -> Iterator[None]:
        """Turn whatever the Hub client raises into StoreUnavailable (or StoreMisconfigured) with a safe, short message."""
        repo = repo_id or self.repo_id
        try:
            with hub_http.single_attempt():
                yield
        except StoreError:
            raise
        except RepositoryNotFoundError:
            raise StoreUnavailable(
                f"Hugging Face Hub: dataset repo {repo} not found or not accessible with the configured token (while {action})"
            ) from None
        except RevisionNotFoundError:
            raise StoreUnavailable(f"Hugging Face Hub: revision {self.revision!r} of {repo} not found (while {action})") from None
        except HfHubHTTPError as exc:
            status = http_status(exc)
            if status in (401, 403):  # a secret to fix, not an outage: never "retry later"
                raise StoreMisconfigured(
                    f"HF_TOKEN rejected by the Hub: check the Space secret (HTTP {status} while {action} {repo})"
                ) from None
            if status is not None and status >= 500:
                reason = f"server error (HTTP {status})"
            else:
                reason = f"HTTP {status}"
            detail = redact(exc.server_message or "", self.token).strip().splitlines()
            if detail:
                reason += f": {detail[0][:200]}"
            raise StoreUnavailable(f"Hugging Face Hub unavailable while {action} ({repo}): {reason}") from None
        except (httpx2.TimeoutException, hub_http.NotResent):
            raise StoreUnavailable(
                f"Hugging Face Hub unavailable while {action} ({repo}): no answer from {self.endpoint} within {self.timeout:g} s"
            ) from None
        except (httpx2.HTTPError, OfflineModeIsEnabled, EntryNotFoundError) as exc:
            # ConnectError, RemoteProtocolError, ...; EntryNotFound here is hf_hub_download's
            # "could not reach the Hub and the file is not cached" (LocalEntryNotFoundError).
            raise StoreUnavailable(
                f"Hugging Face Hub unavailable while {action} ({repo}): cannot reach {self.endpoint} ({type(exc).__name__})"
            ) from None
        except (OSError, ValueError) as exc:
            # Local disk trouble or a malformed answer: still "keep serving the last snapshot".
            raise StoreUnavailable(f"store error while {action} ({repo}): {redact(exc, self.token)[:300]}") from None

    def head(self, repo_id: str) -> str:
        # expand: only the head sha, not the list of every file the repo holds.
        info = self.api.dataset_info(repo_id, revision=self.revision, timeout=self.timeout, expand=["sha"])
        if not info.sha:
            raise StoreUnavailable(f"Hugging Face Hub returned no commit for {repo_id}")
        return info.sha

    def list_files(self, repo_id: str, revision: str, under: str | None = None) -> dict[str, RepoFile]:
        """Every file under `under` at `revision` (recursive), by path; {} when the folder does not exist yet."""
        try:
            items = list(
                self.api.list_repo_tree(repo_id, path_in_repo=under, recursive=True, revision=revision, repo_type=REPO_TYPE)
            )
        except EntryNotFoundError:
            return {}
        return {item.path: item for item in items if isinstance(item, RepoFile)}

    def list_tree(self, repo_id: str, revision: str, under: str | None = None, *, recursive: bool = False):
        """Files and folders (with their git tree ids) under `under`, one level deep unless `recursive`."""
        return self.api.list_repo_tree(repo_id, path_in_repo=under, recursive=recursive, revision=revision, repo_type=REPO_TYPE)

    def download(self, repo_id: str, path: str, revision: str, force: bool = False) -> Path:
        with hub_http.single_attempt():  # also in the pull's download threads
            return Path(
                hf_hub_download(
                    repo_id,
                    path,
                    repo_type=REPO_TYPE,
                    revision=revision,
                    cache_dir=str(self.downloads_dir),
                    token=self.token or False,
                    endpoint=self.endpoint,
                    etag_timeout=self.timeout,
                    tqdm_class=silent_tqdm,
                    force_download=force,
                )
            )

    def create_repo(self, repo_id: str, private: bool | None = None) -> None:
        self.api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)

    def commit(self, repo_id: str, operations: list, message: str, parent_commit: str | None = None) -> None:
        """One commit on the configured revision; `parent_commit` makes the Hub refuse it if the head moved."""
        self.api.create_commit(
            repo_id,
            operations=operations,
            commit_message=message,
            repo_type=REPO_TYPE,
            revision=self.revision,
            parent_commit=parent_commit,
        )

    def whoami(self) -> str:
        if not self.token:
            raise StoreUnavailable("no HF_TOKEN configured")
        return self.api.whoami()["name"]
