"""Images in the note view: ``![alt](path.png)``, ``![[diagram.png]]`` (``|300``, ``|300x200``: its
size) and raw ``<img src>``. A web image loads from its address; an image file of the local vault
is shown from it (``/api/attachments/…``), lazily and never wider than the note. An image the
vault folder does not hold (a docs site's ``/img/`` lies outside ``docs/``; a GitHub vault has no
files here) is a small box saying so, with its description: never a link to a missing note."""

from __future__ import annotations

import posixpath
import re

from markdown_it.common.utils import escapeHtml

from knowledge_assets.api.attachments import attachment_url, is_image
from knowledge_assets.core.links.resolve import NoteLinks

__all__ = ["NOT_IN_VAULT", "image_html", "is_image", "size"]

NOT_IN_VAULT = "画像はボールトにありません"
_SIZE = re.compile(r"(\d{1,5})(?:x(\d{1,5}))?")


def size(label: str | None) -> tuple[str | None, str | None]:
    """The width and height an embed's ``|300`` or ``|300x200`` gives (None: not a size)."""
    match = _SIZE.fullmatch((label or "").strip())
    return (match[1], match[2]) if match else (None, None)


def image_html(
    links: NoteLinks, target: str, alt: str, *, relative: bool,
    width: str | None = None, height: str | None = None,
) -> str:  # fmt: skip
    """An ``<img>`` of the vault's image ``target`` names from the linking note, or the box
    saying the vault does not hold it."""
    found = links.image(target, relative=relative)
    if found is None:
        name = escapeHtml(posixpath.basename(target.rstrip("/")) or target)
        described = f'<span class="image-alt">{escapeHtml(alt)}</span>' if alt.strip() else ""
        return f'<span class="image-missing">{NOT_IN_VAULT}: {name}{described}</span>'
    attrs = f'src="{escapeHtml(attachment_url(found))}" alt="{escapeHtml(alt)}"'
    attrs += "".join(f' {k}="{v}"' for k, v in (("width", width), ("height", height)) if v)
    return f'<img class="vault-image" {attrs} loading="lazy" decoding="async" />'
