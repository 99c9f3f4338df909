"""The HTTP(S) server the JSON API stand-ins (nvue_api.py, eos_eapi.py) run in: a
threaded server on `bind`:`port` (0: an ephemeral port), HTTPS when given a certificate,
whose every request of the given methods goes to `handle(method, path, headers, body
bytes) -> (status, JSON-able reply)`, one request at a time. Test plumbing, no vendor
contract of its own: each stand-in's docstring says what it follows."""

from __future__ import annotations

import argparse
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve_json(handle, methods, certfile=None, keyfile=None, bind="127.0.0.1", port=0):
    """The started server; its `scheme` is http or https, `server_address[1]` its port."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _serve(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            with lock:
                status, body = handle(self.command, self.path, self.headers, raw)
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    for method in methods:
        setattr(Handler, f"do_{method}", Handler._serve)
    server = ThreadingHTTPServer((bind, port), Handler)
    server.scheme = "http"
    if certfile:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certfile, keyfile)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.scheme = "https"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop_server(server):
    if server:
        server.shutdown()
        server.server_close()


def server_arguments(what, port):
    """The command line of a stand-in run as a program: --bind, --port, --cert, --key."""
    parser = argparse.ArgumentParser(description=f"Serve the {what} STAND-IN until stopped.")
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--cert", help="PEM certificate (HTTPS); without it, plain HTTP")
    parser.add_argument("--key", help="PEM private key of --cert")
    return parser


def serve_until_stopped(standin, args, name, path):
    """Start `standin` as the parsed arguments say, print where, and serve forever."""
    standin.start(args.cert, args.key, args.bind, args.port)
    print(f"{name} stand-in on {standin.scheme}://{args.bind}:{standin.port}{path}", flush=True)
    threading.Event().wait()
