"""JudgeCache: real SQLite files — hits, misses, keys, threads, persistence, bad files."""
import sqlite3
import threading

import pytest

from evaluator.judges.cache import JudgeCache, cache_key
from evaluator.errors import JudgeConfigError


def key(prompt="p", model="m", base_url="http://127.0.0.1:8000/v1", temperature=0.0):
    return cache_key(base_url, model, temperature, prompt)


def test_put_then_get_counts_hits_and_misses(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite")
    assert cache.get(key()) is None
    cache.put(key(), '{"score": 1}')
    assert cache.get(key()) == '{"score": 1}'
    assert (cache.hits, cache.misses, len(cache)) == (1, 1, 1)


@pytest.mark.parametrize("changed", [
    {"model": "other-model"},
    {"base_url": "http://127.0.0.1:9000/v1"},
    {"temperature": 0.7},
    {"prompt": "p "},
])
def test_key_changes_with_each_part(changed):
    assert key(**changed) != key()


def test_key_ignores_a_trailing_slash_on_the_base_url():
    assert key(base_url="http://h/v1/") == key(base_url="http://h/v1")


def test_empty_replies_are_not_cached(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite")
    cache.put(key(), "")
    cache.put(key(), "   ")
    assert len(cache) == 0


def test_entries_survive_reopening_and_parent_dirs_are_created(tmp_path):
    path = tmp_path / "deep" / "er" / "c.sqlite"
    JudgeCache(path).put(key(), "reply")
    assert JudgeCache(path).get(key()) == "reply"


def test_file_is_wal_and_holds_no_prompt_text(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = JudgeCache(path)
    cache.put(key(prompt="SECRET-PROMPT-TEXT"), "reply")
    cache.close()
    assert b"SECRET-PROMPT-TEXT" not in path.read_bytes()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_file_that_is_not_sqlite_gives_a_clear_error(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database, just some text" * 100)
    with pytest.raises(JudgeConfigError, match=r"c\.sqlite.*(Delete|another cache path)"):
        JudgeCache(path)


def test_an_unwritable_location_gives_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(JudgeConfigError, match="Cannot use judge cache file"):
        JudgeCache(blocker / "sub" / "c.sqlite")  # a parent is a file


def test_many_threads_share_one_cache(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite")
    errors = []

    def work(n):
        try:
            for i in range(50):
                cache.put(key(prompt=f"{n}-{i}"), f"reply {n}-{i}")
                assert cache.get(key(prompt=f"{n}-{i}")) == f"reply {n}-{i}"
        except Exception as exc:  # collected so the main thread can fail loudly
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(cache) == 400 and cache.hits == 400


def test_a_closed_cache_misses_and_drops_writes_without_raising(tmp_path, caplog):
    cache = JudgeCache(tmp_path / "c.sqlite")
    cache.put(key(), "reply")
    cache.close()
    assert cache.get(key()) is None
    cache.put(key(prompt="q"), "reply")
    assert cache.stats()["write_errors"] == 1
    assert "could not be written" in caplog.text


def test_clear_forgets_everything(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite")
    cache.put(key(), "reply")
    cache.clear()
    assert cache.get(key()) is None


def test_forget_drops_one_reply(tmp_path):
    cache = JudgeCache(tmp_path / "c.sqlite3")
    cache.put("a", "prose, no score")
    cache.put("b", '{"score": 1}')
    cache.forget("a")
    assert cache.get("a") is None and cache.get("b") == '{"score": 1}'
