"""Text a stranger wrote, inside the board's own Hub comments: shown as typed, never rendered.

A system name, a path or a validator's message quoting a submitted value goes into a comment posted
under the board's account. Rendered as markdown, `[Claim prize](http://x)` would be the board's link,
`![t](http://x/t.png)` a remote image, `@maint` a mention, `<b>` HTML. Each such piece is one inline
code span: inside one, CommonMark and the Hub's renderer show every character literally (no links,
autolinks, images, mentions, emphasis or HTML). The only way out of a code span is a backtick, or a
line break ending the line: both are replaced.
"""

from __future__ import annotations


def code(text: object, limit: int = 300) -> str:
    """`text` as one inline code span on one line, at most `limit` characters of it."""
    flat = " ".join(str(text).split()).replace("`", "'")[:limit]
    return f"`{flat}`" if flat.strip() else "(empty)"
