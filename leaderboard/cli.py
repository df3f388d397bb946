"""python -m leaderboard: validate, score, submit, convert, demo.

Bad input is reported as one line per problem and exit 1; a Python traceback
is never the answer to a broken submission. Exit 2: the gold or the judge is
misconfigured, or an argument cannot be used (convert's --system-json, --out);
exit 3: an internal error (its traceback goes to a file); exit 4: batch judging
did not finish (a batch still running, or the batch service failed): run the
same command again to resume it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .problems import SubmissionError
from .scoring import check, content_hash, judge_checked, score_checked
from .submission import DEFAULT_MAX_BYTES, read_file
from .tracks import TRACKS

if TYPE_CHECKING:
    from .settings import Settings


def _settings() -> Settings:
    """The one Settings, from the environment (read here and in app.py only); a bad value: one line, exit 2."""
    from .settings import Settings
    from .tracks import beir_hub

    try:
        settings = Settings.from_env(os.environ)
    except ValueError as exc:
        print(f"settings: {exc}", file=sys.stderr)
        sys.exit(2)
    beir_hub.use(settings.hub_access())  # before any gold is loaded
    return settings


def _read(path: str, max_bytes: int) -> bytes:
    try:
        return read_file(Path(path), max_bytes)
    except SubmissionError as exc:
        _fail([str(exc.problem)])
    except OSError as exc:
        _fail([f"file: cannot read {path}: {exc.strerror}"])


def _fail(lines: list[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr)
    sys.exit(1)


def _check(args):
    settings = args.settings()  # also where gold from the Hub is kept, with or without --gold
    data = _read(args.submission, args.max_bytes)
    gold = {name: args.gold for name in TRACKS} if args.gold else settings.gold
    try:
        checked = check(data, Path(args.submission).name, gold, args.max_bytes)
    except (FileNotFoundError, KeyError, ValueError) as exc:  # gold, not the submission, is broken
        print(f"gold: {exc}", file=sys.stderr)
        sys.exit(2)
    return data, checked


def cmd_validate(args) -> None:
    _, checked = _check(args)
    for w in checked.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not checked.ok:
        _fail(checked.errors)
    print(f"valid: track {checked.track_name}, {checked.records} predictions")


def _make_judge(settings: Settings, kind: str | None, batch: bool = False, dry_run: bool = False):
    if kind in (None, "none"):
        if batch:
            print("judge: --batch needs a judge (--judge openai)", file=sys.stderr)
            sys.exit(2)
        return None
    from .judge import JudgeConfigError, make_judge

    if batch and kind != "openai":
        print(f"judge: --batch is for the openai judge, not {kind}", file=sys.stderr)
        sys.exit(2)
    try:
        mode = {"mode": "batch"} if batch else {}
        return make_judge(kind, **{**settings.judge_kwargs(), **mode}, **({"estimate_only": True} if dry_run else {}))
    except JudgeConfigError as exc:
        print(f"judge: {exc}", file=sys.stderr)
        sys.exit(2)


def cmd_score(args) -> None:
    paths = [args.submission, *getattr(args, "more", [])]
    checked_files = []
    for path in paths:  # every file checked before any judging: a bad one costs nothing
        data, checked = _check(argparse.Namespace(**{**vars(args), "submission": path}))
        if not checked.ok:
            _fail([f"{path}: {e}" for e in checked.errors] if len(paths) > 1 else checked.errors)
        checked_files.append((data, checked))
    settings = args.settings()
    judge = _make_judge(settings, args.judge or settings.judge, args.batch, args.dry_run)
    if judge is not None and args.dry_run:
        for _, checked in checked_files:
            items = checked.track.judge_items(checked.parsed, checked.gold)
            est = judge.estimate(items)
            cost = _estimated_cost(est, settings.judge_price_per_mtok, hasattr(judge, "judge_groups"))
            print(json.dumps({"judge": judge.name, "answers": len(items), **est, **cost}))
        return
    if judge is None:
        results = [score_checked(checked, content_hash(data), None).summary for data, checked in checked_files]
    else:
        results = _score_judged(judge, checked_files)
        if getattr(judge, "approximate", False):
            print(f"note: {judge.description}", file=sys.stderr)
    for result, (_, checked) in zip(results, checked_files, strict=True):
        _print_result(result, args, checked)


# The Batch API's price: half of the live calls' (docs/JUDGE.md)
BATCH_PRICE_SHARE = 0.5


def _estimated_cost(est: dict, price_per_mtok: tuple[float, float] | None, batch: bool) -> dict:
    """{"cost_usd": dollars, "price_per_mtok": [in, out], "batch_price": bool} of an estimate's tokens at
    JUDGE_PRICE_PER_MTOK ({} when it is unset: the tokens alone, no price guessed)."""
    if price_per_mtok is None or "prompt_tokens" not in est:
        return {}
    prompt, completion = price_per_mtok
    dollars = (est["prompt_tokens"] * prompt + est["completion_tokens"] * completion) / 1e6
    share = BATCH_PRICE_SHARE if batch else 1.0
    return {"cost_usd": round(dollars * share, 6), "price_per_mtok": [prompt, completion], "batch_price": batch}


def _score_judged(judge, checked_files) -> list:
    """Scores with the judge; in batch mode every file's answers go in one batch run (one batch per round)."""
    from .judge import BatchError, TqdmProgress

    batch = judge.mode == "batch"
    with TqdmProgress(f"judging with {judge.name}", disable=None) as progress:
        try:
            if batch and len(checked_files) > 1:
                groups = [c.track.judge_items(c.parsed, c.gold) for _, c in checked_files]
                judged = judge.judge_groups(groups, _one_bar(progress, [len(g) for g in groups]))
                return [score_checked(c, content_hash(d), v).summary for (d, c), v in zip(checked_files, judged, strict=True)]
            return [score_checked(c, content_hash(d), judge_checked(judge, c, progress)).summary for d, c in checked_files]
        except BatchError as exc:  # batch mode: refused, unreachable, or still running (a re-run resumes it)
            print(f"judge: {exc}", file=sys.stderr)
            sys.exit(4)
        except KeyboardInterrupt:
            if not batch:
                raise
            print("judge: interrupted; the batch keeps running: run the same command again to resume", file=sys.stderr)
            sys.exit(4)


def _one_bar(bar, totals: list[int]) -> list:
    """Per-file progress callables feeding one bar: answers done over all files, and the batch being polled."""
    done = [0] * len(totals)

    def part(i: int):
        def report(n: int, _total: int) -> None:
            done[i] = n
            bar(sum(done), sum(totals))

        if i == 0:  # the run's batches are every file's: shown once
            report.on_batch = bar.on_batch  # type: ignore[attr-defined]
        return report

    return [part(i) for i in range(len(totals))]


def _print_result(summary, args, checked) -> None:
    from .protocols import cli_output

    track = TRACKS[summary.track]
    protocol = getattr(args, "protocol", "board")
    out = cli_output(track, checked.parsed, checked.gold, summary, protocol)
    out["judge"] = summary.judge
    if summary.judge_ledger is not None:
        out["judge_ledger"] = summary.judge_ledger
    if args.json:  # one JSON object per line, one line per file
        json.dump(out, sys.stdout, ensure_ascii=False)
        print()
        return
    result = {"system": summary.system, **{k: out[k] for k in ("n", "missing", "overall", "ci")}}
    scored_as = " (as the official script scores it)" if protocol == "official" else ""
    print(f"{result['system'].get('name', '?')} on {track.title}{scored_as}: {result['n']} units, {result['missing']} missing")
    for m in track.metrics:
        if isinstance(result["overall"].get(m.key), (int, float)):
            lo_hi = result["ci"].get(m.key)
            ci = f"  [{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]" if lo_hi else ""
            print(f"  {m.label:<24} {result['overall'][m.key]:.3f}{ci}")
        elif m.needs_judge:
            print(f"  {m.label:<24} not judged")
    if out.get("deviations"):
        official = ", ".join(
            f"{m.label} {out['official'][m.key]:.3f}"
            for m in track.metrics
            if isinstance(out["official"].get(m.key), (int, float)) and not m.needs_judge
        )
        print(f"  official script: {official}; the board's fixes (effect on this file):")
        for dev in out["deviations"]:
            effect = ", ".join(f"{k} {v:+.3f}" for k, v in dev["effect"].items() if v is not None)
            print(f"    {dev['name']:<24} {effect}")
    sys.stdout.flush()  # the notes follow the numbers they are about
    for note in out.get("notes", []):
        print(f"note: {note}", file=sys.stderr)
    for c in track.extra_columns:  # reported beside the metrics (vdr coverage, futurepedia VAR)
        value = result["overall"].get(c.key)
        if isinstance(value, (int, float)):
            print(f"  {c.label:<24} {value:.{c.digits}%}" if c.percent else f"  {c.label:<24} {value:.{c.digits}f}")


def cmd_submit(args) -> None:
    """Validate locally, then open a pull request on the submissions repo with the user's own token."""
    from datetime import UTC, datetime

    from .store.model import encode_metadata, stored_metadata
    from .store.naming import extension_of, meta_path, sha256_hex, submission_path

    store = args.settings().store
    repo = args.repo or store.submissions_repo
    if not repo:
        _fail(["submit: no submissions repo: pass --repo ORG/NAME or set SUBMISSIONS_REPO"])
    data, checked = _check(args)
    for w in checked.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not checked.ok:
        _fail(checked.errors)
    if args.track and checked.track_name != args.track:
        _fail([f"track: the file declares track {checked.track_name!r}, not {args.track!r}"])
    name = Path(args.submission).name
    ext = extension_of(name)
    if ext is None:
        _fail([f"file: {name}: expected a .json, .jsonl, .json.gz or .jsonl.gz file"])
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    token = store.hf_token  # else the token `hf auth login` saved
    api = HfApi(endpoint=store.hf_endpoint, token=token, library_name="open-rag-leaderboard")
    try:
        user = api.whoami()["name"] if (token or not args.dry_run) else None
    except (HfHubHTTPError, OSError) as exc:
        _fail([f"submit: the Hub did not accept your token ({_hub_reason(exc)}); run `hf auth login` or set HF_TOKEN"])
    now = datetime.now(UTC)
    digest = sha256_hex(data)
    path = submission_path(checked.track_name, user or "USER", now, digest, ext)
    # The sidecar the board reads beside the file (store/model.py): the board checks it against the pull request.
    meta = stored_metadata(
        {"system": checked.system, "original_filename": name},
        track=checked.track_name,
        user=user or "USER",
        sha256=digest,
        size=len(data),
        submitted_at=now,
    )
    message = f"Add {checked.track_name} submission: {str(checked.system.get('name', ''))[:80]}"
    if args.dry_run:
        plan = {"repo": repo, "pull_request_title": message, "files": {path: len(data), meta_path(path): meta}}
        if user is None:
            plan["note"] = "no token: USER stands for your Hugging Face user name"
        print(json.dumps(plan, indent=2, ensure_ascii=False, default=str))
        return
    try:
        info = api.create_commit(
            repo,
            [
                CommitOperationAdd(path_in_repo=path, path_or_fileobj=data),
                CommitOperationAdd(path_in_repo=meta_path(path), path_or_fileobj=encode_metadata(meta)),
            ],
            commit_message=message,
            repo_type="dataset",
            create_pr=True,
        )
    except (HfHubHTTPError, OSError) as exc:
        _fail([f"submit: the pull request could not be opened on {repo}: {_hub_reason(exc)}"])
    print(f"valid: track {checked.track_name}, {checked.records} predictions")
    print(f"pull request opened: {info.pr_url}")
    print("the board reviews it at its next refresh and comments there with the scores (or every problem)")


def _hub_reason(exc: Exception) -> str:
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code}" + (f": {exc.server_message[:200]}" if exc.server_message else "")
    return type(exc).__name__


def cmd_demo(args) -> None:
    from .demo import write_demo

    write_demo(Path(args.out), seed=args.seed)
    print(f"demo data written to {args.out}")


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")  # before huggingface_hub loads; an explicit choice wins
    parser = argparse.ArgumentParser(prog="python -m leaderboard", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, fn, helptext in (
        ("validate", cmd_validate, "check a submission file"),
        ("score", cmd_score, "rescore a submission from its raw predictions"),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("submission")
        p.add_argument(
            "--gold",
            help="local path, Hugging Face dataset id(s) or suite file (default: $"
            + "/$".join(t.gold_env for t in TRACKS.values())
            + " for the file's track, else the bundled demo gold)",
        )
        p.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, help="size cap on the decompressed file")
        p.set_defaults(fn=fn)
        if name == "score":
            p.add_argument(
                "more",
                nargs="*",
                metavar="submission",
                help="more submission files: scored in turn; in batch mode all files' answers go in one batch run",
            )
            p.add_argument("--json", action="store_true", help="print one JSON object (one line per file)")
            p.add_argument(
                "--protocol",
                choices=("board", "official"),
                default="board",
                help="board: the board's definitions (with the official script's numbers and the effect of each "
                "of the board's fixes beside them); official: the same keys as the benchmark's own script computes them",
            )
            p.add_argument(
                "--judge",
                choices=("none", "lexical", "openai"),
                default=None,
                help="judge for the judged metrics ("
                + ", ".join(
                    f"{t.name}: {', '.join(m.key for m in t.judged_metrics)}" for t in TRACKS.values() if t.judged_metrics
                )
                + "); default: $JUDGE or none",
            )
            p.add_argument(
                "--batch",
                action="store_true",
                help="with --judge openai: send the judge's calls through the server's Batch API "
                "(same verdicts, half the price, done within 24 h; default: $JUDGE_MODE); "
                "exit 4 when a batch is still running or the batch service failed: run again to resume",
            )
            p.add_argument(
                "--dry-run",
                action="store_true",
                help="with --judge: print how many judge calls and tokens scoring would cost, spend nothing",
            )
    p = sub.add_parser("submit", help="validate a submission, then open a pull request on the submissions repo")
    p.add_argument("submission")
    p.add_argument("--repo", help="the board's submissions dataset repo (default: $SUBMISSIONS_REPO)")
    p.add_argument("--track", help="refuse the file unless it declares this track")
    p.add_argument("--dry-run", action="store_true", help="validate and print what would be sent; send nothing")
    p.add_argument("--gold", help="gold for the local validation (as for validate)")
    p.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, help="size cap on the decompressed file")
    p.set_defaults(fn=cmd_submit)
    from .convert import add_parser as add_convert

    add_convert(sub)
    p = sub.add_parser("demo", help="regenerate the bundled demo data")
    p.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "assets" / "demo"))
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(fn=cmd_demo)
    args = parser.parse_args(argv)
    args.settings = _settings  # read when a command needs it (demo does not)
    try:
        args.fn(args)
    except Exception:  # a bug, not bad input: one line for the user, the traceback in a file to report
        print(
            f"internal error (a bug in the leaderboard, not a problem of your file); details: {_crash_report()}", file=sys.stderr
        )
        sys.exit(3)


def _crash_report() -> str:
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile("w", prefix="leaderboard-crash-", suffix=".txt", delete=False) as fh:
        traceback.print_exc(file=fh)
    return fh.name


if __name__ == "__main__":
    main()
