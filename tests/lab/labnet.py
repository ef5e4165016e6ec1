"""What the lab's raw-socket tools share (tests/lab/evade.py, ips_flood.py,
tcp_spoof.py): imported from their own folder, never run."""
import struct


def csum(data):
    """The Internet checksum (RFC 1071) of data, as the header field holds it."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
