"""Pre-flight of the Claude services: the Anthropic API, AWS Bedrock and Google Vertex AI.

The same contract as the OpenAI-compatible pre-flight (:func:`clinseek.models.preflight`): one
:class:`~clinseek.models.PreflightReport`, or one :class:`~clinseek.errors.ModelError` within
seconds that says what to do. Requests, all through the provider's own SDK client (its auth,
signing and URL layout):

1. Reachability within :data:`~clinseek.models.CONNECT_TIMEOUT_S`. ``anthropic``:
   ``GET /v1/models/{id}`` (``models.retrieve``): key refused (401 / 403), unknown model (404
   ``not_found_error``, naming the models the key can use), retired model; its ``max_input_tokens``
   is the served context window. ``bedrock`` / ``vertex`` have no model lookup on their runtime
   endpoints (the SDK's Bedrock client refuses every path but Messages), so a ``GET`` of the
   endpoint root checks only that it answers at all (any HTTP status will do) and that the
   credentials resolve (AWS credential chain, Google application-default credentials).
2. One Messages request of ``max_tokens=1`` (with one small tool when the run offers native tools),
   sent by the model's own ``generate``: Bedrock ``POST /model/{id}/invoke``, Vertex
   ``POST …/publishers/anthropic/models/{id}:rawPredict``. Its error names the cause: credentials
   refused (401, or a 403 about the token / signature / key), no access to the model (other 403),
   unknown model (404; Bedrock's 400 "model identifier is invalid"), tools refused (400 about tools).

Token counts: the budgets count with the conservative estimate (no per-text tokenizer endpoint is
used: a count would be a network round trip per text). Where the service counts tokens
(``messages.count_tokens``: the Anthropic API, Vertex ``count-tokens:rawPredict``; the SDK's Bedrock
client refuses it) the pre-flight checks the estimate against the model's own count on an
EHR-shaped sample (:data:`CALIBRATION_SAMPLE`) and notes the ratio; an estimate below the model's
count is logged as a warning (the budgets may then overrun the context).
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anthropic
import anyio

from ..errors import ModelError
from ._errors import ModelCallError
from ._messages import GenerateConfig, Message
from ._preflight import CONNECT_TIMEOUT_S, PROBE_TOOL, PreflightReport, safe_url
from ._sdk_errors import is_credential_error
from ._tokens import ESTIMATE, TokenCounter, estimate_tokens

if TYPE_CHECKING:
    from ._anthropic import AnthropicChatModel, AnthropicClient

logger = logging.getLogger("clinseek.models")

_TOOL_ERROR = re.compile(r"\btools?\b|tool[ _]use|function", re.IGNORECASE)
_MODEL_ERROR = re.compile(r"model", re.IGNORECASE)
_CREDENTIAL_ERROR = re.compile(
    r"security token|signature|api[ -]?key|x-api-key|authenticat|credential|access token", re.IGNORECASE
)


CALIBRATION_SAMPLE = (
    "[2180-07-23 14:00] labevents: Potassium 4.1 mEq/L (ref 3.3-5.1); Sodium 138 mEq/L; Creatinine 1.3 mg/dL "
    "(ref 0.5-1.2) abnormal; Lactate 2.4 mmol/L\n"
    "[2180-07-23 15:12] chartevents: Heart Rate 112 bpm; Arterial Blood Pressure mean 61 mmHg; SpO2 93 %; "
    "Temperature Fahrenheit 101.3\n"
    "[2180-07-23 16:40] prescriptions: Vancomycin 1000 mg IV q12h; Piperacillin-Tazobactam 4.5 g IV q8h; "
    "Norepinephrine 0.08 mcg/kg/min\n"
    "[2180-07-24 02:05] microbiologyevents: BLOOD CULTURE, STAPH AUREUS COAG +, OXACILLIN R, VANCOMYCIN S (MIC <=1)\n"
)
"""EHR-shaped text (dense numbers, units, clinical terms) the estimate is checked on."""


@dataclass(frozen=True)
class _Hints:
    """What to check, per service, for each kind of failure."""

    reach: str
    credentials: str
    model: str
    access: str


_HINTS = {
    "anthropic": _Hints(
        reach="is the network up, and is --base-url (when given) an Anthropic Messages API endpoint?",
        credentials="check the key in ANTHROPIC_API_KEY (or the variable --api-key-env names)",
        model="check the model id (GET /v1/models lists the ones the key can use)",
        access="the key's organization or workspace has no access to it",
    ),
    "bedrock": _Hints(
        reach="is the AWS region right (AWS_REGION; endpoint bedrock-runtime.<region>.amazonaws.com)?",
        credentials="check AWS_BEARER_TOKEN_BEDROCK (or the variable --api-key-env names), or without one the "
                    "AWS credential chain (AWS_PROFILE, `aws sso login`)",
        model="use a Bedrock model id or inference-profile id served in this region (e.g. "
              "us.anthropic.claude-opus-4-6-v1)",
        access="request access to the model in the Bedrock console and check that the IAM policy allows "
               "bedrock:InvokeModel on it",
    ),
    "vertex": _Hints(
        reach="are the region (CLOUD_ML_REGION) and --base-url (when given) right?",
        credentials="check VERTEX_ACCESS_TOKEN (`gcloud auth print-access-token`; or the variable --api-key-env "
                    "names), or without one the application-default credentials (`gcloud auth "
                    "application-default login`)",
        model="use a Claude model id Vertex AI serves in this region (e.g. claude-opus-4-6), enabled in Model Garden",
        access="enable the model in Model Garden and check that the project (ANTHROPIC_VERTEX_PROJECT_ID) and "
               "region are right and the account may call aiplatform.endpoints.predict",
    ),
}


async def anthropic_preflight(model: AnthropicChatModel, client: AnthropicClient, provider: str, *, tools: bool,
                              timeout_s: float) -> tuple[PreflightReport, TokenCounter]:
    """The pre-flight of a Claude service (see the module docstring).

    Args:
        model: the model to check (its ``generate`` sends the probe).
        client: its SDK client (``AsyncAnthropic``, ``AsyncAnthropicBedrock``, ``AsyncAnthropicVertex``).
        provider: ``"anthropic"``, ``"bedrock"`` or ``"vertex"``.
        tools: offer one small tool in the probe.
        timeout_s: limit of the probe request, seconds (the run's request timeout).

    Returns:
        ``(report, ESTIMATE)``.

    Raises:
        ModelError: unreachable endpoint, credentials refused or missing, unknown or retired model,
            no access to it, tools refused, or any other error reply (the message says what to do).
    """
    hints = _HINTS.get(provider, _HINTS["anthropic"])
    endpoint = safe_url(str(client.base_url).rstrip("/"))
    notes: list[str] = []
    listed: bool | None = None
    context: int | None = None
    if isinstance(client, anthropic.AsyncAnthropic):
        listed, context = await _model_info(client, model, endpoint, hints, notes)
    else:
        await _reach(client, model.name, endpoint, hints)
    started = time.perf_counter()
    try:
        await model.generate([Message.user("Reply with the word OK.")], [PROBE_TOOL] if tools else [],
                             GenerateConfig(max_output_tokens=1, timeout_s=timeout_s))
    except ModelCallError as err:
        raise _explain(err, model.name, endpoint, hints, tools, timeout_s) from None
    latency = time.perf_counter() - started
    notes.append(f"the budgets count with the estimate ({ESTIMATE.name}); {await _estimate_check(client, model)}")
    return PreflightReport(
        endpoint=endpoint, model_listed=listed, server_context_window=context, tools_checked=tools,
        token_counter=ESTIMATE.name, probe_latency_s=round(latency, 3), notes=notes,
    ), ESTIMATE


async def _model_info(client: anthropic.AsyncAnthropic, model: AnthropicChatModel, endpoint: str, hints: _Hints,
                      notes: list[str]) -> tuple[bool | None, int | None]:
    """(listed, max input tokens) from ``GET /v1/models/{id}``; ``ModelError`` for an unreachable
    endpoint, a refused key, an unknown or retired model."""
    try:
        with anyio.fail_after(CONNECT_TIMEOUT_S + 0.5):
            info = await client.models.retrieve(model.model_id, timeout=CONNECT_TIMEOUT_S)
    except anthropic.APIStatusError as err:
        if err.status_code in (401, 403):
            raise ModelError(f"{endpoint} refused the key for {model.name} (HTTP {err.status_code}: "
                             f"{_api_message(err)}); {hints.credentials}") from None
        if err.status_code == 404 and _error_type(err.body) == "not_found_error":
            served = await _served(client)
            listed = f"; the key can use: {', '.join(served)}" if served else ""
            raise ModelError(f"{endpoint} does not serve the model of {model.name} ({_api_message(err)}){listed}; "
                             f"{hints.model}") from None
        notes.append(f"GET /v1/models/{model.model_id} answered HTTP {err.status_code}; the probe request decided")
        return None, None
    except (TimeoutError, anthropic.APIConnectionError) as err:
        raise _unreachable(err, endpoint, hints) from None
    except Exception as err:
        if not is_credential_error(err):
            raise
        raise _no_credentials(err, model.name, hints) from None
    lifecycle = getattr(info, "lifecycle", None)
    if lifecycle == "retired":
        raise ModelError(f"{model.name} is retired: {endpoint} no longer serves it; {hints.model}")
    if lifecycle == "deprecated":
        notes.append(f"{model.model_id} is deprecated (retires {getattr(info, 'retires_at', None) or 'at a date not set yet'})")
    window = getattr(info, "max_input_tokens", None)
    return True, window if isinstance(window, int) else None


async def _served(client: anthropic.AsyncAnthropic) -> list[str]:
    """The model ids the key can use (first page), or ``[]`` when they cannot be listed."""
    try:
        with anyio.fail_after(CONNECT_TIMEOUT_S + 0.5):
            page = await client.models.list(limit=100, timeout=CONNECT_TIMEOUT_S)
    except Exception:  # a best-effort addition to an error message: any failure leaves it out
        return []
    return [m.id for m in page.data]


async def _reach(client: AnthropicClient, name: str, endpoint: str, hints: _Hints) -> None:
    """``GET`` the endpoint root through the client (auth and signing included); any HTTP answer
    within :data:`CONNECT_TIMEOUT_S` is reachable. ``ModelError`` when none comes or the
    credentials do not resolve."""
    import httpx2

    try:
        with anyio.fail_after(CONNECT_TIMEOUT_S + 0.5):
            await client.get("/", cast_to=httpx2.Response, options={"timeout": CONNECT_TIMEOUT_S})
    except anthropic.APIStatusError:
        return
    except (TimeoutError, anthropic.APIConnectionError) as err:
        raise _unreachable(err, endpoint, hints) from None
    except Exception as err:
        if not is_credential_error(err):
            raise
        raise _no_credentials(err, name, hints) from None


async def _estimate_check(client: AnthropicClient, model: AnthropicChatModel) -> str:
    """The estimate against the model's own count of :data:`CALIBRATION_SAMPLE` (two ``count_tokens``
    requests: the sample, and one character, whose difference removes the message overhead)."""
    if isinstance(client, anthropic.AsyncAnthropicBedrock):
        return "Bedrock's SDK client counts no tokens, so the estimate is unchecked for this model"
    try:
        with anyio.fail_after(2 * CONNECT_TIMEOUT_S + 0.5):
            counts = [
                (await client.messages.count_tokens(model=model.model_id, messages=[{"role": "user", "content": text}],
                                                    timeout=CONNECT_TIMEOUT_S)).input_tokens
                for text in (CALIBRATION_SAMPLE, ".")
            ]
    except (anthropic.AnthropicError, TimeoutError) as err:
        return f"the service did not count tokens ({type(err).__name__}), so the estimate is unchecked for this model"
    exact = counts[0] - counts[1] + 1
    estimate = estimate_tokens(CALIBRATION_SAMPLE)
    if exact <= 0:
        return f"the service's token count was unusable ({counts}), so the estimate is unchecked for this model"
    ratio = estimate / exact
    if ratio < 1.0:
        logger.warning("%s: the token estimate counts %d tokens where the model counts %d on an EHR-shaped sample "
                       "(x%.2f): token budgets may overrun the context; lower --context-window / --curated-budget",
                       model.name, estimate, exact, ratio)
        return (f"it counts {estimate} tokens where the model counts {exact} on an EHR-shaped sample (x{ratio:.2f}, "
                "below the model's count: budgets may overrun)")
    return f"it counts {estimate} tokens where the model counts {exact} on an EHR-shaped sample (x{ratio:.2f})"


def _unreachable(err: Exception, endpoint: str, hints: _Hints) -> ModelError:
    cause = "no answer" if isinstance(err, (TimeoutError, anthropic.APITimeoutError)) else (
        f"{type(err.__cause__ or err).__name__}: {err.__cause__ or err}")
    return ModelError(f"cannot reach the model endpoint {endpoint} ({cause} within {CONNECT_TIMEOUT_S:g} s); "
                      f"{hints.reach}")


def _no_credentials(err: Exception, name: str, hints: _Hints) -> ModelError:
    """The error for a failure before any request was sent: the SDK could not resolve credentials
    (AWS credential chain, Google application-default credentials, a Vertex project id)."""
    return ModelError(f"{name}: no usable credentials ({type(err).__name__}: {err}); {hints.credentials}")


def _explain(err: ModelCallError, name: str, endpoint: str, hints: _Hints, tools: bool,
             timeout_s: float) -> ModelError:
    """The one error the user sees for a failed probe request."""
    text = str(err)
    text = text if len(text) <= 500 else text[:500] + " …"
    status = err.status_code
    if status is None:
        return ModelError(f"the pre-flight request to {endpoint} for {name} got no reply ({text}); the endpoint "
                          f"answered before, so it may be overloaded: retry, or raise --request-timeout "
                          f"(now {timeout_s:g} s)")
    if status == 401 or (status == 403 and _CREDENTIAL_ERROR.search(text)):
        return ModelError(f"{endpoint} refused the credentials for {name} ({text}); {hints.credentials}")
    if status == 403:
        return ModelError(f"{endpoint} denies access to the model of {name} ({text}); {hints.access}")
    tool_error = tools and status == 400 and bool(_TOOL_ERROR.search(text))
    if status == 404 or (status == 400 and not tool_error and _MODEL_ERROR.search(text)):
        return ModelError(f"{endpoint} does not serve the model of {name} ({text}); {hints.model}")
    if tool_error:
        return ModelError(f"{endpoint} refuses tool calls for {name} ({text}); use a model with tool use, or run "
                          "with --tool-protocol text")
    return ModelError(f"the pre-flight request to {endpoint} for {name} failed: {text}")


def _error_type(body: Any) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


def _api_message(err: anthropic.APIStatusError) -> str:
    body = err.body
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else str(err.message)


__all__ = ["CALIBRATION_SAMPLE", "anthropic_preflight"]
