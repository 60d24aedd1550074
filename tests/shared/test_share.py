"""explorer/share.py: the shared address (every setting, the public host behind a proxy,
nothing malformed let through) and its QR code (decoded, and module by module)."""

from __future__ import annotations

import io
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
import segno
from PIL import Image
from support.queries import settings_from_query, settings_to_query

from explorer import share
from explorer.settings import Settings

zxingcpp = pytest.importorskip("zxingcpp")

#: A view far from the defaults, with page controls of two pages and a typed list.
SETTINGS = Settings(d=512, n=1e6, L=2048, layout="concatenated", convention="tensor2tensor")
PAGE_CONTROLS = {"wave_positions": "0,4,8,12", "k": "37", "code": "true", "present": "true"}
PROXY = {"Host": "127.0.0.1:8501"}


def query_of(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


def test_the_address_holds_every_setting_and_reads_back_to_the_same_view() -> None:
    query = settings_to_query(SETTINGS) | PAGE_CONTROLS
    url = share.share_url("https://class.example.org/waves", PROXY, "waves", query)
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "class.example.org", "/waves")
    read_back = query_of(url)
    settings, notices = settings_from_query(read_back)
    assert settings == SETTINGS and not notices
    # Page controls travel as they are; presentation mode stays on the teacher's screen.
    page_values = {key: values[-1] for key, values in read_back.items() if key not in settings_to_query(SETTINGS)}
    assert page_values == {key: value for key, value in PAGE_CONTROLS.items() if key != share.PRESENT_KEY}


def test_text_with_spaces_and_symbols_survives_the_round_trip() -> None:
    typed = "the cat sat & the dog = 2 + 2 / ?#"
    url = share.share_url("http://h.example/embeddings", {}, "embeddings", {"sentence": typed})
    assert query_of(url) == {"sentence": [typed]}
    assert " " not in url and "#" not in urlsplit(url).query + urlsplit(url).path


def test_default_view_of_the_default_page_is_the_bare_address() -> None:
    assert share.share_url("http://h.example:8080/", {}, "", {}) == "http://h.example:8080/"
    assert share.share_url("http://h.example:8080", {}, "", {"present": "true"}) == "http://h.example:8080/"


def test_the_browsers_address_wins_and_loses_its_own_query_and_fragment() -> None:
    url = share.share_url(
        "https://public.example/app/matrix?d=2#top", {"Origin": "http://other.example"}, "matrix", {"d": "64"}
    )
    assert url == "https://public.example/app/matrix?d=64"


@pytest.mark.parametrize(
    "browser_url",
    [
        None, "", "javascript:alert(1)", "ftp://h.example/waves", "http://user:pw@h.example/waves",
        "http://h.example/wa ves", "http://<script>/waves", "http://h.example/<b>", "http:///waves",
        "http://h.example:99999/waves", "http://" + "a" * 3000 + ".example/",
    ],
)
def test_a_missing_or_malformed_browser_address_falls_back_to_the_headers(browser_url: str | None) -> None:
    url = share.share_url(browser_url, {"Origin": "https://class.example.org"}, "waves", {"d": "64"})
    assert url == "https://class.example.org/waves?d=64"


@pytest.mark.parametrize(
    ("headers", "origin"),
    [
        ({"Origin": "https://class.example.org"}, "https://class.example.org"),
        ({"origin": "http://10.0.0.5:8080"}, "http://10.0.0.5:8080"),
        # A proxy's view of the client's request, when there is no Origin.
        ({"X-Forwarded-Proto": "https", "X-Forwarded-Host": "class.example.org", "Host": "127.0.0.1:8501"},
         "https://class.example.org"),
        ({"X-Forwarded-Proto": "https, http", "X-Forwarded-Host": "a.example, b.example"}, "https://a.example"),
        ({"Forwarded": 'for=1.2.3.4;proto=https;host="class.example.org", for=5.6.7.8', "Host": "x:1"},
         "https://class.example.org"),
        ({"Host": "explorer.example.org"}, "http://explorer.example.org"),
        ({"Host": "[::1]:8501"}, "http://[::1]:8501"),
        # An Origin with a path is not an origin; the next source is used.
        ({"Origin": "https://a.example/x", "Host": "b.example"}, "http://b.example"),
    ],
)
def test_public_origin_from_headers(headers: dict[str, str], origin: str) -> None:
    assert share.public_origin(headers) == origin


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Host": "evil.example/<script>"},
        {"Host": "a b"},
        {"X-Forwarded-Proto": "javascript", "Host": "h.example"},
        {"Origin": "null"},
        {"Host": "h.example:0"},
    ],
)
def test_unusable_headers_give_no_address(headers: dict[str, str]) -> None:
    assert share.public_origin(headers) is None
    assert share.share_url(None, headers, "waves", {}) is None


def test_without_the_browsers_address_the_page_path_comes_from_the_page() -> None:
    assert share.share_url(None, {"Host": "h.example"}, "similarity", {"ref": "5"}) == "http://h.example/similarity?ref=5"
    assert share.share_url(None, {"Host": "h.example"}, "", {}) == "http://h.example/"


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:8501/", True), ("http://127.0.0.1:8501/waves", True), ("http://[::1]:8501/", True),
        ("http://app.localhost/", True), ("http://10.0.0.5:8501/", False), ("https://class.example.org/", False),
    ],
)
def test_is_local(url: str, local: bool) -> None:
    assert share.is_local(url) is local


def modules_of(png: bytes) -> tuple[np.ndarray, int]:
    """The QR image read back as a grid of dark modules (sampled at each module's centre), and its scale."""
    image = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    assert image.shape[0] == image.shape[1]
    dark_columns = np.flatnonzero((image < 128).any(axis=0))
    # The finder pattern's 7-module-wide dark border starts the code after the quiet zone.
    first = int(dark_columns[0])
    scale = first // share.QR_QUIET_ZONE
    side = image.shape[0] // scale - 2 * share.QR_QUIET_ZONE
    centres = first + scale * np.arange(side) + scale // 2
    return image[np.ix_(centres, centres)] < 128, scale


URLS = [
    "http://h.example/",
    "https://class.example.org/waves?d=512&n=1000000&L=2048&layout=concatenated&convention=tensor2tensor"
    "&wave_positions=0%2C4%2C8%2C12&k=37&code=true",
    "https://class.example.org/embeddings?sentence=" + "the+cat+sat+on+the+mat+" * 20,
]


@pytest.mark.parametrize("url", URLS, ids=["short", "every-setting", "long-text"])
def test_the_qr_code_decodes_to_the_address_and_is_big(url: str) -> None:
    png = share.qr_png(url)
    image = Image.open(io.BytesIO(png))
    assert min(image.size) >= share.QR_MIN_SIDE_PX
    (result,) = zxingcpp.read_barcodes(image)
    assert result.text == url
    assert result.format == zxingcpp.BarcodeFormat.QRCode  # never Micro QR


@pytest.mark.parametrize("url", URLS, ids=["short", "every-setting", "long-text"])
def test_the_qr_image_is_segnos_matrix_with_a_quiet_zone(url: str) -> None:
    png = share.qr_png(url)
    grid, scale = modules_of(png)
    expected = np.array(segno.make(url, error="l", micro=False).matrix, dtype=bool)
    assert scale >= share.QR_MIN_MODULE_PX
    np.testing.assert_array_equal(grid, expected)
    # Quiet zone: the whole margin is light.
    image = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    margin = share.QR_QUIET_ZONE * scale
    assert (image[:margin] > 128).all() and (image[:, :margin] > 128).all()
    assert (image[-margin:] > 128).all() and (image[:, -margin:] > 128).all()


def test_the_code_uses_the_strongest_error_correction_its_size_allows() -> None:
    url = URLS[1]
    code = share.qr_code(url)
    smallest = segno.make(url, error="l", boost_error=False, micro=False)
    assert code.version == smallest.version
    stronger = {"L": "M", "M": "Q", "Q": "H"}.get(code.error)
    if stronger is not None:  # the next level would need a larger code
        assert segno.make(url, error=stronger.lower(), boost_error=False, micro=False).version != code.version


def test_an_address_too_long_for_a_qr_code_gives_none() -> None:
    assert share.qr_png("https://h.example/?t=" + "x" * 3000) is None
