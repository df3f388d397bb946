"""The About tab: how the board works, then one section per track generated from its declarations."""

from __future__ import annotations

from .. import reported
from ..metrics.stats import RESAMPLES
from ..scoring import METRIC_VERSION
from ..submission import DEFAULT_MAX_BYTES
from ..tracks import TRACKS, Track
from ..tracks.base import DEMO_GOLD
from . import protocol_html

DEMO_SUBMISSIONS = DEMO_GOLD.parent / "submissions"


def _example(track: Track) -> str:
    """The first lines of a bundled demo submission, as the format example."""
    files = sorted(p for p in (DEMO_SUBMISSIONS / track.name).glob("*.jsonl"))
    if not files:
        return ""
    lines = files[0].read_text(encoding="utf-8").splitlines()[:3]
    clipped = [line if len(line) < 400 else line[:400] + " …" for line in lines]
    return "```json\n" + "\n".join(clipped) + "\n```"


def track_section(track: Track) -> str:
    metrics = "\n".join(
        f"| {m.label} | `{m.key}` | {m.description} | {'yes' if m.has_ci else 'no (no sampling error)'} |" for m in track.metrics
    )
    axes = ", ".join(f"{a.label.lower()} (`{a.key}`)" for a in track.axes)
    fields = ", ".join(f"`{f.key}`{' (required)' if f.required else ''}" for f in track.system_fields)
    return f"""### {track.title} (`{track.name}`)

{track.description}

| metric | key | what it measures | 95% CI |
|---|---|---|---|
{metrics}

Ranked by **{track.metric(track.rank_by).label}**. Breakdowns: {axes}. System metadata: {fields}.

**The benchmark's own script.** {protocol_html.about_markdown(track)}

Example submission (first lines of a bundled demo file):

{_example(track)}
"""


def judge_differences() -> str:
    """Each judged track's declared differences from its benchmark's judge script, as a nested list."""
    out = []
    for t in TRACKS.values():
        if t.judge_deviations:
            items = "".join(
                f"\n  - `{d.name}`: the script {d.script}; the board {d.board}, as {d.why}." for d in t.judge_deviations
            )
            out.append(
                f"\n  {t.title}: the judge asks what the benchmark's script asks (the claims a text uses to answer the question), and differs from it so:{items}"
            )
    return "".join(out)


def about_markdown() -> str:
    sections = "\n".join(track_section(t) for t in TRACKS.values())
    resampling = "; ".join(f"{t.title}: {t.resampling}" for t in TRACKS.values())  # each track declares its design
    judged = ", ".join(dict.fromkeys(m.label.lower() for t in TRACKS.values() for m in t.judged_metrics)) or "none here"
    return f"""## How this board works

Every number is **recomputed** from the raw predictions of each submission by one shared metric
module (metric version {METRIC_VERSION}); scores a submitter reports are ignored. Results are cached by the
content hash of the submission, the gold and the metric version, so an unchanged submission is never
rescored and a change of gold or metric rescores everything.

- **Uncertainty**: every headline number has a 95% percentile bootstrap interval ({RESAMPLES:,} resamples,
  `numpy.random.default_rng(0)`) over each track's own units: {resampling}.
- **Rank (CI)**: the best rank a system can claim given the intervals: 1 + the number of systems whose
  lower bound is above its upper bound.
- **Tie band**: systems whose intervals overlap share a band (shaded in the table, "1–3"): a band runs from its
  best system down to the last one whose interval overlaps that system's. The strip above each table names the
  leader on the ranking and headline metrics, how many systems tie with it by that criterion, the paired test
  against the runner-up, and the best reported figure beside it.
- **Compare**: a paired bootstrap over the units both systems answered; significant when the 95% interval
  of the difference excludes 0. Its two-sided p is twice the smaller share of replicates on one side of 0: when
  none crosses 0 it is shown as "< 0.002" (2 / 1,000 resamples), the finest the bootstrap can tell.
- **Missing units** score 0 and are counted; a submission is validated as a whole and rejected with every
  problem listed (line, record id, field, what was expected). Files up to {DEFAULT_MAX_BYTES // 2**20} MiB
  (decompressed): `.json`, `.jsonl`, optionally gzipped.
- **Scores: board / official script**: each track tab can show every system scored as the benchmark's own
  script scores it, computed with the board's scores when a file is scored (ranks and intervals within the
  chosen scores; judged metrics are the same under both). Reported rows are figures of the official scripts:
  with *official script* chosen they compare like for like. Each track's section lists where the board differs.
- **Judged metrics** ({judged}) show which judge produced them; `≈` marks the offline
  lexical judge, an approximation. The board never mixes judges in one ranking.{judge_differences()}
- **Shared results**: from its results repo the board takes back only the LLM judge's verdicts and
  recomputes every number from them and the submission, so whoever can write that repo can forge a verdict,
  never a score.

A submission is one file: `.jsonl` with a header line `{{"track": ..., "system": {{...}}}}` then one prediction
per line, or `.json` `{{"track", "system", "predictions": [...]}}`. Check it before submitting with
`python -m leaderboard validate FILE`; rescore it with `python -m leaderboard score FILE --json`.

{sections}

## Reported results and their sources

Beside the rescored systems, tables and charts show **reported** rows: figures that papers and public
result repositories publish, copied with their provenance into `assets/reported/` and never recomputed.
They carry a "reported" badge, their source on hover and in the System tab, no confidence interval and no
rank; they are never in a paired test nor in "Rank (CI)". Compare sets one against a rescored system on the
metrics both have, as differences only (no significance test). A toggle hides them; the CSV export marks
them in its `reported` column with their `source`.

{reported.about_markdown()}
"""
