"""The run's watch on its model endpoint: a streak of calls that got no reply means the server is gone.

Without it, a run whose server died kept starting questions, each retried ``max_attempts`` times (about 20 s
of backoff, or ``max_attempts × timeout_s`` against a server that accepts connections but never answers)
and written as an infrastructure error. The rule (docs/runner.md, "A server that goes away"), in one place:

- a model call that **finally** failed, after its retries, with no reply from the server
  (``ProviderUnavailable.no_reply``: the connection failed, or no reply within the request timeout) or with
  a gateway's 502 / 503 / 504 (a proxy whose server is down) counts one;
- any other outcome resets the count: a reply (the server is alive, even a flaky one), an HTTP 4xx or
  another 5xx (the server answered: that request is the problem), a reply that could not be read;
- ``threshold`` counts in a row, with no success since, and the endpoint is gone: the engine starts no
  more jobs and cancels the ones in flight (they write no row), then raises :class:`EndpointGone`.
"""

from __future__ import annotations

from ..errors import ClinseekError
from ..models import ModelCallError, ProviderUnavailable

GATEWAY_DOWN = frozenset({502, 503, 504})
"""HTTP statuses of a gateway (nginx, a LiteLLM proxy, a load balancer) whose model server is down."""

MIN_THRESHOLD = 8
"""The smallest default streak: ``RunOptions.stop_after_no_reply`` defaults to ``max(8, concurrency)``."""


class EndpointGone(ClinseekError):
    """The run stopped: its model endpoint stopped answering (a streak of calls with no reply after their retries).

    The rows already written are kept; the jobs that were not run (or were cancelled in flight) have no row, so
    rerunning the same command runs exactly them (and redoes the infrastructure-error rows). ``clinseek run``
    prints the message and exits with code 3 (docs/errors.md).

    Attributes:
        endpoint: where the model was called (URL without credentials, or the provider's default).
        last_error: the last call's error.
        not_run: question runs of the stopped (benchmark, mode) that got no row.
        failed: rows of the stopped (benchmark, mode) written by this call as infrastructure errors.
        streak: calls in a row that got no reply.
        not_started: the (benchmark, mode) pairs of the same command that were not started.
    """

    def __init__(self, endpoint: str, last_error: str, not_run: int, failed: int, streak: int,
                 not_started: tuple[str, ...] = ()) -> None:
        self.endpoint = endpoint
        self.last_error = last_error
        self.not_run = not_run
        self.failed = failed
        self.streak = streak
        self.not_started = not_started
        later = f"; not started: {', '.join(not_started)}" if not_started else ""
        super().__init__(
            f"the model endpoint {endpoint} stopped answering: {streak} calls in a row failed after their retries "
            f"with no reply (connection failed, timed out, or a gateway's 502/503/504; last error: {last_error}). "
            f"The run stopped: {not_run} question runs were not run and {failed} ended as infrastructure errors "
            f"(the rows written are kept){later}. Check the server, then rerun the same command: it runs exactly "
            "those")

    def also_not_started(self, pairs: tuple[str, ...]) -> EndpointGone:
        """The same error naming the (benchmark, mode) pairs of the command that were not started."""
        return EndpointGone(self.endpoint, self.last_error, self.not_run, self.failed, self.streak,
                            (*self.not_started, *pairs))


def no_reply(err: BaseException) -> bool:
    """Whether a call's final error says the server is not there (see the module's rule)."""
    if not isinstance(err, ProviderUnavailable):
        return False
    return err.no_reply or err.status_code in GATEWAY_DOWN


class EndpointWatch:
    """Counts the model calls that finally got no reply, in a row; told by ``ResilientModel`` after each call.

    Args:
        endpoint: named in :class:`EndpointGone`.
        threshold: calls in a row that make the endpoint gone (``0``: never).
    """

    def __init__(self, endpoint: str, threshold: int) -> None:
        self.endpoint = endpoint
        self.threshold = threshold
        self.streak = 0
        self.last_error = ""

    def succeeded(self) -> None:
        """A call got its reply."""
        self.streak = 0

    def failed(self, err: ModelCallError) -> None:
        """A call failed for good (after its retries)."""
        if not no_reply(err):
            self.streak = 0
            return
        self.streak += 1
        self.last_error = str(err)

    @property
    def gone(self) -> bool:
        """``threshold`` calls in a row got no reply."""
        return 0 < self.threshold <= self.streak

    def error(self, not_run: int, failed: int) -> EndpointGone:
        """The error that stops the run (``not_run`` jobs without a row, ``failed`` infra-error rows written)."""
        return EndpointGone(self.endpoint, self.last_error, not_run, failed, self.streak)


__all__ = ["GATEWAY_DOWN", "MIN_THRESHOLD", "EndpointGone", "EndpointWatch", "no_reply"]
