"""Time arguments of the record tools: dates or datetimes on MIMIC's naive (shifted) clock."""

from __future__ import annotations

import datetime as dt
import re

from ..errors import ToolError
from ._render import echo

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_time(value: str, field: str) -> tuple[dt.datetime, bool]:
    """Parse ``YYYY-MM-DD`` or ``YYYY-MM-DD HH:MM[:SS[.ffffff]]`` (``T`` also accepted).

    Returns:
        (the instant, True when only a date was given). A date alone is its midnight here;
        :func:`parse_window` decides what a date-only end means.

    Raises:
        ToolError: ``"bad_argument"`` naming ``field`` when the text is not such a time or
            carries a time zone (MIMIC times are naive).
    """
    text = value.strip()
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ToolError(
            "bad_argument", f"{field}={echo(value)} is not a time; use 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'"
        ) from None
    if parsed.tzinfo is not None:
        raise ToolError("bad_argument", f"{field}={echo(value)}: give a naive MIMIC time, without a time zone")
    return parsed, bool(_DATE_ONLY.match(text))


def parse_window(start_time: str, end_time: str) -> tuple[dt.datetime, dt.datetime]:
    """The window ``[start, end)``: start inclusive, end exclusive.

    A date-only ``start_time`` starts at that day's 00:00; a date-only ``end_time`` includes
    that whole day (the window ends at the next midnight; ``9999-12-31`` at the last instant Python
    can represent).

    Raises:
        ToolError: ``"bad_argument"`` for unparsable times or an empty window (end <= start).
    """
    start, _ = parse_time(start_time, "start_time")
    end, end_is_date = parse_time(end_time, "end_time")
    if end_is_date:
        end = end + dt.timedelta(days=1) if end.date() < dt.date.max else dt.datetime.max  # 9999-12-31: to the end
    if end <= start:
        raise ToolError(
            "bad_argument", f"empty window: end_time {echo(end_time)} is not after start_time {echo(start_time)}"
        )
    return start, end
