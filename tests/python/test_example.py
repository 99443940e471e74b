"""The worked example of docs/guide/python.md (docs/guide/python_example.py) runs as it is and writes its plot."""

import os
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "guide", "python_example.py")


def test_worked_example_runs_and_plots(tmp_path):
    done = subprocess.run([sys.executable, EXAMPLE, str(tmp_path)], capture_output=True, text=True,
                          env=dict(os.environ, MPLBACKEND="Agg"))
    assert done.returncode == 0, done.stderr
    assert "session 1: 20000 events" in done.stdout
    assert "fit: duration = " in done.stdout
    with open(tmp_path / "durations.png", "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"
    # Run again in the same place: the same output (it starts from nothing).
    again = subprocess.run([sys.executable, EXAMPLE, str(tmp_path)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert again.stdout == done.stdout
