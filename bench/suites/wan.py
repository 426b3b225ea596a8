"""The WAN group: many small transfers through a latency relay (bench/relay.py), anyurl
against the clients people use, at 10, 50 and 150 ms of round trip.

    bench/.venv/bin/python -m bench.run wan [--quick] [--rounds N] [--only "RTT 50 ms"]
    make bench BENCH_ARGS="wan --quick"         (--quick: 50 ms only, 3 rounds)

Servers: nginx (http, and https offering HTTP/2 by ALPN), vsftpd (fixtures/servers/
vsftpd_wan.py: its passive replies name 127.0.0.2, where the relay listens on every passive
port too) and INN. For each round trip one relay process serves all of them; every group
runs with 8 connections per host and again with 1 (the strictest politeness):

* HTTP 200 x 4 KiB (nginx /many/): curl -Z, wget2, aria2c, anyurl get;
* HTTPS 200 x 4 KiB, the same clients (curl, wget2 and anyurl negotiate HTTP/2 by ALPN;
  aria2c speaks HTTP/1.1);
* FTP 100 x 4 KiB (vsftpd): curl -Z, lftp mget, anyurl get (aria2c left out: through the relay
  at 10 ms its 100 files took 60 s, with 10 s pauses and no socket event in its debug log,
  while 3 files at 0 ms took 0.12 s; not explained yet);
* NNTP 200 articles (INN): nntplib (one connection; Python's stdlib up to 3.12), anyurl get.

Every run writes into an emptied directory on tmpfs and is checked (count, and size for
files). Below each table: the relay's own CPU time per run (median), from /proc (harness.Relay).
"""

from __future__ import annotations

import sys
import time

from bench.harness import Case, ManyFiles, Relay, anyurl_cmd, bench_env, outputs, python_cmd, wanted

RTTS = (10, 50, 150)
SIZE = 4096
HTTP_N, FTP_N, NEWS_N = 200, 100, 200
WORKS = ("HTTP", "HTTPS", "FTP", "NNTP")


def title(work: str, rtt: int, conns: int) -> str:
    what = {"HTTP": f"HTTP {HTTP_N} x 4 KiB (nginx)", "HTTPS": f"HTTPS {HTTP_N} x 4 KiB (nginx, HTTP/2 offered)",
            "FTP": f"FTP {FTP_N} x 4 KiB (vsftpd)", "NNTP": f"NNTP {NEWS_N} articles (INN)"}[work]
    return f"wan: {what}, RTT {rtt} ms, {conns} connection{'s' if conns > 1 else ''} per host"


def _list(many: ManyFiles, urls: list[str]) -> str:
    path = many.curl_config.with_name("urls.txt")
    path.write_text("".join(u + "\n" for u in urls))
    return str(path)


def _curl(n: int, many: ManyFiles, *extra: str) -> list[str]:
    return ["curl", "-sf", "-Z", "--parallel-max", str(n), *extra, "--output-dir", str(many.outdir),
            "--remote-name-all", "-K", str(many.curl_config)]


def _wget2(n: int, many: ManyFiles, urls: list[str], *extra: str) -> list[str]:
    return ["wget2", "-q", "--no-config", "--no-hsts", "--max-threads", str(n), *extra, "-P", str(many.outdir),
            "-i", _list(many, urls)]


def _aria2(n: int, many: ManyFiles, urls: list[str], *extra: str) -> list[str]:
    return ["aria2c", "-q", "--no-conf", "-j", str(n), "-x", "1", "--allow-overwrite=true",
            "--auto-file-renaming=false", *extra, "-d", str(many.outdir), "-i", _list(many, urls)]


def run(launcher: object, quick: bool) -> None:
    from fixtures.launcher import free_ports
    from fixtures.servers import vsftpd

    rtts = [rtt for rtt in ((50,) if quick else RTTS)
            if any(wanted(title(w, rtt, c)) for w in WORKS for c in (8, 1))]
    if not rtts:
        return
    nginx = launcher.get("nginx")  # type: ignore[attr-defined]
    ftp = launcher.get("vsftpd_wan")  # type: ignore[attr-defined]
    from bench.suites.news import _setup

    news_host, news_port, group, mean = _setup(launcher, NEWS_N)
    many_dir = vsftpd.ensure_many(ftp.info, FTP_N, SIZE, "wan")
    wan = ftp.info["wan_host"]
    lo, hi = ftp.info["pasv"]
    http_p, https_p, nntp_p = free_ports(3)
    specs = [f"127.0.0.1:{http_p}=127.0.0.1:{nginx.port}", f"127.0.0.1:{https_p}=127.0.0.1:{nginx.info['tls_port']}",
             f"127.0.0.1:{nntp_p}={news_host}:{news_port}",
             f"{wan}:{ftp.port}=127.0.0.1:{ftp.port}", f"{wan}:{lo}-{hi}=127.0.0.1:{lo}"]
    ca = nginx.info["ca"]
    tls_env = bench_env(SSL_CERT_FILE=ca)
    names = [f"f{i:04d}.txt" for i in range(HTTP_N)]
    http_urls = [f"http://127.0.0.1:{http_p}/many/{n}" for n in names]
    https_urls = [f"https://127.0.0.1:{https_p}/many/{n}" for n in names]
    ftp_rel = f"/pub/{many_dir.name}"
    ftp_urls = [f"ftp://{wan}:{ftp.port}{ftp_rel}/{p.name}" for p in sorted(many_dir.iterdir())]
    news_urls = [f"nntp://127.0.0.1:{nntp_p}/{group}/{i}" for i in range(1, NEWS_N + 1)]
    out = next((o for o in outputs() if o.label == "tmpfs"), outputs()[0])
    role = python_cmd("-m", "bench.suites.news")
    for rtt in rtts:
        relay = Relay(rtt, specs)
        t0 = time.monotonic()
        try:
            for conns in (8, 1):
                p = str(conns)
                name = title("HTTP", rtt, conns)
                if wanted(name):
                    m = ManyFiles.prepare(out, "wan-http", http_urls, SIZE)
                    relay.compare(name, [
                        Case(f"curl -Z --parallel-max {p}", _curl(conns, m), m.fresh, m.check),
                        Case(f"wget2 --max-threads {p}", _wget2(conns, m, http_urls), m.fresh, m.check),
                        Case(f"aria2c -j {p}", _aria2(conns, m, http_urls), m.fresh, m.check),
                        Case(f"anyurl get --parallel {p}",
                             anyurl_cmd("get", "-q", "--parallel", p, "-d", str(m.outdir), *http_urls),
                             m.fresh, m.check),
                    ])
                name = title("HTTPS", rtt, conns)
                if wanted(name):
                    m = ManyFiles.prepare(out, "wan-https", https_urls, SIZE)
                    relay.compare(name, [
                        Case(f"curl -Z --parallel-max {p} (HTTP/2)", _curl(conns, m, "--cacert", ca), m.fresh,
                             m.check),
                        Case(f"wget2 --max-threads {p} (HTTP/2)",
                             _wget2(conns, m, https_urls, "--ca-certificate", ca), m.fresh, m.check),
                        Case(f"aria2c -j {p} (HTTP/1.1)", _aria2(conns, m, https_urls, f"--ca-certificate={ca}"),
                             m.fresh, m.check),
                        Case(f"anyurl get --parallel {p}",
                             anyurl_cmd("get", "-q", "--parallel", p, "-d", str(m.outdir), *https_urls),
                             m.fresh, m.check, env=tls_env),
                        # the same on pure-Python h2 (the fallback where jh2 has no wheel)
                        Case(f"anyurl get --parallel {p} (h2, pure Python)",
                             anyurl_cmd("get", "-q", "--parallel", p, "-d", str(m.outdir), *https_urls),
                             m.fresh, m.check, env={**tls_env, "ANYURL_H2_LIBRARY": "h2"}),
                    ])
                name = title("FTP", rtt, conns)
                if wanted(name):
                    m = ManyFiles.prepare(out, "wan-ftp", ftp_urls, SIZE)
                    lftp = (f"set cmd:interactive no; set xfer:clobber on; open -p {ftp.port} {wan}; "
                            f"lcd {m.outdir}; mget {f'-P {p} ' if conns > 1 else ''}{ftp_rel}/*")
                    relay.compare(name, [
                        Case(f"curl -Z --parallel-max {p}", _curl(conns, m), m.fresh, m.check),
                        Case(f"lftp mget{f' -P {p}' if conns > 1 else ''}", ["lftp", "-c", lftp], m.fresh, m.check),
                        Case(f"anyurl get --parallel {p}",
                             anyurl_cmd("get", "-q", "--parallel", p, "-d", str(m.outdir), *ftp_urls),
                             m.fresh, m.check),
                    ])
                name = title("NNTP", rtt, conns)
                if wanted(name):
                    m = ManyFiles.prepare(out, "wan-news", news_urls, mean, exact=False)
                    relay.compare(name, [
                        Case("nntplib (one connection)", role + [
                            "nntplib", "127.0.0.1", str(nntp_p), group, str(NEWS_N), str(m.outdir)], m.fresh, m.check),
                        Case(f"anyurl get --parallel {p}",
                             anyurl_cmd("get", "-q", "--parallel", p, "-d", str(m.outdir), *news_urls),
                             m.fresh, m.check),
                    ])
        finally:
            relay.stop()
        print(f"   (RTT {rtt} ms: {time.monotonic() - t0:.0f} s)", flush=True)


def main(argv: list[str]) -> int:
    from bench.run import run_with_servers

    run_with_servers(run, "--quick" in argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
