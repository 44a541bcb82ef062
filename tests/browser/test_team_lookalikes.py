"""Issue 42, names that cannot pass for others, in real Chromium through a real sign-in proxy (its header
as UTF-8 bytes on the wire) against the real team dashboard: a full-width "ａlice@example.com" used to
sign in as the admin "alice@example.com"; now it and a digit look-alike are refused with the reason."""
from __future__ import annotations

import re

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the conftest's fixtures skip or fail
    pass

from .test_team_identity import ADMIN, SIGN_IN, as_user, local, open_page, signed_in  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("sent, reason", [
    ("\uff41lice@example.com", "FULLWIDTH LATIN SMALL LETTER A"),
    ("a1ice@example.com", "a different name in this dashboard's roles"),  # the page breaks the address's '@'
])
def test_a_name_that_could_pass_for_the_admin_signs_nobody_in_and_says_why(local, as_user, sent, reason):
    fake = as_user(local, sent)
    open_page(fake, "/history", fake.page.get_by_text(SIGN_IN))
    expect(fake.page.get_by_text(re.compile(re.escape(reason)))).to_be_visible()
    expect(fake.page.get_by_text(re.compile("Signed in as"))).to_have_count(0)
    real = as_user(local, ADMIN)  # the admin herself, through the same kind of proxy
    open_page(real, "/history", signed_in(real, f"{ADMIN} (admin)"))
