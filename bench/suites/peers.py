"""peers: anyurl against the HTTP clients people use, command-line and Python, on the same rows.

    bench/.venv/bin/python -m bench.run peers [--quick] [--rounds N] [--only loopback|"RTT 50"]

Clients: curl -Z, wget2, lftp (mget -P), and the Python peers, each an idiomatic script of the
kind its docs recommend for many concurrent downloads (bench/reference/http_*.py): pycurl's
CurlMulti (libcurl, in C), curl_cffi's AsyncSession, aiohttp, httpx with ``http2=True``,
niquests; beside them ``anyurl get -d DIR -i LIST`` and anyurl's library doing the same
(bench/suites/http.py ``many --uvloop``: one Client, ``Client.open`` per URL, N at a time, each body
written with os.open/os.write). Every Python peer writes each body out as the CLI writes a file
(bench/reference/peer_io.py). HTTP/2 wherever the client negotiates it
over TLS (curl, wget2, pycurl, curl_cffi, httpx, niquests, anyurl); aiohttp and lftp speak
HTTP/1.1.

Rows (nginx; the 4 KiB files are bench/suites/http.py's uncompressed /many10k/ files, so
every client moves the same bytes whether it asks for gzip or not):

* loopback, HTTP and HTTPS: 10,000 x 4 KiB at concurrency 32 (2,000 with --quick);
* RTT 50 ms through bench/relay.py (harness.Relay: the handshake modelled, each direction
  delayed 25 ms), HTTP and HTTPS: 200 x 4 KiB with 8 connections (8 transfers in flight).

Each client also runs on the first FEW of the URLs in the same interleaved rounds, so CPU per
request = (CPU of all - CPU of FEW) / (all - FEW) per round: start-up cancels out. Below each
table: that CPU per request, and anyurl against each client per round (its wall time / anyurl's
and its CPU per request / anyurl's: above 1 anyurl is ahead), medians and min-max.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

from bench.harness import (
    Case,
    ManyFiles,
    Relay,
    anyurl_cmd,
    bench_env,
    compare,
    cpu_slopes,
    outputs,
    python_cmd,
    record,
    wanted,
)

SIZE = 4096
LOTS, FEW = 10_000, 1_000
WAN_N, WAN_FEW, WAN_CONNS, RTT = 200, 40, 8, 50
ANYURL = "anyurl get"
LIBRARY = "anyurl library (Client.open, uvloop)"
PEERS = {"pycurl CurlMulti": "http_pycurl", "curl_cffi AsyncSession": "http_curl_cffi",
         "aiohttp": "http_aiohttp", "httpx http2=True": "http_httpx", "niquests AsyncSession": "http_niquests"}

# name -> argv of a client for (connections, ManyFiles, URL list file, CA file or None)
Client = Callable[[int, ManyFiles, Path, "str | None"], list[str]]


def _curl(n: int, m: ManyFiles, listing: Path, ca: str | None) -> list[str]:
    return ["curl", "-sf", "-Z", "--parallel-max", str(n), *(["--cacert", ca] if ca else []),
            "--output-dir", str(m.outdir), "--remote-name-all", "-K", str(m.curl_config)]


def _wget2(n: int, m: ManyFiles, listing: Path, ca: str | None) -> list[str]:
    return ["wget2", "-q", "--no-config", "--no-hsts", "--max-threads", str(n),
            *(["--ca-certificate", ca] if ca else []), "-P", str(m.outdir), "-i", str(listing)]


def _lftp(n: int, m: ManyFiles, listing: Path, ca: str | None) -> list[str]:
    script = listing.with_suffix(".lftp")
    urls = listing.read_text().split()
    script.write_text("set cmd:interactive no; set xfer:clobber on; set net:max-retries 1\n"
                      + (f"set ssl:ca-file {ca}\n" if ca else "")
                      + f"mget -P {n} -O {m.outdir} " + " ".join(urls) + "\n")
    return ["lftp", "-f", str(script)]


def _anyurl(n: int, m: ManyFiles, listing: Path, ca: str | None) -> list[str]:
    return anyurl_cmd("get", "-q", "--parallel", str(n), "-d", str(m.outdir), "-i", str(listing))


def _library(n: int, m: ManyFiles, listing: Path, ca: str | None) -> list[str]:
    return python_cmd("-m", "bench.suites.http", "many", "--uvloop", "--parallel", str(n), str(m.outdir),
                      *listing.read_text().split())


def _peer(module: str) -> Client:
    def argv(n: int, m: ManyFiles, listing: Path, ca: str | None) -> list[str]:
        return python_cmd("-m", f"bench.reference.{module}", "--parallel", str(n), "-d", str(m.outdir),
                          *(["--cacert", ca] if ca else []), "-i", str(listing))
    return argv


def clients(tls: bool) -> dict[str, Client]:
    h2 = " (HTTP/2)" if tls else ""
    out: dict[str, Client] = {f"curl -Z{h2}": _curl, f"wget2{h2}": _wget2, "lftp mget -P": _lftp}
    out.update({name + (h2 if "aiohttp" not in name else ""): _peer(mod) for name, mod in PEERS.items()})
    out[ANYURL] = _anyurl
    out[LIBRARY] = _library
    return out


def row(title: str, urls: list[str], few: int, conns: int, ca: str | None, relay: Relay | None) -> None:
    """One table: every client on all *urls* and on the first *few*, interleaved."""
    if not wanted(title):
        return
    tmpfs = next((o for o in outputs() if o.label == "tmpfs"), outputs()[0])
    sets = [(ManyFiles.prepare(tmpfs, "peers", urls, SIZE), ""),
            (ManyFiles.prepare(tmpfs, "peers-few", urls[:few], SIZE), f" [{few}]")]
    env = bench_env(SSL_CERT_FILE=ca) if ca else None
    cases: list[Case] = []
    for m, tag in sets:
        listing = m.outdir.parent / "urls.txt"
        listing.write_text("".join(u + "\n" for u in urls[:m.count]))
        for name, argv in clients(ca is not None).items():
            cases.append(Case(name + tag, argv(conns, m, listing, ca), m.fresh, m.check,
                              env if name in (ANYURL, LIBRARY) else None))
    note = f"output: tmpfs, an emptied directory per run; rows marked [{few}] fetch the first {few} URLs only"
    group = relay.compare(title, cases, note=note) if relay else compare(title, cases, cases[0].name, note=note)
    if group:
        against_anyurl(group, len(urls), few)


def _few_name(name: str, tag: str, every: list[str]) -> str:
    """The FEW case of *name*: NAME [FEW], or for a --tree/--variant copy NAME [FEW] [LABEL]."""
    if name + tag in every:
        return name + tag
    head, _, label = name.rpartition(" [")
    return f"{head}{tag} [{label}"


def _spread(values: list[float], digits: int) -> tuple[str, str]:
    """(median, "min-max") of *values* as text; "n/a" for none."""
    if not values:
        return "n/a", "n/a"
    return f"{statistics.median(values):.{digits}f}", f"{min(values):.{digits}f}-{max(values):.{digits}f}"


def against_anyurl(group: dict[str, object], n: int, few: int) -> None:
    """CPU per request of each client (the slope), and each client's wall time and CPU per request
    over anyurl's, per round (above 1: anyurl ahead)."""
    tag = f" [{few}]"
    every = [r["name"] for r in group["results"]]  # type: ignore[attr-defined]
    names = [x for x in every if tag not in x]
    per = cpu_slopes(group, [(x, _few_name(x, tag, every)) for x in names], n, few)
    walls = {r["name"]: [x["seconds"] for x in r["runs"]] for r in group["results"]}  # type: ignore[attr-defined]
    me = ANYURL
    title = f"{group['title']}: CPU per request and anyurl against each"
    md = [f"\n### {title}\n", f"CPU per request = (CPU of {n} - CPU of {few}) / {n - few} per round (user+sys);"
          " wall and CPU ratios = the client's / anyurl's per round (> 1: anyurl ahead)\n",
          "| client | CPU µs/request | min-max | wall / anyurl | min-max | CPU/request / anyurl | min-max |",
          "|---|---:|---:|---:|---:|---:|---:|"]
    print(f"\n== {title}\n   {'client':<44} {'CPU µs/req':>10} {'min-max':>13} {'wall/anyurl':>11} "
          f"{'min-max':>11} {'CPU/anyurl':>10} {'min-max':>11}")
    rows = {}
    for x in names:
        cpu = per[x]
        wr = [a / b for a, b in zip(walls[x], walls[me], strict=True)]
        # a round where either slope is not above zero was below the noise of CPU accounting: left out
        cr = [a / b for a, b in zip(cpu, per[me], strict=True) if a > 0 and b > 0]
        cells = [_spread(cpu, 1), _spread(wr, 2), _spread(cr, 2)]
        print(f"   {x:<44} {cells[0][0]:>10} {cells[0][1]:>13} {cells[1][0]:>11} {cells[1][1]:>11} "
              f"{cells[2][0]:>10} {cells[2][1]:>11}", flush=True)
        md.append(f"| {x} | " + " | ".join(f"{m} | {r}" for m, r in cells) + " |")
        rows[x] = {"cpu_us": cpu, "wall_over_anyurl": wr, "cpu_over_anyurl": cr}
    record(title, md, {"n": [n, few], "clients": rows})


def run(launcher: object, quick: bool) -> None:
    from fixtures.launcher import free_ports

    from bench.suites.http import seed_lots

    ng = launcher.get("nginx")  # type: ignore[attr-defined]
    ca = ng.info["ca"]
    lots, few = (2_000, 200) if quick else (LOTS, FEW)
    paths = seed_lots(Path(ng.info["www"]), max(lots, WAN_N))
    for scheme, port, cert in (("http", ng.port, None), ("https", ng.info["tls_port"], ca)):
        urls = [f"{scheme}://127.0.0.1:{port}{p}" for p in paths[:lots]]
        row(f"peers: {scheme.upper()} {lots} x 4 KiB at concurrency 32, loopback", urls, few, 32, cert, None)
    wan = [f"peers: {s} {WAN_N} x 4 KiB, RTT {RTT} ms, {WAN_CONNS} connections" for s in ("HTTP", "HTTPS")]
    if not any(wanted(t) for t in wan):
        return
    http_p, https_p = free_ports(2)
    relay = Relay(RTT, [f"127.0.0.1:{http_p}=127.0.0.1:{ng.port}", f"127.0.0.1:{https_p}=127.0.0.1:{ng.info['tls_port']}"])
    try:
        for t, scheme, port, cert in ((wan[0], "http", http_p, None), (wan[1], "https", https_p, ca)):
            urls = [f"{scheme}://127.0.0.1:{port}{p}" for p in paths[:WAN_N]]
            row(t, urls, WAN_FEW, WAN_CONNS, cert, relay)
    finally:
        relay.stop()
