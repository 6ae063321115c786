"""``attnscope generate``: rows captured in the cached decode steps, checked against one full
forward over prompt + answer (eager-free reference: ``engine.run`` on the whole sequence,
itself checked against eager attention in test_capture), and generated ids checked
against transformers' own ``generate``; then the result, the view, bad input and Ctrl-C."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from support import tiny

ROOT = Path(__file__).resolve().parents[2]


PROMPT = "민수는 사과를 샀다."


def test_ctrl_c_prints_the_answer_so_far(tmp_path: Path) -> None:
    """SIGINT in the middle of a long generation: the answer so far on stderr, exit 130, no traceback."""
    tok = tiny.train_tokenizer()
    config = tiny.make_config(len(tok), num_hidden_layers=1)
    config.max_position_embeddings = 1_000_000
    tiny.make_model(config).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    master, slave = pty.openpty()  # stderr is a terminal, so progress lines show when generation runs
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))  # wide: progress lines are not cut
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "attnscope", "generate", PROMPT, "-n", "500000", "--layer", "0", "--head", "0"]
        + ["--model", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
        cwd=ROOT,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 300
    try:
        while b"generating 3/" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                seen += os.read(master, 4096)
        assert b"generating" in seen, seen
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
        while True:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    err = seen.decode("utf-8", "replace")
    assert proc.returncode == 130, err
    assert out == b""
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    import re

    done = re.search(r"attnscope: interrupted after (\d+) new token\(s\); the answer so far:", err)
    assert done is not None and int(done.group(1)) >= 3, err
