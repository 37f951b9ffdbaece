"""A service call sent again until an answer arrives (``service_call.ask``)."""

from __future__ import annotations

from pic_ros_tools.ros.service_call import ask


class Future:
    """A service call's future whose answer arrives once ``arrive`` is called."""

    def __init__(self, answer: str, arrived: bool = False) -> None:
        self.answer = answer
        self.arrived = arrived

    def done(self) -> bool:
        return self.arrived

    def result(self) -> str:
        assert self.arrived
        return self.answer


def test_a_lost_answer_is_asked_again_and_the_first_answer_is_returned() -> None:
    """Two requests lose their answer; the third is answered: three sent, its answer kept."""
    sent: list[Future] = []

    def send() -> Future:
        sent.append(Future(f'answer {len(sent)}', arrived=len(sent) == 2))
        return sent[-1]

    assert ask(send, timeout=60.0, resend_after=0.0) == 'answer 2'
    assert len(sent) == 3


def test_an_answer_that_arrives_while_waiting_is_not_asked_again() -> None:
    """The spin (here the pump) brings the answer in: one request only."""
    sent: list[Future] = []
    pumps: list[int] = []

    def pump() -> None:
        pumps.append(1)
        if len(pumps) == 3:
            sent[0].arrived = True

    def send() -> Future:
        sent.append(Future('engaged'))
        return sent[-1]

    assert ask(send, timeout=60.0, resend_after=60.0, pump=pump) == 'engaged'
    assert len(sent) == 1 and len(pumps) == 3


def test_a_late_answer_to_an_earlier_request_counts() -> None:
    """Whichever request is answered first gives the answer."""
    sent: list[Future] = []

    def send() -> Future:
        sent.append(Future(f'answer {len(sent)}'))
        if len(sent) == 2:
            sent[0].arrived = True
        return sent[-1]

    assert ask(send, timeout=60.0, resend_after=0.0) == 'answer 0'
    assert len(sent) == 2


def test_no_answer_within_the_bound_gives_none() -> None:
    """A service that never answers: None once the bound has passed (here none at all)."""
    assert ask(lambda: Future('never'), timeout=0.0) is None
