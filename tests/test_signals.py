"""nard_ai.core.signals: SIGTERM raises KeyboardInterrupt inside the block, and only there."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from nard_ai.core.signals import sigterm_as_interrupt


def _deliver(sig: int) -> None:
    """Send ``sig`` to this process and give the main thread a moment to run its handler."""
    os.kill(os.getpid(), sig)
    time.sleep(1.0)  # the handler runs between bytecodes, well within this


def test_sigterm_raises_keyboard_interrupt_and_sets_the_flag():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with sigterm_as_interrupt() as stop:
            _deliver(signal.SIGTERM)
    assert stop.signalled  # exit 143, not 130
    assert signal.getsignal(signal.SIGTERM) is before  # restored on the way out


def test_ctrl_c_leaves_the_flag_down():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own Ctrl-C handler
    try:
        with pytest.raises(KeyboardInterrupt):
            with sigterm_as_interrupt() as stop:
                _deliver(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not stop.signalled  # exit 130


def test_a_clean_block_restores_the_handler_and_leaves_the_flag_down():
    before = signal.getsignal(signal.SIGTERM)
    with sigterm_as_interrupt() as stop:
        assert signal.getsignal(signal.SIGTERM) is not before
    assert not stop.signalled
    assert signal.getsignal(signal.SIGTERM) is before


def test_off_the_main_thread_nothing_changes():
    # signal.signal raises ValueError off the main thread; the block must not
    before = signal.getsignal(signal.SIGTERM)
    seen = {}

    def run():
        with sigterm_as_interrupt() as stop:
            seen["handler"] = signal.getsignal(signal.SIGTERM)
        seen["signalled"] = stop.signalled

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == {"handler": before, "signalled": False}
