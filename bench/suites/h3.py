"""h3: HTTP/3 (QUIC) against HTTP/2, cold, at a 50 ms round trip.

    bench/.venv/bin/python -m bench.run h3 [--quick] [--only "1 x 4 KiB"]

One server for both: hypercorn with its QUIC listener (fixtures/servers/hypercorn_h3.py: TCP
with TLS, HTTP/2 by ALPN, and QUIC on the same port number), behind bench/relay.py at 50 ms
(its TCP path for HTTP/2, its UDP path for QUIC, both on one port number). Each run is a new
process (a cold fetch: no connection, no Alt-Svc remembered):

* one file of 4 KiB, and 200 files of 4 KiB with 8 transfers in flight;
* ``anyurl get --http3`` (QUIC first), ``anyurl get --no-http3`` (HTTP/2 over TCP),
  ``anyurl get`` as it comes (HTTP/2 first, then HTTP/3 once the first response's Alt-Svc is
  seen), ``curl --http2`` (``-Z`` for the 200);
* ``curl --http3`` only where this machine's curl has HTTP3 among its features (Debian 12's
  7.88.1 has not: the row then says so).

Every run writes into an emptied directory on tmpfs and is checked (count and sizes).
"""

from __future__ import annotations

import socket
import subprocess

from bench.harness import Case, ManyFiles, Relay, anyurl_cmd, bench_env, outputs, wanted

N, CONNS, RTT, SIZE = 200, 8, 50, 4096


def curl_has_http3() -> bool:
    try:
        out = subprocess.run(["curl", "-V"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    features = next((ln for ln in out.splitlines() if ln.startswith("Features:")), "")
    return "HTTP3" in features.split()


def _tcp_udp_port() -> int:
    for _ in range(100):
        with socket.socket() as t:
            t.bind(("127.0.0.1", 0))
            port = t.getsockname()[1]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            try:
                u.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no port free on both TCP and UDP")


def run(launcher: object, quick: bool) -> None:
    ep = launcher.get("hypercorn_h3")  # type: ignore[attr-defined]
    ca = ep.info["ca"]
    curl3 = curl_has_http3()
    out = next((o for o in outputs() if o.label == "tmpfs"), outputs()[0])
    port = _tcp_udp_port()
    relay = Relay(RTT, [f"127.0.0.1:{port}=127.0.0.1:{ep.port}", f"udp:127.0.0.1:{port}=127.0.0.1:{ep.port}"])
    try:
        for count in (1, N):
            title = f"h3: HTTPS {count} x 4 KiB, cold, {CONNS if count > 1 else 1} in flight, RTT {RTT} ms"
            if not wanted(title):
                continue
            urls = [f"https://127.0.0.1:{port}/many/f{i:04d}.txt" for i in range(count)]
            m = ManyFiles.prepare(out, f"h3-{count}", urls, SIZE)
            anyurl = anyurl_cmd("get", "-q", "--parallel", str(CONNS), "-d", str(m.outdir))
            env = bench_env(SSL_CERT_FILE=ca)
            curl = ["curl", "-sf", "--output-dir", str(m.outdir), "--remote-name-all", "--cacert", ca,
                    "-K", str(m.curl_config)]
            if count > 1:
                curl[2:2] = ["-Z", "--parallel-max", str(CONNS)]
            cases = [Case("anyurl get --http3", [*anyurl, "--http3", *urls], m.fresh, m.check, env),
                     Case("anyurl get --no-http3 (HTTP/2)", [*anyurl, "--no-http3", *urls], m.fresh, m.check, env),
                     Case("anyurl get (Alt-Svc)", [*anyurl, *urls], m.fresh, m.check, env),
                     Case("curl --http2", [*curl, "--http2"], m.fresh, m.check)]
            if curl3:
                cases.append(Case("curl --http3", [*curl, "--http3"], m.fresh, m.check))
            note = ("output: tmpfs, an emptied directory per run; one hypercorn for TCP and QUIC"
                    + ("" if curl3 else "; curl --http3: not run, this curl has no HTTP3 feature (curl -V)"))
            relay.compare(title, cases, "curl --http2", note=note)
    finally:
        relay.stop()
