"""A local HTTP server of recorded answers: `with Server() as s:` serves GET on 127.0.0.1 from the
subclass's `answer(url)` -> (status, body, content type); a body of bytes or text is sent as it is,
anything else as JSON."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import ParseResult, urlparse


class RecordedHttp:
    def answer(self, url: ParseResult) -> tuple[int, object, str]:
        raise NotImplementedError

    @property
    def port(self) -> int:
        return self.server.server_port

    def __enter__(self):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the stdlib's name
                status, body, kind = owner.answer(urlparse(self.path))
                data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
