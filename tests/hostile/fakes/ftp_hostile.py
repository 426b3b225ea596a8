"""A fault-injecting FTP server for the faults real servers do not produce, run as a
subprocess so the client under test is measured alone (memory, time):

    python tests/hostile/fakes/ftp_hostile.py --scenario endless-list --log LOG

prints its port on stdout, then serves until killed. Every command received is
written to LOG as ``CMD <line>``, and what the data side did as ``DATA <event>``.

Scenarios:
  endless-list   LIST sends Unix listing lines forever (until the client closes the
                 data connection); ABOR is answered 426 + 226 as RFC 959 asks.
  overlong       SIZE says 1000, RETR sends 300,000 bytes and 226.
  temporary      the first login's RETR gets "450 busy", later ones the file;
                 each new connection after the second is greeted with 421.
  disk-full      STOR keeps the first 64 KiB, resets the data connection and answers
                 "452 Insufficient storage space"; DELE answers 250, RETR sends the file.
  quota          the same with "552 Exceeded storage allocation".
  pure-anon      answers uploads as Pure-FTPd does an anonymous user: 230 right after USER,
                 "553 Prohibited file name" for dot names, RNFR and DELE refused with "550
                 Anonymous users are not allowed to ..."; STOR of another name is kept, and
                 RETR sends back what is stored under the name.
  out-of-step    runs each command as it arrives, as aioftp.Server does, and a CWD takes
                 0.2 s: commands sent together are answered in the order they finish
                 (TYPE and EPSV before the CWD sent ahead of them); one at a time, in order.
                 RETR sends PAYLOAD.
  eager-vsftpd   greets as vsftpd does ("220 (vsFTPd 3.0.3)") but reads commands during a
                 transfer and acts on them at once, as pyftpdlib does: an EPSV that arrives
                 while a RETR is sending closes that transfer's data connection (after half
                 of PAYLOAD; the other half would follow 0.5 s later) and no 226 is sent for it.
  evil-names     LIST names no directory can hold: "../../etc/passwd", "sub/../..", "/abs",
                 a NUL, beside an ordinary "plain.txt" and a legal (Unix) name with a CR.
  long-names     names longer than a local file name may be (255 bytes), as a server whose disk
                 counts characters has them (Windows: 255 UTF-16 units): the LIST of a directory
                 holds LONG_FILE, "plain.txt" and LONG_DIR, whose LIST holds "inner.txt".
                 RETR of any name sends PAYLOAD.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

LINE = b"-rw-r--r--    1 0        0            4096 Nov 22 10:17 file-%09d.bin\r\n"
PAYLOAD = b"0123456789" * 100  # 1000 bytes: what SIZE announces
KEEP = 1 << 16  # disk-full, quota: the bytes of an upload stored before the disk "fills"
EVIL_LIST = (b"-rw-r--r--    1 0  0  10 Nov 22 10:17 ../../etc/passwd\r\n"
             b"drwxr-xr-x    2 0  0  10 Nov 22 10:17 sub/../..\r\n"
             b"-rw-r--r--    1 0  0  10 Nov 22 10:17 /etc/shadow\r\n"
             b"-rw-r--r--    1 0  0  10 Nov 22 10:17 nul\x00name\r\n"
             b"lrwxrwxrwx    1 0  0  10 Nov 22 10:17 ../up -> /etc\r\n"
             b"-rw-r--r--    1 0  0  10 Nov 22 10:17 cr\rname\r\n"
             b"-rw-r--r--    1 0  0  10 Nov 22 10:17 plain.txt\r\n")
LONG_FILE = "\u4e2d" * 100 + ".txt"  # 100 characters, 304 bytes in UTF-8
LONG_DIR = "\u00e9" * 200  # 400 bytes
FULL = {"disk-full": "452 Insufficient storage space", "quota": "552 Exceeded storage allocation"}


class Session:
    def __init__(self, server: Hostile, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.data: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] | None = None
        self.data_server: asyncio.Server | None = None
        self.transfer: asyncio.Task[None] | None = None
        self.number = server.connections
        self.cwd = "/"  # long-names: where CWD went
        self.tasks: list[asyncio.Future[None]] = []  # out-of-step: the commands running

    async def at_once(self, verb: str, arg: str) -> None:
        """out-of-step: one command run beside the others; a CWD is slow."""
        if verb == "CWD":
            await asyncio.sleep(0.2)
        await self.command(verb, arg)

    def log(self, text: str) -> None:
        self.server.log.write(f"{text}\n")
        self.server.log.flush()

    async def reply(self, text: str) -> None:
        self.writer.write(text.encode() + b"\r\n")
        await self.writer.drain()

    async def run(self) -> None:
        if self.server.scenario == "temporary" and self.number > 2:
            await self.reply("421 Too many connections, try later")
            return
        await self.reply("220 (vsFTPd 3.0.3)" if self.server.scenario == "eager-vsftpd"
                         else "220 hostile test server")
        while True:
            raw = await self.reader.readline()
            if not raw:
                return
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            verb, _, arg = line.partition(" ")
            verb = verb.upper()
            self.log(f"CMD {'PASS <password>' if verb == 'PASS' else line}")
            if self.server.scenario == "out-of-step" and verb != "QUIT":
                self.tasks.append(asyncio.ensure_future(self.at_once(verb, arg)))
                continue
            await self.command(verb, arg)
            if verb == "QUIT":
                return

    async def command(self, verb: str, arg: str) -> None:
        scenario = self.server.scenario
        if scenario == "pure-anon" and await self.pure_anon(verb, arg):
            return
        if verb == "USER":
            await self.reply("331 password please")
        elif verb == "PASS":
            await self.reply("230 logged in")
        elif verb == "PWD":
            await self.reply('257 "/" is the current directory')
        elif verb == "CWD" and scenario == "long-names":
            self.cwd = arg if arg.startswith("/") else f"{self.cwd.rstrip('/')}/{arg}"
            await self.reply("250 ok")
        elif verb in ("CWD", "TYPE", "NOOP"):
            await self.reply("250 ok" if verb == "CWD" else "200 ok")
        elif verb == "FEAT":
            await self.reply("211-Features:\r\n EPSV\r\n SIZE\r\n211 End")
        elif verb == "SIZE":
            await self.reply(f"213 {len(PAYLOAD)}")
        elif verb == "EPSV":
            if self.transfer is not None and not self.transfer.done():  # eager-vsftpd: mid-transfer
                self.transfer.cancel()  # its data connection is closed; its 226 never comes
                await asyncio.gather(self.transfer, return_exceptions=True)
                if self.data is not None and self.data.done() and not self.data.cancelled():
                    self.data.result()[1].close()  # (accepted, not yet written to)
                self.log("DATA transfer cut by EPSV")
            port = await self.listen()
            await self.reply(f"229 Entering Extended Passive Mode (|||{port}|)")
        elif verb == "LIST" and scenario == "endless-list":
            await self.reply("150 here comes an endless listing")
            self.transfer = asyncio.ensure_future(self.endless_list())
        elif verb == "LIST" and scenario == "long-names":
            await self.reply("150 here comes the listing")
            _, dw = await self.data_conn()
            names = [("-", "inner.txt")] if self.cwd.endswith(LONG_DIR) else [
                ("-", LONG_FILE), ("-", "plain.txt"), ("d", LONG_DIR)]
            dw.write(b"".join(f"{k}rw-r--r--    1 0  0  {len(PAYLOAD)} Nov 22 10:17 {n}\r\n".encode()
                              for k, n in names))
            await dw.drain()
            dw.close()
            await self.reply("226 Transfer complete")
        elif verb == "RETR" and scenario == "long-names":
            await self.reply("150 here it comes")
            _, dw = await self.data_conn()
            dw.write(PAYLOAD)
            await dw.drain()
            dw.close()
            await self.reply("226 Transfer complete")
        elif verb == "LIST" and scenario == "evil-names":
            await self.reply("150 here comes the listing")
            _, dw = await self.data_conn()
            dw.write(EVIL_LIST)
            await dw.drain()
            dw.close()
            await self.reply("226 Transfer complete")
        elif verb == "RETR" and scenario == "overlong":
            await self.reply(f"150 Opening BINARY mode data connection ({len(PAYLOAD)} bytes)")
            _, dw = await self.data_conn()
            dw.write(PAYLOAD * 300)
            await dw.drain()
            dw.close()
            self.log(f"DATA sent {len(PAYLOAD) * 300}")
            await self.reply("226 Transfer complete")
        elif verb == "STOR" and scenario in FULL:
            await self.reply("150 send it")
            await self.store_until_full(FULL[scenario])
        elif verb == "DELE" and scenario in FULL:
            await self.reply("250 deleted")
        elif verb == "RETR" and scenario == "eager-vsftpd":
            await self.reply(f"150 Opening BINARY mode data connection for {arg} ({len(PAYLOAD)} bytes).")
            self.transfer = asyncio.ensure_future(self.slow_send())
        elif verb == "RETR" and scenario in ("temporary", "out-of-step", *FULL):
            if scenario == "temporary" and self.number == 1:
                await self.reply("450 Resource busy, try again")
                return
            await self.reply("150 here it comes")
            _, dw = await self.data_conn()
            dw.write(PAYLOAD)
            await dw.drain()
            dw.close()
            await self.reply("226 Transfer complete")
        elif verb == "ABOR":
            if self.transfer is not None and not self.transfer.done():
                self.transfer.cancel()
                await asyncio.gather(self.transfer, return_exceptions=True)
                await self.reply("426 Transfer aborted")
            await self.reply("226 ABOR successful")
        elif verb == "QUIT":
            await self.reply("221 bye")
        else:
            await self.reply("502 not implemented")

    async def slow_send(self) -> None:
        """eager-vsftpd: half of PAYLOAD, a pause, the rest and 226 (unless cancelled first)."""
        _, dw = await self.data_conn()
        try:
            half = len(PAYLOAD) // 2
            dw.write(PAYLOAD[:half])
            await dw.drain()
            await asyncio.sleep(0.5)
            dw.write(PAYLOAD[half:])
            await dw.drain()
        finally:
            dw.close()
        await self.reply("226 Transfer complete.")

    async def pure_anon(self, verb: str, arg: str) -> bool:
        """Pure-FTPd's answers to an anonymous user's upload; False: the common answer."""
        stored = self.server.stored
        if verb == "USER":
            await self.reply("230 Anonymous user logged in")
        elif verb == "STOR" and arg.rpartition("/")[2].startswith("."):
            await self.reply("553 Prohibited file name: " + arg)
        elif verb == "STOR":
            await self.reply("150 Accepted data connection")
            dr, dw = await self.data_conn()
            data = await dr.read()
            dw.close()
            stored[arg] = data
            self.log(f"DATA stored {arg} {len(data)}")
            await self.reply("226 File successfully transferred")
        elif verb == "RNFR":
            await self.reply("550 Anonymous users are not allowed to move/rename files")
        elif verb == "DELE":
            await self.reply("550 Anonymous users are not allowed to delete files")
        elif verb == "SIZE" and arg in stored:
            await self.reply(f"213 {len(stored[arg])}")
        elif verb == "RETR" and arg in stored:
            await self.reply("150 Accepted data connection")
            _, dw = await self.data_conn()
            dw.write(stored[arg])
            await dw.drain()
            dw.close()
            await self.reply("226 File successfully transferred")
        else:
            return False
        return True

    async def listen(self) -> int:
        if self.data_server is not None:
            self.data_server.close()
        fut: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.get_running_loop().create_future())

        def on_data(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            if fut.done() or fut is not self.data:  # (a connection to a listener given up)
                w.close()
            else:
                fut.set_result((r, w))

        self.data = fut
        self.data_server = await asyncio.start_server(on_data, "127.0.0.1", 0)
        port: int = self.data_server.sockets[0].getsockname()[1]
        return port

    async def data_conn(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        assert self.data is not None
        return await asyncio.wait_for(self.data, 10)

    async def store_until_full(self, refusal: str) -> None:
        """Read the upload until KEEP bytes are "on disk", then reset the data connection and refuse."""
        dr, dw = await self.data_conn()
        got = 0
        try:
            async with asyncio.timeout(10):
                while got < KEEP and (chunk := await dr.read(KEEP - got)):
                    got += len(chunk)
        except TimeoutError:
            pass
        self.log(f"DATA stored {got}")
        dw.transport.abort()  # reset: whatever the client still sends is refused
        await self.reply(refusal)

    async def endless_list(self) -> None:
        _, dw = await self.data_conn()
        sent = 0
        n = 0
        try:
            while True:
                block = b"".join(LINE % i for i in range(n, n + 1000))
                n += 1000
                dw.write(block)
                await dw.drain()
                sent += len(block)
        except (ConnectionError, OSError):
            pass
        finally:
            self.log(f"DATA listing stopped after {sent} bytes")
            dw.close()


class Hostile:
    def __init__(self, scenario: str, log: str) -> None:
        self.scenario = scenario
        self.log = open(log, "a", encoding="utf-8")  # noqa: SIM115 - open for the server's life
        self.connections = 0
        self.stored: dict[str, bytes] = {}  # pure-anon: uploads by name

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        session = Session(self, reader, writer)
        try:
            await session.run()
        except (ConnectionError, OSError):
            pass
        finally:
            if session.transfer is not None:
                session.transfer.cancel()
            if session.data_server is not None:
                session.data_server.close()
            writer.close()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", required=True, choices=["endless-list", "overlong", "temporary", "evil-names",
                                                         "pure-anon", "out-of-step", "eager-vsftpd", "long-names", *FULL])
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    hostile = Hostile(args.scenario, args.log)
    server = await asyncio.start_server(hostile.handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
