"""The UDP receiver: a sized kernel buffer, and every datagram the kernel drops counted."""

from __future__ import annotations

import socket
import sys

from pic_ros.exceptions import ConfigError
from pic_ros.trackers.udp import UdpReceiver
import pytest

linux_only = pytest.mark.skipif(
    not sys.platform.startswith('linux'), reason='SO_RXQ_OVFL drop counts are Linux only'
)


@pytest.fixture
def receiver():
    """Return a receiver on a free loopback port with the smallest buffer the kernel allows."""
    item = UdpReceiver('127.0.0.1', 0, buffer_size=65536, timeout=0.05)
    yield item
    item.close()


def send(receiver: UdpReceiver, count: int, size: int = 800, first: int = 0) -> None:
    """Send ``count`` numbered datagrams of ``size`` bytes to the receiver."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for index in range(first, first + count):
            sender.sendto(index.to_bytes(4, 'big') + bytes(size - 4), receiver.address)


def drain(receiver: UdpReceiver) -> list[int]:
    """Return the numbers of the datagrams waiting, in arrival order."""
    numbers = []
    for _ in range(100_000):  # bounded: stops at the first timeout
        data = receiver.receive()
        if data is None:
            break
        numbers.append(int.from_bytes(data[:4], 'big'))
    return numbers


def test_receive_returns_none_when_nothing_came_within_the_timeout(receiver) -> None:
    assert receiver.receive() is None
    assert receiver.received == 0


def test_datagrams_arrive_whole_and_in_order(receiver) -> None:
    send(receiver, 20)
    assert drain(receiver) == list(range(20))
    assert receiver.received == 20


@linux_only
def test_datagrams_the_kernel_dropped_are_counted_exactly(receiver) -> None:
    """Nobody reads while 3000 datagrams come: received + kernel drops = sent."""
    send(receiver, 3000)
    numbers = drain(receiver)
    send(receiver, 1, first=3000)  # the drop count travels with the next datagram queued
    numbers += drain(receiver)

    assert receiver.kernel_drops is not None and receiver.kernel_drops > 0
    assert len(numbers) + receiver.kernel_drops == 3001
    assert numbers[-1] == 3000
    assert len(set(numbers)) == len(numbers)


@linux_only
def test_the_default_buffer_keeps_seconds_of_240_hz_while_nobody_reads() -> None:
    """Two seconds of a 240 Hz stream sent during a stall are all read afterwards."""
    with open('/proc/sys/net/core/rmem_max', encoding='ascii') as limits:
        rmem_max = int(limits.read())
    receiver = UdpReceiver('127.0.0.1', 0, timeout=0.05)
    try:
        if receiver.buffer_capped:
            pytest.skip(f'net.core.rmem_max is {rmem_max}: the kernel caps the buffer')
        send(receiver, 480)
        assert drain(receiver) == list(range(480))
        assert receiver.kernel_drops == 0
    finally:
        receiver.close()


def test_a_buffer_larger_than_the_kernel_grants_is_reported_as_capped() -> None:
    receiver = UdpReceiver('127.0.0.1', 0, buffer_size=1 << 30)
    try:
        assert receiver.buffer_capped
        assert 0 < receiver.buffer_size < 2 * receiver.requested
    finally:
        receiver.close()


def test_a_port_in_use_is_a_config_error_naming_the_address(receiver) -> None:
    host, port = receiver.address
    with pytest.raises(ConfigError, match=f'{host}:{port}'):
        UdpReceiver(host, port)


def test_receive_all_takes_the_whole_backlog_in_order_in_one_call(receiver) -> None:
    send(receiver, 30)
    assert [int.from_bytes(data[:4], 'big') for data in receiver.receive_all()] == list(range(30))
    assert receiver.received == 30
    assert receiver.receive_all() == []  # nothing waiting: the timeout, then an empty list


def test_receive_all_leaves_what_exceeds_its_limit_for_the_next_call(receiver) -> None:
    send(receiver, 10)
    first = receiver.receive_all(limit=4)
    rest = receiver.receive_all()
    assert [int.from_bytes(data[:4], 'big') for data in first + rest] == list(range(10))
    assert len(first) == 4
