"""Whether a valid file may join a track: the rules the Submit tab and pull-request review share.

Over plain data: the entries already on the track (board entries and the files of open pull requests),
the submitter, the time and the daily limit. A track ranks the same predictions once (duplicates by
fingerprint, the earliest kept), a system name belongs to the first submitter who used it (compared
normalised and case-folded), and a submitter adds at most SUBMISSIONS_PER_DAY files a UTC day. Each
surface words a refusal its own way (a status line in the Submit tab, a markdown comment on a pull
request); what is refused is decided here.

The Submit tab's daily limit is enforced by the store as it writes (store/policy.py counts the stored
file names under the store's lock, so two uploads at once cannot both pass); a pull request's files are
counted here, from the entries, since they reach the store only once merged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from .ranking import Entry, arrival
from .text import normalize_text


def name_key(name) -> str:
    """A system name as compared for uniqueness: normalised (NFKC, whitespace collapsed) and case-folded."""
    return normalize_text(name).casefold() if isinstance(name, str) else ""


@dataclass(frozen=True)
class Admission:
    """The entries of one track a new file is weighed against, and the daily limit."""

    track: str
    entries: Sequence[Entry]
    submissions_per_day: int

    def duplicate_of(self, fingerprint: str | None) -> Entry | None:
        """The earliest entry with these predictions; None when there is none (or no fingerprint to compare)."""
        same = [e for e in self.entries if fingerprint and e.summary.fingerprint == fingerprint]
        return min(same, key=arrival) if same else None

    def name_holder(self, user: str | None, name) -> Entry | None:
        """The first entry of another submitter whose system carries this name; None when the name is free."""
        wanted = name_key(name)
        if not wanted:
            return None
        return next((e for e in self.entries if e.user != user and name_key(e.system.get("name")) == wanted), None)

    def used_today(self, user: str | None, now: datetime) -> int:
        """The entries `user` submitted on the UTC day of `now`."""
        today = now.astimezone(UTC).date().isoformat()
        return sum(1 for e in self.entries if e.user == user and (e.submitted_at or "").startswith(today))

    def over_limit(self, used: int) -> bool:
        return used >= self.submissions_per_day
