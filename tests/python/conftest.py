"""Fixtures of the Python package's tests: synthetic trace images (`ett synth`) and a SQLite database they are
loaded into (`ett load`), made once per run through the `ett` binary of the same build ($ETT_BIN)."""

import os
import shutil
import subprocess

import pytest


def run_ett(*args, cwd=None):
    """The `ett` command's exit status, standard output and standard error."""
    done = subprocess.run([os.environ["ETT_BIN"], *map(str, args)], capture_output=True, text=True, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def ett_ok(*args):
    status, out, err = run_ett(*args)
    assert status == 0, f"ett {' '.join(map(str, args))}: {err}"
    return out


class Fixtures:
    def __init__(self, root):
        self.root = root
        self.image = root / "two.img"
        # Two sessions: the second one a second capture of the same lines, its clock 40 ppm fast (align).
        ett_ok("mkdisk", self.image, "--size", "8M", "-q")
        ett_ok("synth", self.image, "--events", "20000", "--seed", "1", "-q")
        ett_ok("synth", self.image, "--events", "20000", "--seed", "1", "--clock-ppm", "40", "-q")
        self.db_file = root / "traces.db"
        self.db = f"sqlite:{self.db_file}"
        ett_ok("load", self.image, "--all", "--db", self.db, "-q")
        ett_ok("label", "--db", self.db, "--trace", "1", "--probe", "1", "node A")

    def damaged(self, name, how):
        """A copy of the image, changed by how(path)."""
        path = self.root / name
        shutil.copyfile(self.image, path)
        how(path)
        return path


@pytest.fixture(scope="session")
def fx(tmp_path_factory):
    return Fixtures(tmp_path_factory.mktemp("ett"))
