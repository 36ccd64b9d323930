"""A picture a tool came upon (a file read, a page fetched), shown to a model that sees pictures:
kept in the session's pictures/ folder, it follows the results of the call's turn (core/pictures.py)."""

from __future__ import annotations

from core import pictures
from core.tools.context import ToolContext
from core.tools.registry import ToolError


def refused(name: str, size: int, sees_pictures: bool) -> str:
    """Why a picture of `size` bytes is not shown to the model ("": it may be)."""
    if not sees_pictures:
        return f"{name} is a picture ({size:,} bytes), and this model cannot see pictures."
    if size > pictures.LARGEST_PICTURE_BYTES:
        return (f"{name} is a picture of {size / 1024 / 1024:.1f} MB; at most "
                f"{pictures.LARGEST_PICTURE_BYTES // 1024 // 1024} MB can be shown to you. Make a smaller copy "
                "(scaled down, or as JPEG) and read that.")
    return ""


def show_picture(ctx: ToolContext, data: bytes, suffix: str, name: str, quoted: str = "") -> str:
    """The call's result for the picture `data` (`name`: what the agent called it; `quoted`: how
    an error names it, if not so): it sees the picture after its turn's results, or is told it saw
    it already, or that it cannot see it."""
    if why := refused(quoted or name, len(data), ctx.sees_pictures):
        raise ToolError(why)
    kept = pictures.keep_once(ctx.session_dir, data, suffix)
    if ctx.picture_in_view(kept):
        return f"[{name}: a picture, {len(data):,} bytes, unchanged: you saw it above ({kept}).]"
    ctx.pictures.append(kept)
    return f"[{name}: a picture, {len(data):,} bytes. You see it below, after the results of this turn ({kept}).]"
