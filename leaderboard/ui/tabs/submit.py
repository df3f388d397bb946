"""The Submit tab: upload one file; it is validated, stored only when valid, and rescored from its raw predictions."""

from __future__ import annotations

import logging
from pathlib import Path

import gradio as gr
from gradio.utils import get_upload_folder

from ...service import Board
from ...tracks import TRACKS
from .. import html, upload_ledger
from .common import Page

log = logging.getLogger(__name__)


def discard_upload(path: Path) -> None:
    """Delete an uploaded temp file (and its now empty folder); only inside Gradio's upload folder, never elsewhere."""
    folder = Path(get_upload_folder()).resolve()
    try:
        path = path.resolve()
        if folder not in path.parents:
            return
        path.unlink(missing_ok=True)
        if path.parent != folder and not any(path.parent.iterdir()):
            path.parent.rmdir()
    except OSError as exc:  # another request may share the folder (same content hash): leave it to delete_cache
        log.debug("upload %s not removed: %s", path, exc)


def submission_result_html(board: Board, track_name: str, user: str, path: Path, overrides: dict) -> str:
    status = board.submit_upload(user=user, track=track_name, path=path, overrides=overrides)
    entry = None
    if status.ok and status.file is not None:
        entry = next((x for x in board.entries() if x.path == status.file.path), None)
    track = TRACKS.get(entry.summary.track or "") if entry is not None else None
    return html.submission_status(status, entry, track)


class SubmitTab:
    id = "submit"
    title = "Submit"

    def __init__(self, board: Board):
        self.board = board
        gr.HTML(html.SUBMIT_HINT)
        if board.settings.page.login_required:
            gr.LoginButton(elem_id="submit-login")
            self.user_box = None
        else:
            self.user_box = gr.Textbox(label="Your name (local mode: no login)", value="local-user", elem_id="submit-user")
        self.track = gr.Dropdown(
            [(t.title, n) for n, t in TRACKS.items()], value=next(iter(TRACKS)), label="Track", elem_id="submit-track"
        )
        self.upload = gr.File(
            label="Submission file", file_types=[".json", ".jsonl", ".gz"], type="filepath", elem_id="submit-file"
        )
        with gr.Row():
            self.name = gr.Textbox(label="System name (overrides the file's header)", elem_id="submit-name")
            self.org = gr.Textbox(label="Organisation", elem_id="submit-org")
            self.link = gr.Textbox(label="Link (http/https)", elem_id="submit-link")
        self.description = gr.Textbox(label="Description", lines=2, elem_id="submit-description")
        self.go = gr.Button("Validate and submit", variant="primary", elem_id="submit-go")
        self.result = gr.HTML(elem_id="submit-result")

    def submit(self, track_name, path, sys_name, organisation, url, desc, user_name=None, profile: gr.OAuthProfile | None = None):
        user = profile.username if profile is not None else (user_name or "").strip()
        if self.user_box is None and profile is None:
            return html.error("Log in with Hugging Face to submit.")
        if not user:
            return html.error("Enter a name to submit under.")
        if not path:
            return html.error("Choose a file to upload.")
        upload_ledger.claim(path)  # this submit reads and deletes it: the sweeper of unclaimed uploads leaves it be
        overrides = {
            k: v.strip()
            for k, v in (("name", sys_name), ("organization", organisation), ("link", url), ("description", desc))
            if v and v.strip()
        }
        try:
            return submission_result_html(self.board, track_name, user, Path(path), overrides)
        finally:
            discard_upload(Path(path))  # read (or refused) by now: it must not pile up in the upload folder

    restore_outputs: list = []

    def restore(self, params: dict[str, list[str]], tab: str) -> dict:
        return {}  # an upload is never in a link

    def wire(self, page: Page, tab: gr.Tab) -> None:
        inputs = [self.track, self.upload, self.name, self.org, self.link, self.description]
        inputs += [self.user_box] if self.user_box is not None else []
        # Two submits at once per app: validation itself runs one at a time (service.VALIDATIONS_AT_ONCE), and the
        # queue keeps other submitters waiting rather than holding more uploads in memory.
        self.go.click(self.submit, inputs, self.result, api_name="submit", concurrency_limit=2)
