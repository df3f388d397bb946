"""Validation problems: every one says where (line / record id), which field, and what was expected."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_REPORTED = 200  # a file with 10,000 broken lines gets 200 lines and a count, not a wall


@dataclass(frozen=True)
class Problem:
    where: str  # "line 12", "predictions[3]", "header", "file"
    message: str
    record: str | None = None  # the record's id when it has one
    field: str | None = None

    def __str__(self) -> str:
        parts = [self.where]
        if self.record is not None:
            parts.append(f"id {self.record}")
        if self.field:
            parts.append(f"field {self.field}")
        return f"{', '.join(parts)}: {self.message}"


@dataclass
class Problems:
    """Collects errors (reject the file) and warnings (accept, but tell)."""

    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    error_count: int = 0
    warning_count: int = 0

    def error(self, where: str, message: str, record=None, field=None) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_REPORTED:
            self.errors.append(Problem(where, message, None if record is None else str(record), field))

    def add(self, problem: Problem) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_REPORTED:
            self.errors.append(problem)

    def warn(self, where: str, message: str, record=None, field=None) -> None:
        self.warning_count += 1
        if len(self.warnings) < MAX_REPORTED:
            self.warnings.append(Problem(where, message, None if record is None else str(record), field))

    @property
    def ok(self) -> bool:
        return self.error_count == 0

    def lines(self, which: str = "errors") -> list[str]:
        items, count = (self.errors, self.error_count) if which == "errors" else (self.warnings, self.warning_count)
        out = [str(p) for p in items]
        if count > len(items):
            out.append(f"... and {count - len(items):,} more")
        return out


class ProblemLines:
    """Problems already worded as lines (the converters'): the first MAX_REPORTED kept, every one counted,
    as `Problems` does for validate, so ten million bad lines cost 200 strings and a number."""

    def __init__(self, lines=()) -> None:
        self.kept: list[str] = []
        self.count = 0
        for line in lines:
            self.append(line)

    def append(self, line: str) -> None:
        self.count += 1
        if len(self.kept) < MAX_REPORTED:
            self.kept.append(line)

    def __len__(self) -> int:
        return self.count

    def lines(self) -> list[str]:
        more = self.count - len(self.kept)
        return self.kept + ([f"... and {more:,} more"] if more else [])


class SubmissionError(Exception):
    """The file cannot be read at all (size cap, encoding, JSON syntax)."""

    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem
