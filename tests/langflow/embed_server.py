#!/usr/bin/env python3
"""An OpenAI-compatible ``POST /v1/embeddings`` answering with the oracle's embedder.

    embed_server.py [--fail | --delay SECONDS]

Serves on 127.0.0.1 at a free port and prints ``http://127.0.0.1:PORT`` as its first line on
stdout; runs until killed. Vectors come from langchain-core's ``DeterministicFakeEmbedding`` of
``lfbase.EMBEDDING_DIM`` dimensions, the embedder ``build_db.py`` patches into Langflow, so what
memscope writes into a Langflow knowledge base is what Langflow's own ingestion would have
written. ``--fail`` answers every request with HTTP 503 (an embedder that is down); ``--delay``
answers each request that much later (a slow embedder, to cancel a sync while it runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lfbase  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fail", action="store_true", help="answer HTTP 503 to every request")
    p.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each answer")
    args = p.parse_args()

    from langchain_core.embeddings import DeterministicFakeEmbedding

    embedder = DeterministicFakeEmbedding(size=lfbase.EMBEDDING_DIM)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            if args.fail or not self.path.endswith("/embeddings"):
                self.send_response(503 if args.fail else 404)
                self.end_headers()
                return
            time.sleep(args.delay)
            texts = request.get("input") or []
            if isinstance(texts, str):
                texts = [texts]
            data = [
                {"object": "embedding", "index": i, "embedding": [float(x) for x in embedder.embed_query(t)]}
                for i, t in enumerate(texts)
            ]
            body = json.dumps({"object": "list", "data": data, "model": request.get("model")}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args):  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
