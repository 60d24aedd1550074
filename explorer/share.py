"""The Share panel's address and QR code, without Streamlit.

The address a room must open is the one the teacher's browser is using: through a
reverse proxy, a replica only knows itself as 127.0.0.1:8501. So the address comes, in
order, from what the browser reports (st.context.url, its own location), from the
WebSocket's Origin header (set by the browser, the page's scheme, host and port), and
last from the proxy's forwarding headers or Host. None of these is trusted: each must be
a plain http(s) address with a well-formed host, or it is passed over. The result is
shown with st.code and st.image only, never as HTML.
"""

from __future__ import annotations

import io
import ipaddress
import math
import re
from collections.abc import Mapping
from urllib.parse import urlencode, urlsplit

import segno

#: URL key of presentation mode (a bool control, like the page toggles).
PRESENT_KEY = "present"
#: Keys left out of a shared address: presentation mode is how the teacher's screen looks,
#: not the view; a student's phone opens the same view with its controls.
NOT_SHARED = frozenset({PRESENT_KEY})

#: A host as a URL may carry it: a DNS name, an IPv4 address or a bracketed IPv6 address,
#: with an optional port. Nothing else (no user info, no spaces, no markup).
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?"
)
#: A URL path as Streamlit serves pages: slash-separated segments of safe characters.
_PATH = re.compile(r"(?:/[A-Za-z0-9._~%-]+)*/?")
MAX_URL_LENGTH = 2000


def _clean_origin(scheme: str, host: str) -> str | None:
    scheme, host = scheme.strip().lower(), host.strip()
    if scheme not in ("http", "https") or not _HOST.fullmatch(host):
        return None
    port = host.rsplit(":", 1)[1] if ":" in host and not host.endswith("]") else None
    if port is not None and not 0 < int(port) < 65536:
        return None
    return f"{scheme}://{host.lower()}"


def _clean_url(url: str | None) -> tuple[str, str] | None:
    """(origin, path) of an absolute http(s) URL, its query and fragment dropped; None if unusable."""
    if not url or len(url) > MAX_URL_LENGTH:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    origin = _clean_origin(parts.scheme, parts.netloc)
    if origin is None or not _PATH.fullmatch(parts.path):
        return None
    return origin, parts.path.rstrip("/")


def _first(headers: Mapping[str, str], name: str) -> str:
    """A header's first value (proxies append theirs after a comma), '' when absent."""
    for key, value in headers.items():
        if key.lower() == name:
            return str(value).split(",")[0].strip()
    return ""


def _forwarded(headers: Mapping[str, str]) -> tuple[str, str]:
    """(proto, host) of the first hop of an RFC 7239 Forwarded header, '' where absent."""
    first_hop = _first(headers, "forwarded")
    fields = dict(
        (name.strip().lower(), value.strip().strip('"'))
        for name, _, value in (part.partition("=") for part in first_hop.split(";"))
    )
    return fields.get("proto", ""), fields.get("host", "")


def public_origin(headers: Mapping[str, str]) -> str | None:
    """scheme://host[:port] the browser used, from the WebSocket's request headers, or None.

    Origin first (the browser sets it; scripts cannot), then Forwarded, X-Forwarded-Proto
    and X-Forwarded-Host (a proxy's view of the client's request), then Host.
    """
    origin = _clean_url(_first(headers, "origin"))
    if origin is not None and origin[1] == "":
        return origin[0]
    proto, host = _forwarded(headers)
    proto = proto or _first(headers, "x-forwarded-proto") or "http"
    host = host or _first(headers, "x-forwarded-host") or _first(headers, "host")
    return _clean_origin(proto, host) if host else None


def share_url(
    browser_url: str | None, headers: Mapping[str, str], page_path: str, query: Mapping[str, str]
) -> str | None:
    """The absolute address of this view: the page's public address plus every setting.

    ``browser_url`` is the page's address as the browser reports it (st.context.url: no
    query); when it is missing or malformed, the origin comes from ``headers`` and the
    path is ``page_path`` (the page's URL path, '' for the default page). ``query`` holds
    the settings that differ from their defaults; NOT_SHARED keys are dropped. None when
    no usable address is known.
    """
    from_browser = _clean_url(browser_url)
    if from_browser is not None:
        origin, path = from_browser
    else:
        origin = public_origin(headers)
        if origin is None:
            return None
        path = f"/{page_path.strip('/')}" if page_path.strip("/") else ""
    shared = {key: value for key, value in query.items() if key not in NOT_SHARED}
    page = f"{origin}{path or '/'}"
    return f"{page}?{urlencode(shared)}" if shared else page


def is_local(url: str) -> bool:
    """True when the address names this computer only (localhost, 127.x, ::1): a room cannot open it."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: Light margin around the code, in modules: the QR standard's quiet zone.
QR_QUIET_ZONE = 4
#: Smallest side of the QR image in pixels: a projected code this size spans a good part of
#: the screen, and each module is drawn as at least QR_MIN_MODULE_PX pixels. The Share panel
#: shows it as large as the screen's height allows beside the address (explorer/ui/style.py):
#: 560 px on a 1280 x 720 projector, 510 in presentation mode's larger type.
QR_MIN_SIDE_PX = 480
QR_MIN_MODULE_PX = 6


def qr_code(url: str) -> segno.QRCode:
    """The QR code of ``url``: a full-size QR (never Micro QR, which phones often cannot read),
    the smallest version that holds it, with the strongest error correction that version allows."""
    return segno.make(url, error="l", boost_error=True, micro=False)


def qr_scale(code: segno.QRCode) -> int:
    """Pixels per module so that the image, quiet zone included, is at least QR_MIN_SIDE_PX wide."""
    modules = code.symbol_size(scale=1, border=QR_QUIET_ZONE)[0]
    return max(QR_MIN_MODULE_PX, math.ceil(QR_MIN_SIDE_PX / modules))


def qr_png(url: str) -> bytes | None:
    """The QR code of ``url`` as a black-on-white PNG with its quiet zone (see qr_scale), or
    None when the address is longer than a QR code holds (about 2,900 bytes)."""
    try:
        code = qr_code(url)
    except segno.DataOverflowError:
        return None
    buffer = io.BytesIO()
    code.save(buffer, kind="png", scale=qr_scale(code), border=QR_QUIET_ZONE, dark="#000000", light="#ffffff")
    return buffer.getvalue()

