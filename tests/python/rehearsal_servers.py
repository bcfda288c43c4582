"""The servers of the rehearsal's network namespace that stand for the machine's own
surroundings, not for AWS: an instance metadata service (IMDSv2 only), a container credentials
endpoint, and two HTTP CONNECT proxies, one that forwards and one that refuses.

Usage: python3 rehearsal_servers.py LOG_FILE

Listens on 169.254.169.254:80 (IMDS), 127.0.0.1:8080 (container credentials: GET /creds with
`Authorization: rehearsal-token`), 127.0.0.1:3128 (a proxy that forwards CONNECT to the host
named) and 127.0.0.1:3129 (a proxy that answers 403 to every CONNECT). Each request is one line
of LOG_FILE (`imds PUT /latest/api/token`, `proxy CONNECT sts.us-east-1.amazonaws.com:443`), so
a test can show what reached which. Prints `ready` once all four listen; runs until killed.
"""
import datetime
import http.server
import json
import socket
import socketserver
import sys
import threading

LOG = open(sys.argv[1], "a", buffering=1)
LOCK = threading.Lock()
TOKEN = "rehearsal-imds-token"
ROLE = "latlab-rehearsal-instance"


def log(line):
    with LOCK:
        LOG.write(line + "\n")


def expiration():
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=6)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body, kind="text/plain", headers=()):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Imds(Quiet):
    """IMDSv2: a token first (PUT), then every GET must carry it."""

    def do_PUT(self):
        log(f"imds PUT {self.path}")
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        if self.path == "/latest/api/token" and ttl:
            self.send(200, TOKEN, headers=[("X-aws-ec2-metadata-token-ttl-seconds", ttl)])
        else:
            self.send(400, "bad token request")

    def do_GET(self):
        has = self.headers.get("X-aws-ec2-metadata-token") == TOKEN
        log(f"imds GET {self.path} token={'yes' if has else 'no'}")
        if not has:
            self.send(401, "")
            return
        base = "/latest/meta-data/iam/security-credentials/"
        if self.path == base:
            self.send(200, ROLE)
        elif self.path == base + ROLE:
            creds = {
                "Code": "Success",
                "Type": "AWS-HMAC",
                "AccessKeyId": "ASIAIMDSREHEARSAL",
                "SecretAccessKey": "imds-secret",
                "Token": "imds-session-token",
                "Expiration": expiration(),
                "LastUpdated": expiration(),
            }
            self.send(200, json.dumps(creds), "application/json")
        elif self.path == "/latest/meta-data/placement/region":
            self.send(200, "us-east-1")
        else:
            self.send(404, "")


class Container(Quiet):
    def do_GET(self):
        auth = self.headers.get("Authorization")
        log(f"container GET {self.path} auth={'yes' if auth == 'rehearsal-token' else 'no'}")
        if self.path != "/creds" or auth != "rehearsal-token":
            self.send(403, "")
            return
        creds = {
            "AccessKeyId": "ASIACONTAINERREHEARSAL",
            "SecretAccessKey": "container-secret",
            "Token": "container-session-token",
            "Expiration": expiration(),
        }
        self.send(200, json.dumps(creds), "application/json")


def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class Proxy(socketserver.BaseRequestHandler):
    refuse = False

    def handle(self):
        head = b""
        while b"\r\n\r\n" not in head and len(head) < 16384:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            head += chunk
        line = head.split(b"\r\n", 1)[0].decode(errors="replace")
        parts = line.split()
        if len(parts) < 2 or parts[0] != "CONNECT":
            log(f"proxy refused {line}")
            self.request.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        target = parts[1]
        if self.refuse:
            log(f"proxy refused CONNECT {target}")
            self.request.sendall(
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            return
        log(f"proxy CONNECT {target}")
        host, _, port = target.rpartition(":")
        try:
            upstream = socket.create_connection((host, int(port)), timeout=10)
        except OSError as e:
            self.request.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            log(f"proxy failed {target}: {e}")
            return
        self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        t = threading.Thread(target=pipe, args=(upstream, self.request), daemon=True)
        t.start()
        pipe(self.request, upstream)
        t.join(timeout=30)
        upstream.close()


class Refusing(Proxy):
    refuse = True


class Threaded(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class ThreadedHttp(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def server_bind(self):
        # HTTPServer's own looks its address up in DNS (getfqdn): the resolver's log is to hold
        # only the names latlab asks.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


def main():
    servers = [
        ThreadedHttp(("169.254.169.254", 80), Imds),
        ThreadedHttp(("127.0.0.1", 8080), Container),
        Threaded(("127.0.0.1", 3128), Proxy),
        Threaded(("127.0.0.1", 3129), Refusing),
    ]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
