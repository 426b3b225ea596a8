"""The compiled HPACK decoder (jh2) held to hpack's rules (anyurl.protocols.hpack.StrictDecoder):
on a corpus of seeded mutations of real header blocks, every block hpack refuses is refused and
every other one decodes to the same fields; nothing the corpus holds prints to stderr."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import hpack
import pytest

from anyurl.protocols.hpack import HUFFMAN_BITS, BlockError, StrictDecoder, check_block, huffman_fits

jh2_connection = pytest.importorskip("jh2.connection")
if not getattr(jh2_connection, "ALTERNATIVE_HPACK", False):  # pragma: no cover - a wheel without it
    pytest.skip("jh2 without its compiled HPACK", allow_module_level=True)

#: response header blocks nginx 1.22 (the fixture's) sent on one connection: 200s, a 404, a 301
#: (it opens with a table size update to 0 and never indexes)
NGINX = [bytes.fromhex(h) for h in (
    "20887689aa6355e580ae212e1f6196e4593e940094be52282009c5001b8db571a794c5a37f5f87497ca58ae819aa6c96e4593e"
    "940094be52282009c5001b8db571a6d4c5a37f00832a47378ee4c7f2e46095d1b8dac10001fcff008b21ea496a4ac5a88790d5"
    "4d839bd9ab",
    "887689aa6355e580ae212e1f6196e4593e940094be52282009c5001b8db571a794c5a37f5f87497ca58ae819aa6c96e4593e94"
    "0094be52282009c5001b8db571a6d4c5a37f00832a47378ee4c7f2e46095d1b8dac10001fcff008b21ea496a4ac5a88790d54d"
    "839bd9ab",
    "8d7689aa6355e580ae212e1f6196e4593e940094be52282009c5001b8db571a794c5a37f5f87497ca589d34d1f008b21ea496a"
    "4ac5a88790d54d839bd9ab",
    "48033330317689aa6355e580ae212e1f6196e4593e940094be52282009c5001b8db571a794c5a37f5f87497ca589d34d1f5c03"
    "3136396e959d29ad1718602275702e05c371b7da642c523abd31",
)]

_HEADS = [
    [(b":status", b"200"), (b"server", b"nginx/1.22.1"), (b"date", b"Wed, 02 Dec 2026 01:50:%02d GMT"),
     (b"content-type", b"application/octet-stream"), (b"content-length", b"4096"),
     (b"last-modified", b"Tue, 01 Dec 2026 10:00:00 GMT"), (b"etag", b'"6500abcd-1000"'),
     (b"accept-ranges", b"bytes")],
    [(b":status", b"404"), (b"server", b"nginx/1.22.1"), (b"date", b"Wed, 02 Dec 2026 01:50:%02d GMT"),
     (b"content-type", b"text/html"), (b"content-length", b"153")],
    [(b":status", b"301"), (b"location", b"https://127.0.0.1:8443/dir/"),
     (b"x-custom-thing", b"Some \xc3\xa9 value; q=0.5\x01\xff")],
]


def _sequence(r: random.Random) -> list[bytes]:
    """The header blocks of one connection: nginx's, or hpack's encoder (which uses the dynamic
    table, never-indexed fields, raw and Huffman strings, table size updates)."""
    if r.random() < 0.3:
        return NGINX[:r.randint(1, len(NGINX))]
    enc = hpack.Encoder()
    out = []
    for i in range(r.randint(1, 5)):
        head: list[tuple[bytes, bytes]] = [(n, v % i if b"%" in v else v) for n, v in r.choice(_HEADS)]
        if r.random() < 0.3:
            head.append(hpack.NeverIndexedHeaderTuple(b"set-cookie", b"id=%d" % r.randrange(10**9)))
        if r.random() < 0.2:
            enc.header_table_size = r.choice([0, 256, 4096])
        out.append(enc.encode(head, huffman=r.random() < 0.8))
    return out


def _mutate(r: random.Random, block: bytes) -> bytes:
    b = bytearray(block)
    for _ in range(r.randint(1, 3)):
        if not b:
            b.append(r.randrange(256))
            continue
        i = r.randrange(len(b))
        op = r.randrange(6)
        if op == 0:
            b[i] ^= 1 << r.randrange(8)
        elif op == 1:
            b[i] = r.randrange(256)
        elif op == 2:
            del b[i:i + r.randint(1, 4)]
        elif op == 3:
            b.insert(i, r.randrange(256))
        elif op == 4:
            del b[i:]
        else:
            b[i:i] = bytes([0x20 | r.randrange(32)])  # a table size update, maybe after a field
    return bytes(b)


def corpus(n: int, seed: int = 34) -> list[tuple[list[bytes], bytes]]:
    """*n* cases: the valid blocks a connection sent before, then a mutated one."""
    cases = []
    for k in range(n):
        r = random.Random(seed * 1_000_003 + k)
        seq = _sequence(r)
        j = r.randrange(len(seq))
        cases.append((seq[:j], _mutate(r, seq[j])))
    return cases


class _Refused(Exception):
    pass


def _outcome(decoder: object, before: list[bytes], block: bytes) -> list[tuple[bytes, bytes]] | str:
    """The fields decoded (after the blocks *before*), or the refusal's class name."""
    try:
        for b in before:
            decoder.decode(b, raw=True)  # type: ignore[attr-defined]
        return [(bytes(f[0]), bytes(f[1])) for f in decoder.decode(block, raw=True)]  # type: ignore[attr-defined]
    except (hpack.HPACKError, _Refused, jh2_connection.HPACKError, jh2_connection.OversizedHeaderListError) as exc:
        return type(exc).__name__


def _strict() -> StrictDecoder:
    return StrictDecoder(jh2_connection.Decoder(1 << 16), _Refused)


def test_the_strict_decoder_refuses_what_hpack_refuses_and_decodes_the_rest_alike() -> None:
    refused = {"structure": 0, "huffman": 0, "codec": 0}
    accepted = 0
    for before, block in corpus(6000):
        want = _outcome(hpack.Decoder(1 << 16), before, block)
        got = _outcome(_strict(), before, block)
        if isinstance(want, str):
            assert isinstance(got, str), (before, block.hex(), got)
            try:
                check_block(block)
            except BlockError:
                refused["structure"] += 1
                continue
            d = _strict()
            try:
                for b in before:
                    d.decode(b)
                d.inner.decode(block, True)
            except Exception:  # noqa: BLE001 - the compiled decoder refused it itself
                refused["codec"] += 1
            else:
                refused["huffman"] += 1
        else:
            assert got == want, (before, block.hex())
            accepted += 1
    # the corpus reaches each kind: refused by the walk (truncation, a late table size update),
    # by the Huffman check after the compiled decode, by the compiled decoder itself; and blocks
    # a mutation left valid (a changed value, say)
    assert min(refused.values()) >= 30 and accepted >= 300, (refused, accepted)


@pytest.mark.parametrize(("block", "why"), [
    (bytes.fromhex("88") + bytes.fromhex("20"), "a table size update after a field"),
    (bytes.fromhex("4088") + b"\x25\xa8\x49\xe9\x5b\xa9\x7d\x7f" + b"\x81\xff", "8 bits of padding"),
    (bytes.fromhex("0f1c8268") + bytes.fromhex("83") + b"\x1c\x6b\xfe", "padding not all ones"),
    (bytes.fromhex("0f1c") + b"\x84" + b"\xff\xff\xff\xff", "EOS in the string"),
    (bytes.fromhex("0f1c") + b"\x85" + b"\x1c\x6b", "a string longer than the block"),
    (bytes.fromhex("bf"), "an index cut off"),
    (bytes.fromhex("ff8080808080"), "an integer of six continuation bytes"),
    (bytes.fromhex("80"), "index 0"),
])
def test_blocks_the_rfc_forbids_are_refused(block: bytes, why: str) -> None:
    assert isinstance(_outcome(hpack.Decoder(), [], block), str), why
    assert isinstance(_outcome(_strict(), [], block), str), why


def test_the_huffman_check_follows_the_code() -> None:
    codes = hpack.huffman_constants
    enc = hpack.huffman.HuffmanEncoder(codes.REQUEST_CODES, codes.REQUEST_CODES_LENGTH)
    r = random.Random(7)
    for _ in range(500):
        text = bytes(r.randrange(256) for _ in range(r.randrange(1, 40)))
        coded = enc.encode(text)
        assert huffman_fits(text, coded)
        assert not huffman_fits(text, coded + b"\xff")  # 8 bits more of padding
        if sum(text.translate(HUFFMAN_BITS)) % 8:  # some padding: a zero in it
            assert not huffman_fits(text, coded[:-1] + bytes([coded[-1] & 0xFE]))
    assert list(HUFFMAN_BITS) == list(hpack.huffman_constants.REQUEST_CODES_LENGTH[:256])


def test_no_block_of_the_corpus_prints_anything() -> None:
    # the compiled decoder panics on a truncated block, which prints to stderr (a backtrace with
    # RUST_BACKTRACE=1) before Python sees the error: the walk refuses such blocks first
    code = ("from tests.unit.protocols.test_hpack_strict import corpus, _strict, _outcome\n"
            "n = sum(isinstance(_outcome(_strict(), b, m), str) for b, m in corpus(6000, seed=35))\n"
            "print(n)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "RUST_BACKTRACE": "1"}, check=True)
    assert out.stderr == ""
    assert int(out.stdout) > 1000  # (most of the corpus is refused: what could have printed)
