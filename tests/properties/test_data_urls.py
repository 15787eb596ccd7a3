"""Property tests of how the legacy import reads a ``data:`` URL's base64 body.

For any bytes, base64 broken into lines or groups by any ASCII whitespace, with or
without its ``=`` padding, must decode to exactly those bytes (as a browser decodes
it: WHATWG forgiving-base64); any other character outside the alphabet refuses it.
``test_legacy_import.py`` checks the same rules against Chromium's own ``fetch``.
"""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from panelot.legacy.convert import forgiving_base64, parse_data_url

WHITESPACE = st.text(alphabet=" \t\n\f\r", min_size=1, max_size=3)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.binary(max_size=300),
    st.integers(1, 80),
    WHITESPACE,
    st.booleans(),
    st.sampled_from(["image/png", "IMAGE/JPEG", ""]),
)
def test_wrapped_spaced_or_unpadded_base64_decodes_to_its_bytes(
    data: bytes, width: int, gap: str, unpadded: bool, mime: str
) -> None:
    body = base64.b64encode(data).decode()
    if unpadded:
        body = body.rstrip("=")
    wrapped = gap.join(body[i : i + width] for i in range(0, len(body), width))
    assert forgiving_base64(f"{gap}{wrapped}{gap}") == data
    assert parse_data_url(f"data:{mime};base64,{wrapped}") == (mime.lower() or None, data)


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(min_size=1, max_size=60), st.data())
def test_a_character_outside_the_alphabet_refuses_the_body(
    data: bytes, draw: st.DataObject
) -> None:
    body = base64.b64encode(data).decode().rstrip("=")
    stray = draw.draw(
        st.characters(
            exclude_characters="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \t\n\f\r"
        )
    )
    at = draw.draw(st.integers(0, len(body)))
    assert forgiving_base64(body[:at] + stray + body[at:]) is None
    assert parse_data_url(f"data:image/png;base64,{body[:at]}{stray}{body[at:]}") != (
        "image/png",
        data,
    )


def test_a_lone_surrogate_in_the_body_refuses_it() -> None:
    """A lone surrogate is read as U+FFFD, as TextEncoder writes it: no error.

    Found by build.py fuzz (a stray character drawn as a lone surrogate raised
    UnicodeEncodeError): U+FFFD is outside the alphabet, so the base64 body is refused,
    and a plain body keeps U+FFFD's bytes.
    """
    assert parse_data_url("data:image/png;base64,\ud800AA") == ("image/png", None)
    assert parse_data_url("data:text/plain,a\udc00b") == ("text/plain", "a\ufffdb".encode())
