"""STAND-IN for the PKey REST API of NVIDIA UFM Enterprise: no UFM, no subnet manager
behind it, never proof of what a real UFM accepts.

No UFM is reachable where rdma-fabric is tested, so the tests start this HTTPS server
(http.server + ssl) on 127.0.0.1 at an ephemeral port, with a CA and server certificate
the test generates (`make_ca`), and run ib_subnet_manager in mode ufm against it. It
follows "NVIDIA UFM Enterprise REST API Guide v6.19.3", PKey GUIDs Rest API, for what
the role uses, behind basic authentication:

  GET  /ufmRest/resources/pkeys[?guids_data=true]
       {"0x7fff": {"partition": "management", "ip_over_ib": true[, "guids": [...]]}, ...}
       each guid {"guid": "<16 hex>", "membership": "full|limited", "index0": bool}
  POST /ufmRest/resources/pkeys   {"pkey", "guids", "membership" | "memberships",
       "ip_over_ib", "index0"}: adds the GUIDs to the PKey, creating it
  PUT  /ufmRest/resources/pkeys   same body: the PKey's GUIDs become exactly these
  POST /ufmRest/resources/pkeys/add   {"pkey", "ip_over_ib", "index0", "mtu_limit",
       "service_level", "rate_limit"}: a PKey without GUIDs ("The required parameters are
       PKey only, all the others are optional and take the default"; the guide's example
       and UFM's PKey listings show mtu_limit 2, service_level 0, rate_limit 2.5)
  PUT  /ufmRest/resources/pkeys/qos_conf   {"pkey", "mtu_limit", "service_level",
       "rate_limit"} ("Update QoS for PKey"); GET ...?qos_conf=true adds those three
       fields to each PKey. mtu_limit is the IB MTU enum (1-5), service_level an SL
       (0-15), rate_limit in Gb/s.

A bad body (pkey outside 0x1-0x7ffe, a GUID not 16-20 hex digits, memberships not
matching guids) answers 400, a wrong user or password 401, the management PKey 0x7fff
403 (read-only in UFM); none changes anything.

Stand-in specifics (not UFM): `pkeys` holds the state ({"0x10": {...}}), `requests`
records (method, path, body) of every request; new PKeys are named api_pkey_<pkey>;
qos_conf on a PKey UFM lacks answers 404; rate_limit must be one of the IBA PathRecord
rates in Gb/s (2.5 ... 1200, include/iba/ib_types.h), which a real UFM may narrow; no
sessions or tokens.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import re
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PKEYS = "/ufmRest/resources/pkeys"
QOS_FIELDS = ("mtu_limit", "service_level", "rate_limit")
QOS_DEFAULTS = {"mtu_limit": 2, "service_level": 0, "rate_limit": 2.5}
# IBA PathRecord rates in Gb/s (include/iba/ib_types.h IB_PATH_RECORD_RATE_*).
RATES = (2.5, 10, 30, 5, 20, 40, 60, 80, 120, 14, 56, 112, 168, 25, 100, 200, 300, 28, 50,
         400, 600, 800, 1200)  # fmt: skip
_GUID_RE = re.compile(r"^[0-9a-fA-F]{16,20}$")


def make_ca(directory):
    """A CA and a server certificate for 127.0.0.1 in `directory`: (ca, cert, key) paths."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    span = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1))

    def build(subject, issuer, public, signer, ca, extra=()):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(span[0])
            .not_valid_after(span[1])
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        for ext in extra:
            builder = builder.add_extension(ext, critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = build("stand-in UFM CA", "stand-in UFM CA", ca_key.public_key(), ca_key, True)
    alt = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert = build("127.0.0.1", "stand-in UFM CA", key.public_key(), ca_key, False, [alt])
    paths = [directory / "ca.pem", directory / "server.pem", directory / "server.key"]
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return tuple(paths)


class UfmRest:
    """UFM's PKey REST API over HTTPS on 127.0.0.1; start() returns the port."""

    def __init__(self, cert, key, user="admin", password="123456"):
        self.user, self.password = user, password
        self.pkeys = {"0x7fff": {"partition": "management", "ip_over_ib": True, "guids": []}}
        self.requests = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)

    def start(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self._server.server_address[1]

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    # --- the API ------------------------------------------------------------------
    def answer(self, method, path, query, body):
        """(status, JSON) of one authenticated request."""
        with self._lock:
            self.requests.append((method, path, body))
            if method == "GET" and path == PKEYS:
                guids, qos = "guids_data=true" in query, "qos_conf=true" in query
                return 200, {
                    k: {
                        kk: vv
                        for kk, vv in v.items()
                        if (guids or kk != "guids") and (qos or kk not in QOS_FIELDS)
                    }
                    for k, v in self.pkeys.items()
                }
            if method == "PUT" and path == PKEYS + "/qos_conf":
                return self._qos(body)
            if method in ("POST", "PUT") and path in (PKEYS, PKEYS + "/add"):
                return self._change(method, path, body)
            return 404, {"error": f"{method} {path} is not served"}

    def _change(self, method, path, body):
        if not isinstance(body, dict):
            return 400, {"error": "body must be a JSON object"}
        try:
            pkey = int(str(body.get("pkey")), 16)
        except ValueError:
            pkey = 0
        if not 0 < pkey <= 0x7FFF:
            return 400, {"error": f"pkey {body.get('pkey')} is not between 0x0 and 0x7fff"}
        if pkey == 0x7FFF:
            return 403, {"error": "the management PKey is read-only"}
        key = f"0x{pkey:x}"
        entry = self.pkeys.get(key) or {"partition": f"api_pkey_{key}", "guids": []}
        entry["ip_over_ib"] = bool(body.get("ip_over_ib", True))
        for field, default in QOS_DEFAULTS.items():
            entry.setdefault(field, default)
        if path.endswith("/add"):
            problem = self._qos_problem({**QOS_DEFAULTS, **body})
            if problem:
                return 400, {"error": problem}
            entry.update({f: body[f] for f in QOS_FIELDS if f in body})
            self.pkeys[key] = entry
            return 200, {}
        ports = self._ports(body)
        if isinstance(ports, str):
            return 400, {"error": ports}
        if method == "PUT":
            entry["guids"] = []
        known = {g["guid"]: g for g in entry["guids"]}
        for port in ports:
            known[port["guid"]] = port
        entry["guids"] = list(known.values())
        self.pkeys[key] = entry
        return 200, {}

    @staticmethod
    def _qos_problem(body):
        mtu, sl, rate = (body.get(f) for f in QOS_FIELDS)
        if not isinstance(mtu, int) or isinstance(mtu, bool) or not 1 <= mtu <= 5:
            return f"mtu_limit {mtu!r} is not an MTU (1-5)"
        if not isinstance(sl, int) or isinstance(sl, bool) or not 0 <= sl <= 15:
            return f"service_level {sl!r} is not an SL (0-15)"
        if isinstance(rate, bool) or not isinstance(rate, int | float) or rate not in RATES:
            return f"rate_limit {rate!r} is not a rate in Gb/s"
        return None

    def _qos(self, body):
        if not isinstance(body, dict):
            return 400, {"error": "body must be a JSON object"}
        try:
            key = f"0x{int(str(body.get('pkey')), 16):x}"
        except ValueError:
            return 400, {"error": f"pkey {body.get('pkey')} is not a PKey"}
        if key == "0x7fff":
            return 403, {"error": "the management PKey is read-only"}
        if key not in self.pkeys:
            return 404, {"error": f"PKey {key} does not exist"}
        if any(f not in body for f in QOS_FIELDS):
            return 400, {"error": f"qos_conf takes {', '.join(QOS_FIELDS)}"}
        problem = self._qos_problem(body)
        if problem:
            return 400, {"error": problem}
        self.pkeys[key].update({f: body[f] for f in QOS_FIELDS})
        return 200, {}

    @staticmethod
    def _ports(body):
        guids = body.get("guids")
        if not isinstance(guids, list) or not all(_GUID_RE.match(str(g)) for g in guids):
            return "guids must be hexadecimal strings of 16 to 20 characters"
        memberships = body.get("memberships") or [body.get("membership", "full")] * len(guids)
        if len(memberships) != len(guids) or any(m not in ("full", "limited") for m in memberships):
            return "memberships must be full or limited, one per guid"
        index0 = bool(body.get("index0", False))
        return [
            {"guid": g.lower(), "membership": m, "index0": index0}
            for g, m in zip(guids, memberships, strict=True)
        ]

    def _handler(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _serve(self, method):
                wanted = "Basic " + base64.b64encode(f"{api.user}:{api.password}".encode()).decode()
                if self.headers.get("Authorization") != wanted:
                    self._reply(401, {"error": "Unauthorized"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    self._reply(400, {"error": "body is not JSON"})
                    return
                path, _, query = self.path.partition("?")
                self._reply(*api.answer(method, path.rstrip("/"), query, body))

            def do_GET(self):
                self._serve("GET")

            def do_POST(self):
                self._serve("POST")

            def do_PUT(self):
                self._serve("PUT")

        return Handler
