"""`python -m evaluator.demo [--host H] [--port P]`: serve the demo pipeline over HTTP."""
from __future__ import annotations

import argparse
import sys

from .server import make_server


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m evaluator.demo", description="Serve ragmeter's demo RAG pipeline.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = make_server(args.host, args.port)
    host, port = str(server.server_address[0]), server.server_address[1]
    print(f"demo pipeline on http://{host}:{port}/ask (agent: /agent); Ctrl+C stops it", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
