"""Which LLM answers questions, read from the environment.

Nothing is sent anywhere unless a provider is chosen explicitly (seed 001: local first, external
APIs only with the user's consent). ``KA_LLM_PROVIDER`` is ``anthropic`` (Claude through the
``anthropic`` SDK) or ``openai`` (any OpenAI-compatible chat endpoint: OpenAI, OpenRouter, Ollama,
through the ``openai`` SDK); unset or ``none`` means the offline extractive answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge_assets.core.settings import address_problem, env, env_number

PROVIDERS = ("none", "anthropic", "openai")
# Each default is the newest mid-size model the installed SDK names: claude-sonnet-4-5 reaches its
# end of life on 2026-11-30 (retirement_notice() warns about a configured model that retires);
# gpt-5.4-mini follows gpt-4o-mini. Any reasoning it does counts against KA_LLM_MAX_TOKENS (sent
# as max_completion_tokens); an answer the limit cut short carries a warning saying so.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-5.4-mini"}
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
EXTRACTIVE_MODEL = "extractive"


class LLMConfigError(ValueError):
    """The LLM settings are incomplete or contradictory; the message says what to set."""


@dataclass(frozen=True)
class LLMSettings:
    """Provider, model, endpoint and limits of the answering LLM.

    The API key is kept out of ``repr`` so that it never reaches a log or a traceback.
    """

    provider: str = "none"
    model: str = EXTRACTIVE_MODEL
    base_url: str | None = None
    api_key: str = field(default="", repr=False)
    timeout_s: float = 30.0
    max_retries: int = 3
    max_retry_after_s: float = 20.0
    max_output_tokens: int = 1024

    @property
    def offline(self) -> bool:
        """True when no LLM is configured: answers are extracted from the notes."""
        return self.provider == "none"

    @classmethod
    def from_env(cls) -> LLMSettings:
        """``KA_LLM_PROVIDER``, ``KA_LLM_MODEL``, ``KA_LLM_BASE_URL``, ``KA_LLM_API_KEY`` (else
        ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``), ``KA_LLM_TIMEOUT`` (seconds, default 30),
        ``KA_LLM_MAX_RETRIES`` (default 3) and ``KA_LLM_MAX_TOKENS`` (answer length, 1024)."""
        provider = env("KA_LLM_PROVIDER", "none").lower()
        if provider not in PROVIDERS:
            raise LLMConfigError(
                f"KA_LLM_PROVIDER={provider!r} is not one of {', '.join(PROVIDERS)}"
            )
        if provider == "none":
            return cls()
        base_url = env("KA_LLM_BASE_URL") or None
        if base_url and (wrong := address_problem("KA_LLM_BASE_URL", base_url)):
            raise LLMConfigError(wrong)
        key = env("KA_LLM_API_KEY") or env(KEY_ENV[provider])
        if not key and provider == "openai" and base_url:
            key = "unused"  # local OpenAI-compatible servers (Ollama) accept any key
        if not key:
            raise LLMConfigError(
                f"KA_LLM_PROVIDER={provider} needs an API key: set {KEY_ENV[provider]} "
                "(or KA_LLM_API_KEY), or unset KA_LLM_PROVIDER for offline answers"
            )
        try:
            return cls(
                provider=provider,
                model=env("KA_LLM_MODEL", DEFAULT_MODELS[provider]),
                base_url=base_url,
                api_key=key,
                timeout_s=env_number("KA_LLM_TIMEOUT", 30, low=0.1, high=3600),
                max_retries=int(env_number("KA_LLM_MAX_RETRIES", 3, low=0, high=20, whole=True)),
                max_output_tokens=int(
                    env_number("KA_LLM_MAX_TOKENS", 1024, low=1, high=200_000, whole=True)
                ),
            )
        except ValueError as exc:
            raise LLMConfigError(f"bad LLM setting: {exc}") from None


def retirement_notice(settings: LLMSettings) -> str | None:
    """A warning for answers when the provider has announced the model's end of life, else None.

    The ``anthropic`` SDK ships the retirement dates it knows (``DEPRECATED_MODELS``) and warns
    with Python's DeprecationWarning, which a command line or server never shows: the first a
    user would hear of it is the day every question fails. Other providers publish no such list.
    """
    if settings.provider != "anthropic":
        return None
    try:
        from anthropic.resources.messages import DEPRECATED_MODELS
    except ImportError:  # an SDK without the list: nothing to say
        return None
    retires = DEPRECATED_MODELS.get(settings.model)
    if not retires:
        return None
    return (
        f"Anthropic retires {settings.model} on {retires}: set KA_LLM_MODEL to a current model"
        f" (unset, it is {DEFAULT_MODELS['anthropic']})"
    )
