"""Real git hosts for the transport tests, started by the test and gone at its end: smart HTTP
through `git http-backend` behind a small threaded HTTP server, and ssh to a local `sshd` with
keys and host key of the test's own. Either can be told to hang: it accepts the connection and
never answers, as a dead host behind a live proxy does."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

SSHD = "/usr/sbin/sshd"
HANG = "hang"  # a repository name (hang.git) both hosts never answer for


class GitHttp:
    """Smart HTTP over the repositories under root: http://127.0.0.1:PORT/NAME.git."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.release = threading.Event()  # set at the end: hanging requests give up
        self.hung = threading.Event()  # a request for hang.git arrived
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server protocol
                server.answer(self)

            def do_POST(self) -> None:  # noqa: N802
                server.answer(self)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}.git"

    def answer(self, request: BaseHTTPRequestHandler) -> None:
        path, _, query = request.path.partition("?")
        if f"/{HANG}.git" in path:
            self.hung.set()
            self.release.wait(600)
            return
        body = _request_body(request)
        env = {
            "PATH": os.environ["PATH"],
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": "teammate",  # http-backend takes pushes only from a known user
            "REMOTE_ADDR": "127.0.0.1",
            "REQUEST_METHOD": request.command,
            "PATH_INFO": unquote(path),
            "QUERY_STRING": query,
            "CONTENT_TYPE": request.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
        }
        for header, name in (
            ("Content-Encoding", "HTTP_CONTENT_ENCODING"),
            ("Git-Protocol", "GIT_PROTOCOL"),
        ):
            if request.headers.get(header):
                env[name] = request.headers[header]
        proc = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=120
        )
        head, _, payload = proc.stdout.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        request.send_response(status)
        for key, value in headers:
            request.send_header(key, value)
        request.send_header("Content-Length", str(len(payload)))
        request.end_headers()
        request.wfile.write(payload)


def _request_body(request: BaseHTTPRequestHandler) -> bytes:
    if request.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(request.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                request.rfile.readline()
                return b"".join(chunks)
            chunks.append(request.rfile.read(size))
            request.rfile.readline()
    length = int(request.headers.get("Content-Length") or 0)
    return request.rfile.read(length) if length else b""


@contextmanager
def http_host(root: Path) -> Iterator[GitHttp]:
    host = GitHttp(root)
    host.thread.start()
    try:
        yield host
    finally:
        host.release.set()
        host.httpd.shutdown()
        host.httpd.server_close()
        host.thread.join(10)


class Sshd:
    """A local sshd on 127.0.0.1 that lets this user in with the test's key only:
    ssh://USER@127.0.0.1:PORT/ABSOLUTE/PATH. A command for a path with hang.git in it
    connects and then never answers (until the client goes away)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.user = getpass.getuser()
        self.token = f"gitvault-test-hang-{os.getpid()}-{time.time_ns()}"
        self.hung = folder / "hung"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, repo: Path) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{repo}"

    def hang_url(self) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{self.folder}/{HANG}.git"

    @property
    def client_key(self) -> Path:
        return self.folder / "client_key"

    @property
    def ssh_command(self) -> str:
        """For core.sshCommand: this key, this host key, never a question."""
        return (
            f"ssh -F none -i {self.client_key} -o IdentitiesOnly=yes "
            f"-o UserKnownHostsFile={self.folder / 'known_hosts'} -o StrictHostKeyChecking=yes "
            "-o BatchMode=yes"
        )

    def setup(self) -> None:
        for name in ("host_key", "client_key"):
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.folder / name)],
                check=True,
                capture_output=True,
            )
        gate = self.folder / "gate.sh"
        gate.write_text(
            "#!/bin/bash\n"
            'case "$SSH_ORIGINAL_COMMAND" in\n'
            # never answers, ignores the client's EOF (as a dead host does), and ends only
            # when the connection is gone (its next byte on stderr has nowhere to go)
            f"  *{HANG}.git*) touch {self.hung}; exec -a {self.token} /bin/bash -c "
            "'while printf . >&2; do sleep 1; done';;\n"
            "esac\n"
            'exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"\n'
        )
        gate.chmod(0o755)
        public = (self.folder / "client_key.pub").read_text().strip()
        (self.folder / "authorized_keys").write_text(
            f'command="{gate}",no-pty,no-port-forwarding {public}\n'
        )

    def config(self) -> Path:
        path = self.folder / "sshd_config"
        path.write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\n"
            f"HostKey {self.folder / 'host_key'}\nPidFile {self.folder / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {self.folder / 'authorized_keys'}\n"
            "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
            "AcceptEnv GIT_PROTOCOL\nLogLevel ERROR\nMaxStartups 100\n"
        )
        return path

    def start(self) -> None:
        host = (self.folder / "host_key.pub").read_text().split()
        for _ in range(10):  # the free port found can be taken before sshd binds it
            self.port = _free_port()
            self.proc = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(self.config())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=open(self.folder / "sshd.log", "ab"),  # noqa: SIM115 - lives with sshd
            )
            if _listening(self.port, self.proc):
                (self.folder / "known_hosts").write_text(
                    f"[127.0.0.1]:{self.port} {host[0]} {host[1]}\n"
                )
                return
            self.stop()
        raise RuntimeError(f"sshd did not start: {(self.folder / 'sshd.log').read_text()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def sshd_unavailable() -> str | None:
    """Why no local sshd can be run here, or None."""
    if not os.path.exists(SSHD):
        return f"{SSHD} is not installed (Debian: apt-get install openssh-server)"
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return "the ssh client is not installed"
    if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
        try:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation
        except OSError as exc:
            return f"sshd needs /run/sshd as root, which cannot be made: {exc}"
    return None


@contextmanager
def ssh_host(folder: Path) -> Iterator[Sshd]:
    folder.mkdir(parents=True, exist_ok=True)
    sshd = Sshd(folder)
    sshd.setup()
    sshd.start()
    try:
        yield sshd
    finally:
        sshd.stop()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int, proc: subprocess.Popen[bytes], wait: float = 30.0) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                pass
            time.sleep(0.2)  # another program may hold the port, and sshd be exiting
            return proc.poll() is None
        except OSError:
            time.sleep(0.05)
    return False


def processes_with(needle: str) -> list[int]:
    """Live processes whose command line holds needle (what a stopped fetch may leave)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if needle.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found
