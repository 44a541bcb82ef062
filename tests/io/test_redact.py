"""io.redact: what counts as a secret, removed before anything is stored or exported."""
from evaluator.io.redact import sanitize_settings

CANARY = "sk-canary-5f0e1d2c3b4a"


def test_sanitize_settings_drops_secrets_at_any_depth():
    settings = {
        "model": "gpt", "api_key": CANARY, "OPENAI_API_KEY": CANARY, "max_tokens": 256,
        "judge": {"Authorization": f"Bearer {CANARY}", "client_secret": CANARY, "temperature": 0.0},
        "headers": [{"X-Api-Key": CANARY, "Accept": "json"}], "token": CANARY, "db_password": CANARY,
        "base_url": f"https://user:{CANARY}@example.invalid/v1",
    }
    clean = sanitize_settings(settings)
    assert CANARY not in repr(clean)
    assert clean == {"model": "gpt", "max_tokens": 256, "judge": {"temperature": 0.0},
                     "headers": [{"Accept": "json"}], "base_url": "https://example.invalid/v1"}


def test_a_stored_judge_cache_path_is_exported_as_a_flag():
    from evaluator.io.redact import sanitize_settings

    old = {"judge": "openai", "cache": "/srv/ragmeter/.cache/judge-cache.sqlite3", "usage": {"cache": True}}
    assert sanitize_settings(old) == {"judge": "openai", "cache": True, "usage": {"cache": True}}
    assert sanitize_settings({"cache": ""}) == {"cache": False}
