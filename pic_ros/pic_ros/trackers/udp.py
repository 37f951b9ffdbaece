"""
A UDP datagram receiver that says how many datagrams the kernel dropped.

Trackers that stream over UDP (Xsens MVN) send faster than a busy process may read: while the
reading thread is starved, datagrams wait in the socket's kernel buffer, and when that buffer is
full the kernel drops them silently. :class:`UdpReceiver`

- asks for a receive buffer of ``buffer_size`` bytes (``SO_RCVBUF``). Linux grants at most
  ``net.core.rmem_max`` (and reports twice the granted value, its bookkeeping included);
  :attr:`UdpReceiver.buffer_size` is what the kernel reports and
  :attr:`UdpReceiver.buffer_capped` says when the request was cut;
- on Linux turns on ``SO_RXQ_OVFL``: every datagram then carries the number of datagrams the
  kernel dropped on this socket so far, kept as :attr:`UdpReceiver.kernel_drops` (None where the
  system cannot tell). A drop is seen with the next datagram that arrives.

At 240 Hz a datagram of about 800 bytes costs the kernel about 2 kB of buffer, so the default
:data:`UDP_RECEIVE_BUFFER` (4 MiB asked, up to 8 MiB granted) holds several seconds of stall.
"""

from __future__ import annotations

import socket
import struct
import sys
from typing import Final

from pic_ros.exceptions import ConfigError
from pic_ros.schema import ParameterDef

SO_RXQ_OVFL: Final = 40
"""Linux socket option: datagrams carry the socket's drop count (``<asm-generic/socket.h>``)."""

UDP_RECEIVE_BUFFER: Final = ParameterDef(
    'udp_receive_buffer', 4 * 1024 * 1024,
    'UDP trackers (xsens_mvn): kernel receive buffer asked for (SO_RCVBUF); Linux grants at '
    'most net.core.rmem_max and the node warns when it grants less', unit='bytes',
    low=65536, high=1 << 30, read_only=True,
)
"""The skeleton node's ``udp_receive_buffer``."""

_COUNTER: Final = struct.Struct('=I')


class UdpReceiver:
    """
    A bound UDP socket read with a timeout, with its kernel drop count.

    :param address: IPv4 address to bind (``0.0.0.0`` for every interface).
    :param port: UDP port to bind, in [1, 65535].
    :param buffer_size: Receive buffer to ask for [bytes].
    :param max_size: Largest datagram returned whole [bytes]; longer ones are cut.
    :param timeout: Longest wait of :meth:`receive` [s].
    :raises ConfigError: If the socket cannot be bound.
    """

    def __init__(
        self,
        address: str,
        port: int,
        buffer_size: int = UDP_RECEIVE_BUFFER.default,
        max_size: int = 65536,
        timeout: float = 0.2,
    ) -> None:
        self.requested = int(buffer_size)
        """The receive buffer asked for [bytes]."""
        self._max_size = int(max_size)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.requested)
            self._socket.bind((address, int(port)))
        except OSError as err:
            self._socket.close()
            raise ConfigError(
                f'cannot bind the UDP receiver to {address}:{port}: {err}'
            ) from err
        self._socket.settimeout(timeout)
        self.kernel_drops: int | None = None
        """Datagrams the kernel dropped on this socket so far (None: the system cannot tell)."""
        self._ancillary = 0
        if sys.platform.startswith('linux'):
            try:
                self._socket.setsockopt(socket.SOL_SOCKET, SO_RXQ_OVFL, 1)
            except OSError:
                pass
            else:
                self.kernel_drops = 0
                self._ancillary = socket.CMSG_SPACE(_COUNTER.size)
        self.received = 0
        """Datagrams returned by :meth:`receive`."""

    @property
    def address(self) -> tuple[str, int]:
        """Return the bound address and port."""
        host, port = self._socket.getsockname()
        return str(host), int(port)

    @property
    def buffer_size(self) -> int:
        """Return the receive buffer the kernel reports [bytes] (Linux: twice the grant)."""
        return int(self._socket.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))

    @property
    def buffer_capped(self) -> bool:
        """Return whether the kernel granted less buffer than asked for."""
        granted = self.buffer_size // 2 if sys.platform.startswith('linux') else self.buffer_size
        return granted < self.requested

    def receive(self) -> bytes | None:
        """
        Wait for one datagram.

        :return: The datagram, or None when none came within the timeout.
        :raises OSError: When the socket is closed or fails.
        """
        try:
            data, ancillary, _, _ = self._socket.recvmsg(self._max_size, self._ancillary)
        except TimeoutError:
            return None
        return self._received(data, ancillary)

    def receive_all(self, limit: int = 4096) -> list[bytes]:
        """
        Wait for one datagram, then take every one already waiting behind it without waiting.

        A reader that acts on the newest datagram only (the live path) reads a backlog in one
        call instead of one datagram per step.

        :param limit: Most datagrams returned by one call (the rest stay for the next call).
        :return: The datagrams in arrival order; empty when none came within the timeout.
        :raises OSError: When the socket is closed or fails.
        """
        first = self.receive()
        if first is None:
            return []
        datagrams = [first]
        timeout = self._socket.gettimeout()
        self._socket.settimeout(0.0)  # non-blocking: a socket timeout would wait before reading
        try:
            while len(datagrams) < limit:
                try:
                    data, ancillary, _, _ = self._socket.recvmsg(self._max_size, self._ancillary)
                except (BlockingIOError, InterruptedError):
                    break
                datagrams.append(self._received(data, ancillary))
        finally:
            self._socket.settimeout(timeout)
        return datagrams

    def _received(self, data: bytes, ancillary: list[tuple[int, int, bytes]]) -> bytes:
        """Read the drop count a datagram carries, count it and return its bytes."""
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_RXQ_OVFL and len(payload) >= 4:
                self.kernel_drops = _COUNTER.unpack_from(payload)[0]
        self.received += 1
        return data

    def close(self) -> None:
        """Close the socket (never while another thread is in :meth:`receive`)."""
        self._socket.close()
