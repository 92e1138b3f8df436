"""The episode is pinned: arguments naming another patient or time are refused, never obeyed."""

from __future__ import annotations

from ..errors import ToolError
from ._context import ToolContext
from ._render import echo
from ._timewin import parse_time


def pinned_message(ctx: ToolContext) -> str:
    """Sentence stating the episode's patient and cutoff (used in refusals)."""
    key = ctx.episode.key
    return (
        f"this episode is fixed to subject_id {key.subject_id} at prediction_time "
        f"{key.prediction_time.isoformat(sep=' ')}; the EHR is already loaded and other patients "
        "or times cannot be loaded. Call the tools without subject_id, or with this one."
    )


def check_subject(ctx: ToolContext, subject_id: str | int | None) -> None:
    """Refuse a ``subject_id`` argument that names another patient (None or empty is fine).

    Raises:
        ToolError: ``"pinned"``.
    """
    if subject_id is None or str(subject_id).strip() == "":
        return
    if str(subject_id).strip() != str(ctx.episode.key.subject_id):
        raise ToolError("pinned", f"subject_id {subject_id!s} refused: {pinned_message(ctx)}")


def check_timestamp(ctx: ToolContext, timestamp: str | None) -> None:
    """Refuse a ``timestamp`` argument other than the episode's prediction time.

    Raises:
        ToolError: ``"pinned"`` (another time) or ``"bad_argument"`` (not a time).
    """
    if timestamp is None or timestamp.strip() == "":
        return
    when, _ = parse_time(timestamp, "timestamp")
    if when != ctx.episode.key.prediction_time:
        raise ToolError("pinned", f"timestamp {echo(timestamp)} refused: {pinned_message(ctx)}")
