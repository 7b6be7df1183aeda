"""`LiteLLMConfig`: the options of the ``litellm`` llm (importable without litellm)."""

from __future__ import annotations

from typing import Literal

import attrs
from attrs import validators as v

from labile.plugin import bounded

StructuredOutput = Literal["auto", "json_schema", "json_object_schema", "json_object", "prompt"]




@attrs.frozen(kw_only=True)
class LiteLLMConfig:
    """Options of the ``litellm`` llm (``[llm] type = "litellm"``).

    No field holds a secret: API keys come from the environment only — the
    provider's usual variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY`` …),
    or the variable named by ``api_key_env`` — so config dumps and traces can
    never leak one.

    Attributes:
        model: Any litellm model string (``gpt-4o-mini``,
            ``anthropic/claude-3-5-haiku-latest``, ``ollama/llama3.1``,
            ``hosted_vllm/<name>``, ``openai/<name>`` with ``api_base`` …).
        temperature: Sampling temperature (0 for reproducible runs).
        max_tokens: Longest reply, in tokens.
        timeout_s: Per-request timeout, in seconds.
        api_base: Server URL for local or self-hosted models (Ollama, vLLM,
            llama.cpp server); ``None`` uses the provider's default.
        api_key_env: Name of the environment variable holding the key, when
            it is not the provider's usual one (the value is read per call).
            Unset with a loopback ``api_base`` (a local server): a placeholder
            key is sent, never the provider's real key.
        structured_output: How JSON is requested: ``auto`` (JSON-schema mode
            where litellm says the model supports it or ``api_base`` names a
            self-hosted server, stepping down when the server rejects it; else
            JSON-object mode where the provider accepts ``response_format``;
            else prompt-only), or one mode forced: ``json_schema`` (OpenAI's
            ``{"type": "json_schema", …}``), ``json_object_schema``
            (``{"type": "json_object", "schema": …}``, the dialect of
            llama-cpp-python's server), ``json_object`` or ``prompt``.
        max_repairs: Re-asks after an invalid JSON reply before failing
            closed with `LLMOutputError`.
        max_retries: Retries of rate-limited, timed-out or 5xx requests.
        backoff_base_s: First backoff cap in seconds (doubles per retry).
        backoff_max_s: Longest backoff in seconds.
        max_concurrency: Requests in flight at once from this client.
        requests_per_minute: Client-side request rate cap (``None``: none).
        cache_dir: Directory of the on-disk reply cache (``None``: no cache).
        max_string_chars: In the ``json_object_schema`` dialect (llama.cpp's
            server compiles the schema into a grammar), the longest string
            the grammar lets the model write, as in the in-process client
            (``None``: only the schema's own limits the parser can take). A
            small model looping inside a string then stops there.
    """

    model: str = attrs.field(default="gpt-4o-mini", validator=v.min_len(1))
    temperature: float = attrs.field(default=0.0, validator=[v.ge(0.0), v.le(2.0)])
    max_tokens: int = attrs.field(default=1024, validator=bounded(1, 1_000_000))
    timeout_s: float = attrs.field(default=60.0, validator=bounded(0.001, 86_400.0))
    api_base: str | None = None
    api_key_env: str | None = attrs.field(
        default=None, validator=v.optional(v.matches_re(r"^[A-Za-z_][A-Za-z0-9_]*$"))
    )
    structured_output: StructuredOutput = attrs.field(
        default="auto",
        validator=v.in_(("auto", "json_schema", "json_object_schema", "json_object", "prompt")),
    )
    max_repairs: int = attrs.field(default=2, validator=bounded(0, 10))
    max_retries: int = attrs.field(default=4, validator=bounded(0, 100))
    backoff_base_s: float = attrs.field(default=1.0, validator=bounded(0.0, 3600.0))
    backoff_max_s: float = attrs.field(default=30.0, validator=bounded(0.0, 86_400.0))
    max_concurrency: int = attrs.field(default=4, validator=bounded(1, 256))
    requests_per_minute: int | None = attrs.field(
        default=None, validator=v.optional(bounded(1, 1_000_000)))
    cache_dir: str | None = None
    # 600: the longest string bound llama.cpp's grammar parser reliably accepts
    max_string_chars: int | None = attrs.field(default=400,
                                               validator=bounded(1, 600, or_none=True))
