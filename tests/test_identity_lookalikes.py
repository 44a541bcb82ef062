"""Issue 42, names that cannot pass for others: through the proxy's header (as Tornado hands its bytes over)
and OIDC claims, with the operator's real team file read by evaluator.config, decided by team/startup."""
import pytest

from evaluator import config
from evaluator.errors import ConfigError
from evaluator.team import startup
from teamfiles import team_toml

ADMIN = "alice@example.com"
LOCAL = startup.ServerOptions(address="127.0.0.1", max_upload_mb=50)


def team(tmp_path, **server):
    path = tmp_path / "team.toml"
    text = team_toml(evaluators=["bob@example.com", "carol"], admins=[ADMIN, "root"], max_upload_mb=50)
    if server:
        text = text.replace("[server]\n", "[server]\n" + "".join(f"{k} = {v}\n" for k, v in server.items()), 1)
    path.write_text(text, encoding="utf-8")
    return config.load(path)


def header(name: str):
    """The handshake's headers as Streamlit's Tornado hands them over: UTF-8 bytes read as Latin-1."""
    return [("X-Forwarded-Email", name.encode("utf-8").decode("latin-1"))]


def via_proxy(cfg, name):
    return startup.request_identity(cfg, LOCAL, header(name), "127.0.0.1", {}, {})


@pytest.mark.parametrize("sent, user, reason", [
    ("alice@example.com", ADMIN, ""),
    ("ALICE@Example.COM", ADMIN, ""),  # ASCII case is one person
    ("ａlice@example.com", None, "FULLWIDTH LATIN SMALL LETTER A"),  # the issue's: it signed in as the admin
    ("alice@exａmple.com", None, "Unicode folding"),
    ("ali\u0307ce@example.com", None, "looks like"),  # a combining dot above the i: the same skeleton
    ("a1ice@example.com", None, "looks like 'alice@example.com'"),  # a digit standing in for a letter
    ("aIice@example.com", None, "looks like 'alice@example.com'"),  # capital I for l
    ("аlісе", None, "mixes letters"),  # Cyrillic а, і, с, е with a Latin l
    ("ааа", "ааа", ""),  # one script, like no [roles] name: a person of their own
    ("ѕаrаh@example.com", None, "mixes letters"),
    ("rnallory@example.com", "rnallory@example.com", ""),  # looks like no [roles] name
    ("root", "root", ""),
    ("r00t", None, "looks like 'root'"),
    ("caro1", None, "looks like 'carol'"),
])
def test_the_proxy_header_cannot_name_someone_else(tmp_path, sent, user, reason):
    decision = via_proxy(team(tmp_path), sent)
    assert decision.user == user
    assert reason in decision.problem and (user is None) == bool(decision.problem)


def test_an_all_cyrillic_look_alike_of_a_roles_name_is_refused_with_the_reason(tmp_path):
    cfg = team(tmp_path)
    decision = via_proxy(cfg, "саrоl")  # Cyrillic с, а, о and Latin r, l: mixed, refused
    assert decision.user is None and "mixes letters" in decision.problem
    lookalike = "сагоӏ"  # every letter Cyrillic: one script, but it reads "carol"
    decision = via_proxy(cfg, lookalike)
    assert decision.user is None and "looks like 'carol'" in decision.problem


def test_an_operator_may_fold_unicode_names_into_one_spelling(tmp_path):
    cfg = team(tmp_path, fold_unicode_names="true")
    assert via_proxy(cfg, "ａlice@example.com").user == ADMIN  # the operator's choice, in the team file
    assert via_proxy(cfg, "Straße@example.de").user == "strasse@example.de"
    assert via_proxy(cfg, "a1ice@example.com").user is None  # look-alikes stay refused


@pytest.mark.parametrize("claims, user, reason", [
    ({"preferred_username": "alice@example.com"}, ADMIN, ""),
    ({"preferred_username": "Alice@Example.com"}, ADMIN, ""),
    ({"preferred_username": "ａlice@example.com"}, None, "FULLWIDTH"),  # any user may pick such a name
    ({"preferred_username": "a1ice@example.com"}, None, "looks like"),
    ({"preferred_username": "ａｌｉｃｅ"}, None, "Unicode folding"),
])
def test_an_oidc_claim_the_user_chose_cannot_name_someone_else(tmp_path, claims, user, reason):
    path = tmp_path / "team.toml"
    path.write_text(team_toml(auth="oidc", admins=[ADMIN], max_upload_mb=50).replace(
        "[server]\n", '[server]\nidentity_claim = "preferred_username"\n', 1), encoding="utf-8")
    decision = startup.request_identity(config.load(path), LOCAL, [], None, {"is_logged_in": True, **claims}, {})
    assert decision.user == user and reason in decision.problem


def test_a_roles_name_folding_would_change_is_refused_when_the_file_is_read(tmp_path):
    path = tmp_path / "team.toml"
    path.write_text(team_toml(admins=["ａlice@example.com"]), encoding="utf-8")
    with pytest.raises(ConfigError, match="roles.admins: 'ａlice@example.com' cannot be a user name"):
        config.load(path)
