"""Where submissions live: a Hugging Face dataset repo (HubStore) or a local folder (LocalStore).

    from leaderboard.store import open_store, Refresher
    store = open_store(settings.store)   # the Settings' store section; local folder by default
    refresher = Refresher(store, interval=300, on_snapshot=rescore_changed).start()

See naming.py for the repo layout, settings.py for the store's settings (every environment
variable is declared in leaderboard/environment.py) and hub.py for the parts of HubStore.
HubStore is imported lazily so the local default does not load huggingface_hub.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Store
from .errors import (
    DuplicateSubmission,
    InvalidName,
    RateLimited,
    StoreError,
    StoreMisconfigured,
    StoreUnavailable,
    redact,
)
from .local import LocalStore
from .model import Snapshot, SubmissionFile
from .refresher import Refresher, RefreshError
from .settings import StoreSettings
from .submit import Report, SubmitStatus, submit_checked

if TYPE_CHECKING:
    from .hub import HubStore

__all__ = [
    "DuplicateSubmission",
    "HubStore",
    "InvalidName",
    "LocalStore",
    "RateLimited",
    "RefreshError",
    "Refresher",
    "Report",
    "Snapshot",
    "Store",
    "StoreError",
    "StoreSettings",
    "StoreMisconfigured",
    "StoreUnavailable",
    "SubmissionFile",
    "SubmitStatus",
    "open_store",
    "redact",
    "submit_checked",
]


def __getattr__(name: str):
    if name == "HubStore":
        from .hub import HubStore

        return HubStore
    raise AttributeError(name)


def open_store(settings: StoreSettings, demo_tracks=None) -> Store:
    """The store the settings ask for: HubStore when SUBMISSIONS_REPO is set, else LocalStore.

    `demo_tracks`: the tracks whose bundled demo submissions a LocalStore lists (None: all).
    """
    if settings.backend == "hub":
        from .hub import HubStore

        return HubStore(
            settings.submissions_repo,
            token=settings.hf_token,
            endpoint=settings.hf_endpoint,
            results_repo=settings.results_repo,
            cache_dir=settings.hub_cache_dir,
            submissions_per_day=settings.submissions_per_day,
            timeout=settings.hub_timeout,
            auto_merge=settings.auto_merge,
            pr_close_after_days=settings.pr_close_after_days,
        )
    return LocalStore(
        settings.local_root,
        demo_dir=settings.demo_dir,
        submissions_per_day=settings.submissions_per_day,
        demo_tracks=demo_tracks,
    )
