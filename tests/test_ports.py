"""tests/ports.py: servers of parallel pytest-xdist workers never fail on a port another one took."""
import socket
import sys
import urllib.request

import pytest

import ports


def serving(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def http_server(port):
    return [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]


def test_a_server_whose_port_was_taken_starts_again_on_a_new_port(tmp_path, monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        picks = iter([taken.getsockname()[1]])
        real = ports.free_port
        monkeypatch.setattr(ports, "free_port", lambda: next(picks, None) or real())
        proc, port = ports.serve_on_free_port(http_server, serving, tmp_path / "log", timeout=30,
                                              cwd=tmp_path)
        try:
            assert port != taken.getsockname()[1] and serving(port)
        finally:
            ports.stop(proc)
    assert proc.poll() is not None


def test_a_server_failing_for_another_reason_is_not_retried(tmp_path):
    with pytest.raises(RuntimeError, match="(?s)exited .*attempt 1.*No module named no_such_module"):
        ports.serve_on_free_port(lambda port: [sys.executable, "-m", "no_such_module"], serving,
                                 tmp_path / "log", timeout=30)


def test_a_closed_port_refuses_connections_and_no_one_else_can_take_it(closed_port):
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", closed_port), timeout=2)
    with socket.socket() as other, pytest.raises(OSError):
        other.bind(("127.0.0.1", closed_port))
