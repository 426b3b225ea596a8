"""versions: what HTTP/2 and HTTP/1.1 pipelining are worth, on loopback and at a 50 ms round trip.

    bench/.venv/bin/python -m bench.run versions [--quick] [--only "RTT 50"]

200 x 4 KiB from nginx (/many/, text: anyurl asks for gzip and gets it, the others do not ask)
with 8 transfers in flight, on loopback and through bench/relay.py at 50 ms (harness.Relay):

* HTTPS: ``anyurl get`` (HTTP/2 by ALPN) and with ``--http1.1``; ``curl -Z`` with ``--http2``
  and with ``--http1.1``;
* HTTP: ``anyurl get`` (requests pipelined on each connection, the default) and with
  ``--pipeline 0``; ``curl -Z`` and ``wget2`` beside them (neither pipelines).

Every run writes into an emptied directory on tmpfs and is checked (count and sizes).
"""

from __future__ import annotations

from bench.harness import Case, ManyFiles, Relay, anyurl_cmd, bench_env, compare, outputs, wanted

N, CONNS, RTT, SIZE = 200, 8, 50, 4096


def _tables(host: str, http_port: int, https_port: int, ca: str, where: str, relay: Relay | None) -> None:
    out = next((o for o in outputs() if o.label == "tmpfs"), outputs()[0])
    p = str(CONNS)
    names = [f"f{i:04d}.txt" for i in range(N)]
    for scheme, port in (("https", https_port), ("http", http_port)):
        title = f"versions: {scheme.upper()} {N} x 4 KiB, {CONNS} in flight, {where}"
        if not wanted(title):
            continue
        urls = [f"{scheme}://{host}:{port}/many/{n}" for n in names]
        m = ManyFiles.prepare(out, f"versions-{scheme}", urls, SIZE)
        anyurl = anyurl_cmd("get", "-q", "--parallel", p, "-d", str(m.outdir))
        curl = ["curl", "-sf", "-Z", "--parallel-max", p, "--output-dir", str(m.outdir), "--remote-name-all",
                "-K", str(m.curl_config)]
        if scheme == "https":
            env = bench_env(SSL_CERT_FILE=ca)
            cases = [Case("anyurl get (HTTP/2)", [*anyurl, *urls], m.fresh, m.check, env),
                     Case("anyurl get --http1.1", [*anyurl, "--http1.1", *urls], m.fresh, m.check, env),
                     Case("curl -Z --http2", [*curl, "--http2", "--cacert", ca], m.fresh, m.check),
                     Case("curl -Z --http1.1", [*curl, "--http1.1", "--cacert", ca], m.fresh, m.check)]
        else:
            listing = m.curl_config.with_name("urls.txt")
            listing.write_text("".join(u + "\n" for u in urls))
            cases = [Case("anyurl get (pipelined)", [*anyurl, *urls], m.fresh, m.check),
                     Case("anyurl get --pipeline 0", [*anyurl, "--pipeline", "0", *urls], m.fresh, m.check),
                     Case("curl -Z", curl, m.fresh, m.check),
                     Case("wget2", ["wget2", "-q", "--no-config", "--no-hsts", "--max-threads", p, "-P",
                                    str(m.outdir), "-i", str(listing)], m.fresh, m.check)]
        if relay:
            relay.compare(title, cases)
        else:
            compare(title, cases, cases[0].name, note="output: tmpfs, an emptied directory per run")


def run(launcher: object, quick: bool) -> None:
    from fixtures.launcher import free_ports

    ng = launcher.get("nginx")  # type: ignore[attr-defined]
    ca = ng.info["ca"]
    _tables(ng.host, ng.port, ng.info["tls_port"], ca, "loopback", None)
    if not any(wanted(f"versions: {s} {N} x 4 KiB, {CONNS} in flight, RTT {RTT} ms") for s in ("HTTP", "HTTPS")):
        return
    http_p, https_p = free_ports(2)
    relay = Relay(RTT, [f"127.0.0.1:{http_p}=127.0.0.1:{ng.port}", f"127.0.0.1:{https_p}=127.0.0.1:{ng.info['tls_port']}"])
    try:
        _tables("127.0.0.1", http_p, https_p, ca, f"RTT {RTT} ms", relay)
    finally:
        relay.stop()
