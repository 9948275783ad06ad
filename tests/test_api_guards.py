"""What the HTTP API refuses, and how: requests addressed to another host (DNS rebinding), bodies
over the size limit, blank queries and overlong lists; every error in one JSON shape that never
echoes a large input; API docs that load nothing from another host; HEAD and the icon."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.api import ApiConfigError, ApiSettings
from knowledge_assets.api.schemas import MAX_FILTER_TAGS
from knowledge_assets.core.embedders import Embedder
from tests.api_support import api_server
from tests.browser_support import CHROMIUM, CHROMIUM_MISSING, chromium_page
from tests.fakes.llm_server import FakeLLMServer
from tests.test_api import _streamed

SEARCHES = ("/api/search/semantic", "/api/search/hybrid", "/api/search/keyword")


@pytest.fixture(scope="module")
def base(vault_url: str, usem3: Embedder) -> Iterator[str]:
    with api_server(vault_url, Asker(LLMSettings(), embedder=usem3), hosts=("notes.lan",)) as url:
        yield url


@pytest.fixture
def client(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=60) as c:
        yield c


def _port(base: str) -> int:
    port = urlsplit(base).port
    assert port is not None
    return port


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "notes.lan", "NOTES.LAN"])
def test_loopback_names_and_configured_hosts_are_answered(client: httpx.Client, base: str, host: str) -> None:  # fmt: skip
    for named in (host, f"{host}:{_port(base)}"):
        response = client.get("/api/tags", headers={"Host": named})
        assert response.status_code == 200 and response.json()["success"] is True


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "localhost.evil.example", "evil.example@localhost", "127.0.0.1.nip.io"])  # fmt: skip
@pytest.mark.parametrize("path", ["/api/tags", "/", "/openapi.json"])
def test_a_request_for_another_host_is_refused(client: httpx.Client, host: str, path: str) -> None:
    """A page whose own name was made to resolve to 127.0.0.1 sends that name: it reads nothing."""
    response = client.get(path, headers={"Host": host})
    assert response.status_code == 400
    body = response.json()
    assert (
        body["success"] is False and "KA_API_HOSTS" in body["error"] and "tag" not in response.text
    )


def test_hosts_are_configured_by_name_and_a_bad_entry_is_one_error(monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("KA_API_HOSTS", "notes.lan, bad host")
    with pytest.raises(ApiConfigError, match="KA_API_HOSTS: 'bad host' is not a host name"):
        ApiSettings.resolve("127.0.0.1", 8000)
    settings = ApiSettings("192.168.1.20", hosts=("notes.lan",))
    assert settings.answers_to("192.168.1.20:8000")  # the address it serves on
    assert settings.answers_to("notes.lan:8000") and not settings.answers_to("other.lan")


def test_a_body_over_the_limit_is_413_without_being_echoed(client: httpx.Client) -> None:
    big = json.dumps({"query": "x" * (2 * 1024 * 1024)}).encode()
    for sent in (big, iter([big[i : i + 65536] for i in range(0, len(big), 65536)])):  # chunked too
        response = client.post("/api/search/hybrid", content=sent, headers={"content-type": "application/json"})  # fmt: skip
        assert response.status_code == 413 and len(response.content) < 1000
        assert "1024 KiB" in response.json()["error"]


def test_a_validation_error_echoes_only_the_start_of_the_input(client: httpx.Client) -> None:
    for body, field in (({"query": "あ" * 300_000}, "query"), ({"query": "x" * 2001}, "query")):
        response = client.post("/api/search/hybrid", json=body)
        assert response.status_code == 422 and len(response.content) < 2000, response.text[:300]
        error = response.json()["detail"][0]
        assert error["loc"] == ["body", field] and "at most 2000 characters" in error["msg"]
        assert error["input"].endswith(f"… ({len(body[field]):,} characters)")


LONG = "a" * 20_000


@pytest.mark.parametrize("path", [f"/api/notes/{LONG}", f"/api/ai/similar/{LONG}", f"/api/backlinks/{LONG}", f"/api/attachments/{LONG}.png", f"/api/ai/qa/history/{LONG}", f"/api/notes/x.md?source={LONG}"])  # fmt: skip
def test_a_long_name_in_an_address_is_not_echoed_whole(client: httpx.Client, path: str) -> None:
    """A 404 quoted the path it found nothing at, whole, twice: 20,000 characters sent came back
    as 40,000."""
    response = client.get(path)
    assert response.status_code in (404, 422) and len(response.content) < 2000, len(response.content)  # fmt: skip
    error = response.json()["error"]
    assert "\n" not in error and (" characters)" in error or "at most 200" in error), error


@pytest.mark.parametrize("kind", ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"])  # fmt: skip
@pytest.mark.parametrize("path", [*SEARCHES, "/api/ai/qa"])
def test_a_body_sent_as_anything_but_json_is_415_saying_how_to_send_it(
    client: httpx.Client, path: str, kind: str
) -> None:
    """curl's -d sends a form: the JSON in it was refused as 'not a valid dictionary'. A form or
    plain text is also what a page of another site can post here without asking first."""
    before = client.get("/api/ai/qa/history").json()["total"]
    body = json.dumps({"question" if path == "/api/ai/qa" else "query": "ラーメン"})
    response = client.post(path, content=body, headers={"content-type": kind})
    assert response.status_code == 415, response.text
    error = response.json()["error"]
    assert error.startswith(f"the request body was sent as {kind.split(';')[0]!r}, not as JSON")
    assert "Content-Type: application/json" in error and "\n" not in error
    unlabelled = client.post(path, content=body)  # FastAPI reads no body without a type as JSON
    assert unlabelled.status_code == 415
    assert unlabelled.json()["error"].startswith("the request body was sent without a Content-Type")
    assert client.get("/api/ai/qa/history").json()["total"] == before  # nothing was answered
    for fine in ("application/json; charset=utf-8", "Application/JSON"):
        assert client.post(path, content=body, headers={"content-type": fine}).status_code == 200


@pytest.mark.parametrize("path", [*SEARCHES, "/api/ai/qa"])
def test_filter_tags_are_at_most_a_hundred(client: httpx.Client, path: str) -> None:
    def ask(tags: list[str]) -> httpx.Response:
        if path == "/api/ai/qa":
            return client.post(path, json={"question": "x", "options": {"tags": tags}})
        return client.post(path, json={"query": "x", "filters": {"tags": tags}})

    too_many = ask([f"t{i}" for i in range(MAX_FILTER_TAGS + 1)])
    assert too_many.status_code == 422 and len(too_many.content) < 2000
    assert "at most 100 items" in too_many.json()["error"]
    assert ask([f"t{i}" for i in range(MAX_FILTER_TAGS)]).status_code == 200


@pytest.mark.parametrize("query", ["", "   ", "\u3000\t", "\u200b"])
@pytest.mark.parametrize("path", SEARCHES)
def test_a_blank_query_is_422_like_an_empty_one(client: httpx.Client, path: str, query: str) -> None:  # fmt: skip
    response = client.post(path, json={"query": query})
    assert response.status_code == 422
    assert response.json()["error"] == "query: the query is empty: give the words to search for"


# Each error the API gives, with its status and words its message must hold.
# fmt: off
ERRORS = [
    ("GET", "/api/notes/nope.md", None, 404, "no current note at 'nope.md': name a note by its path"),
    ("GET", "/api/notes/nope.md?source=nowhere", None, 404, "unknown source 'nowhere'"),
    ("GET", "/api/ai/similar/nope.md", None, 404, "no current note at 'nope.md'"),
    ("POST", "/api/search/hybrid", {"limit": 0}, 422, "query: Field required; limit: Input should be greater than or equal to 1"),
    ("POST", "/api/search/hybrid", "{not json", 422, "the request body is not valid JSON"),
    # A range no note can match answered 200 and nothing, where the CLI says to swap the dates.
    ("POST", "/api/search/keyword", {"query": "x", "filters": {"dateRange": {"from": "2026-02-01", "to": "2026-01-01"}}}, 422, "from 2026-02-01 is after to 2026-01-01: no note can match; swap them"),
    ("GET", "/api/nowhere", None, 404, "nothing at GET /api/nowhere: the endpoints are listed at /docs"),
    ("GET", "/api/search/hybrid", None, 405, "GET /api/search/hybrid is not allowed: use POST"),
    ("GET", "/api/ai/qa/history/nope", None, 404, "GET /api/ai/qa/history lists the answers kept"),
]
# fmt: on


@pytest.mark.parametrize(("method", "path", "body", "status", "words"), ERRORS)
def test_every_error_has_one_shape(client: httpx.Client, method: str, path: str, body: object, status: int, words: str) -> None:  # fmt: skip
    content = body if isinstance(body, str) else json.dumps(body) if body is not None else None
    response = client.request(method, path, content=content, headers={"content-type": "application/json"})  # fmt: skip
    assert response.status_code == status
    reply = response.json()
    assert reply["success"] is False and words in reply["error"]
    assert reply["detail"] == reply["error"] or isinstance(reply["detail"], list)


def test_a_missing_token_is_401_in_the_same_shape(vault_url: str, usem3: Embedder) -> None:
    with api_server(vault_url, Asker(LLMSettings(), embedder=usem3), token="s3cret") as url:
        response = httpx.get(f"{url}/api/tags")
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    reply = response.json()
    assert reply["success"] is False and reply["detail"] == reply["error"]
    assert "Authorization: Bearer" in reply["error"] and "s3cret" not in response.text


def test_the_bearer_scheme_is_read_in_any_case(vault_url: str, usem3: Embedder) -> None:
    """RFC 9110: the scheme is case-insensitive; ``bearer <token>`` was refused with 401."""
    sent = ["Bearer s3cret", "bearer s3cret", "BEARER  s3cret", "Basic s3cret", "Bearer s3cre"]
    with api_server(vault_url, Asker(LLMSettings(), embedder=usem3), token="s3cret") as url:
        statuses = [
            httpx.get(f"{url}/api/tags", headers={"Authorization": a}).status_code for a in sent
        ]
    assert statuses == [200, 200, 200, 401, 401]


def test_the_api_docs_load_nothing_from_another_host(client: httpx.Client) -> None:
    html = client.get("/docs")
    assert html.status_code == 200
    assert not re.findall(r"(?:https?:)?//[\w.-]+", html.text)  # no address with a host
    assets = re.findall(r'(?:src|href)="([^"]+)"', html.text)
    assert any(a.endswith(".js") for a in assets)
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    assert client.get("/redoc").status_code == 404  # ReDoc's page fetches a logo from its maker


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason=CHROMIUM_MISSING)
def test_the_api_docs_show_the_endpoints_asking_only_this_server(base: str) -> None:
    asked: list[str] = []
    with chromium_page() as page:
        page.on("request", lambda request: asked.append(request.url))
        page.goto(f"{base}/docs")
        page.locator(".opblock").first.wait_for()
        assert page.locator(".opblock").count() >= 10  # Swagger UI ran and read /openapi.json
    assert asked and all(url.startswith(base) for url in asked), asked


def test_head_of_the_page_and_the_icon(client: httpx.Client) -> None:
    head = client.head("/")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"].startswith("text/html")
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    assert '<link rel="icon" href="/favicon.ico"' in client.get("/").text


def test_a_streamed_answer_that_fails_ends_with_an_error_in_the_same_shape(vault_url: str, usem3: Embedder) -> None:  # fmt: skip
    with FakeLLMServer() as llm:
        llm.fail(400)  # not retried
        settings = LLMSettings(provider="anthropic", model="claude-test", base_url=llm.anthropic_base_url, api_key=llm.api_key)  # fmt: skip
        with api_server(vault_url, Asker(settings, embedder=usem3)) as url, httpx.Client(base_url=url, timeout=60) as c:  # fmt: skip
            events = _streamed(c, "夜に何のラーメンを作った？")
    assert [kind for kind, _ in events] == ["retrieved", "error"]
    error = events[-1][1]
    assert error["success"] is False and error["error"] and error["detail"] == error["error"]
    assert llm.api_key not in json.dumps(error)


@pytest.mark.parametrize(
    ("host", "base"),
    [("127.0.0.1", "http://127.0.0.1:8000"), ("::1", "http://[::1]:8000")],
)
def test_serve_opens_with_addresses_a_terminal_can_open(host: str, base: str) -> None:
    """``serve --host ::1`` printed ``http://::1:8000/``, which no browser opens, and the API
    docs as a bare ``/docs``."""
    from knowledge_assets.api.server import banner

    assert banner(host, 8000, Asker(LLMSettings())) == (
        f"search page {base}/ · API docs {base}/docs"
        " · answers quote the notes (no LLM configured) · Ctrl-C stops"
    )
