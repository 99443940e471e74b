"""The Python package ett against the `ett` command of the same build: the events the decoder fills equal
what `ett extract` writes, the analyses equal what `ett analyze ... --format json` prints, and bad input is an
ett.Error with the command's message and exit status."""

import csv
import io
import json
import os

import numpy as np
import pandas as pd
import pytest

import ett
from conftest import run_ett


def extract_rows(image, session):
    status, out, err = run_ett("extract", image, "--session", session)
    assert status == 0, err
    return list(csv.DictReader(io.StringIO(out)))


def same_as_cli(cli_args, call):
    """call() returns what `ett CLI_ARGS --format json` prints, or raises what it refuses with."""
    status, out, err = run_ett(*cli_args, "--format", "json")
    if status == 0:
        assert call() == json.loads(out)
        return json.loads(out)
    with pytest.raises(ett.Error) as raised:
        call()
    assert raised.value.exit_code == status
    assert "ett: " + str(raised.value) == err.strip().splitlines()[-1]
    return None


def test_image_events_are_the_extracted_events(fx):
    for session in (1, 2):
        capture = ett.open(fx.image, session=session)
        events = capture.events()
        rows = extract_rows(fx.image, session)
        assert events.dtype == ett.EVENT_DTYPE and events.dtype.names[:7] == (
            "seq", "tsc", "time_ns", "probe", "code", "aux", "flags")
        assert events.shape == (len(rows),)
        for column in ("seq", "tsc", "probe", "code"):
            assert np.array_equal(events[column], np.array([int(r[column]) for r in rows], dtype=np.uint64))
        # extract rounds to whole ns; the array keeps the fraction.
        rounded = np.array([int(r["time_ns"]) for r in rows])
        assert np.all(np.abs(events["time_ns"] - rounded) <= 0.5 + 1e-6)
        assert capture.header["session"] == session
        assert capture.header["event_count"] == len(rows)


def test_newest_session_by_default_and_sessions_listed(fx):
    assert ett.open(fx.image).session == 2
    listed = ett.sessions(fx.image)
    assert [s["session"] for s in listed] == [1, 2]
    assert all(s["health"] == "ok" for s in listed)
    status, out, _ = run_ett("ls", fx.image, "--format", "json")
    assert status == 0
    assert [s["tsc_hz"] for s in listed] == [s["tsc_hz"] for s in json.loads(out)]


def test_dataframe_holds_the_events(fx):
    capture = ett.open(fx.image, session=1)
    frame = capture.dataframe()
    events = capture.events()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns)[:7] == ["seq", "tsc", "time_ns", "probe", "code", "aux", "flags"]
    assert len(frame) == len(events)
    assert frame["tsc"].iloc[-1] == events["tsc"][-1]


def test_stored_trace_events_equal_the_image_events(fx):
    stored = ett.open(fx.db, trace=1)
    image = ett.open(fx.image, session=1).events()
    events = stored.events()
    assert events.shape == image.shape
    for column in ("seq", "tsc", "probe", "code", "lines"):
        assert np.array_equal(events[column], image[column])
    assert np.allclose(events["time_ns"], image["time_ns"], rtol=0, atol=1e-3)


def test_stored_trace_objects(fx):
    stored = ett.open(fx.db, trace=1)
    assert stored.trace_id == 1
    assert stored.labels == {1: "node A", 2: None}
    assert stored.pps_mapping is None
    assert stored.stalls == []
    assert stored.header["trace_id"] == 1 and stored.header["session"] == 1
    assert stored.info["layout"] == "2x4"
    assert ett.open(fx.db).trace_id == 2  # the newest loaded
    assert [t["trace_id"] for t in ett.traces(fx.db)] == [1, 2]


@pytest.mark.parametrize("args, kwargs", [
    (["--from", "1", "--to", "2", "--pi-ns", "1100"], dict(from_="1", to="2", pi_ns=1100)),
    (["--from", "1:1", "--to", "1:2"], dict(from_="1:1", to="1:2")),
    (["--from", "1", "--to", "2", "--pair", "fifo", "--size-of-code", "1=16,2=500,3=900", "--fit", "linear"],
     dict(from_="1", to="2", pair="fifo", size_of_code={1: 16, 2: 500, 3: 900}, fit="linear")),
    (["--from", "1", "--to", "2", "--size-of-code", "1=16,2=500", "--fit", "robust"],
     dict(from_="1", to="2", size_of_code="1=16,2=500", fit="robust")),
    (["--from", "5", "--to", "2"], dict(from_="5", to="2")),  # refused: layout 2x4 has probes 1-2
])
def test_durations_equal_the_cli(fx, args, kwargs):
    stored = ett.open(fx.db, trace=1)
    same_as_cli(["analyze", "durations", "--db", fx.db, "--trace", "1", *args],
                lambda: stored.durations(**kwargs))


def test_actions_frame_and_fit(fx):
    stored = ett.open(fx.db, trace=1)
    result = stored.durations("1", "2", pi_ns=1100)
    frame = stored.actions("1", "2", pi_ns=1100)
    assert len(frame) == result["durations"]["count"] > 0
    assert frame["duration_ns"].max() == pytest.approx(result["durations"]["max_ns"], abs=1e-3)
    fit = stored.fit("1", "2", "1=16,2=500,3=900")
    assert fit == result_fit(fx, "1=16,2=500,3=900")


def result_fit(fx, sizes):
    _, out, _ = run_ett("analyze", "durations", "--db", fx.db, "--trace", "1", "--from", "1", "--to", "2",
                        "--size-of-code", sizes, "--fit", "linear", "--format", "json")
    return json.loads(out)["fit"]


@pytest.mark.parametrize("args, kwargs", [
    ([], {}),
    (["--tau-ns", "2000"], dict(tau_ns=2000)),
])
def test_intervals_equal_the_cli(fx, args, kwargs):
    stored = ett.open(fx.db, trace=2)
    same_as_cli(["analyze", "intervals", "--db", fx.db, "--trace", "2", *args], lambda: stored.intervals(**kwargs))


@pytest.mark.parametrize("args, kwargs", [
    ([], {}),
    (["--by", "probe"], dict(by="probe")),
    (["--by", "code", "--match", "XXXXXXX1"], dict(by="code", match="XXXXXXX1")),
    (["--by", "time:10ms"], dict(by="time:10ms")),
    (["--by", "bogus"], dict(by="bogus")),
])
def test_histogram_equals_the_cli(fx, args, kwargs):
    stored = ett.open(fx.db, trace=1)
    same_as_cli(["analyze", "histogram", "--db", fx.db, "--trace", "1", *args], lambda: stored.histogram(**kwargs))


def test_precision_and_pps_equal_the_cli(fx):
    # A synthetic capture has neither check intervals nor a PPS line: both are refused, alike.
    stored = ett.open(fx.db, trace=1)
    same_as_cli(["analyze", "precision", "--db", fx.db, "--trace", "1", "--no-store"],
                lambda: stored.precision(store=False))
    same_as_cli(["analyze", "pps", "--db", fx.db, "--trace", "1", "--no-store"], lambda: stored.pps(store=False))
    same_as_cli(["analyze", "pps", "--db", fx.db, "--trace", "1", "--line", "D9"], lambda: stored.pps(line="D9"))


def test_align_equals_the_cli(fx):
    result = same_as_cli(["analyze", "align", "--db", fx.db, "--traces", "1,2", "--sync", "1"],
                         lambda: ett.align(fx.db, [1, 2], sync=1))
    assert result is not None
    same_as_cli(["analyze", "align", "--db", fx.db, "--traces", "1,2", "--pps"],
                lambda: ett.align(fx.db, [1, 2], pps=True))


@pytest.mark.parametrize("args, kwargs", [
    (["--from", "1", "--to", "2", "--pi-ns", "1100"], dict(pi_ns=1100)),
    (["--from", "1", "--to", "2", "--size-of-code", "1=16,2=500", "--fit", "robust", "--resamples", "300",
      "--stat", "p90", "--max-regression", "250ns", "--seed", "7"],
     dict(size_of_code={1: 16, 2: 500}, fit="robust", resamples=300, stat="p90", max_regression="250ns", seed=7)),
    (["--from", "1", "--to", "2", "--stat", "bogus"], dict(stat="bogus")),
])
def test_compare_equals_the_cli(fx, args, kwargs):
    status, out, err = run_ett("compare", "--db", fx.db, "--baseline", "1", "--candidate", "2", *args,
                               "--format", "json")
    call = lambda: ett.compare(fx.db, [1], [2], "1", "2", **kwargs)  # noqa: E731
    if status in (0, 1, 7):  # the gate's decision
        assert call() == json.loads(out)
        return
    with pytest.raises(ett.Error) as raised:
        call()
    assert raised.value.exit_code == status == 8
    assert "ett: " + str(raised.value) == err.strip().splitlines()[-1]


def test_load_into_a_new_database(fx, tmp_path):
    url = f"sqlite:{tmp_path / 'new.db'}"
    loaded = ett.load(fx.image, url, all=True)
    assert [(s["session"], s["events"]) for s in loaded] == [(1, 20000), (2, 20000)]
    assert ett.open(url, trace=loaded[0]["trace_id"]).events().shape == (20000,)


def refused_alike(cli_args, call):
    status, _, err = run_ett(*cli_args)
    assert status != 0
    with pytest.raises(ett.Error) as raised:
        call()
    assert raised.value.exit_code == status
    assert "ett: " + str(raised.value) == err.strip().splitlines()[-1]
    return raised.value


def flip(offset):
    def how(path):
        with open(path, "r+b") as f:
            f.seek(offset)
            byte = f.read(1)
            f.seek(offset)
            f.write(bytes([byte[0] ^ 0xFF]))
    return how


def chunk_offsets(path):
    data = open(path, "rb").read()
    found, at = [], data.find(b"ETTC")
    while at >= 0:
        found.append(at)
        at = data.find(b"ETTC", at + 1)
    return found


def test_damaged_images_raise_the_cli_message(fx, tmp_path):
    chunk = chunk_offsets(fx.image)[1]
    cases = {
        "not_a_disk.img": flip(0),
        "label_crc.img": flip(100),
        "chunk.img": flip(chunk + 600),
        "cut.img": lambda p: os.truncate(p, chunk_offsets(fx.image)[-1] + 4096),
        "cut_label.img": lambda p: os.truncate(p, 256),
    }
    codes = set()
    for name, how in cases.items():
        path = fx.damaged(name, how)
        for session in (1, 2):
            status, _, _ = run_ett("extract", path, "--session", session, "-o", tmp_path / f"{name}{session}.csv")
            if status == 0:
                assert ett.open(path, session=session).events().size > 0
                continue
            error = refused_alike(["extract", path, "--session", session, "-o", tmp_path / "never.csv"],
                                  lambda: ett.open(path, session=session).events())
            codes.add(error.exit_code)
    assert {10, 12, 13} <= codes  # not a trace disk, bad CRC, truncated
    # Salvaged, the damaged session's good chunks are read, as `ett extract --salvage` reads them.
    damaged = fx.damaged("chunk.img", flip(chunk + 600))
    salvaged = ett.open(damaged, session=1, salvage=True)
    status, out, _ = run_ett("extract", damaged, "--session", 1, "--salvage")
    assert status == 0
    assert salvaged.events().shape == (len(out.splitlines()) - 1,)
    assert salvaged.warnings and "corrupt" in salvaged.warnings[0]


def test_other_bad_input(fx, tmp_path):
    refused_alike(["extract", tmp_path / "missing.img"], lambda: ett.open(tmp_path / "missing.img"))
    refused_alike(["extract", fx.image, "--session", "9"], lambda: ett.open(fx.image, session=9))
    odd = tmp_path / "odd.bin"
    odd.write_bytes(os.urandom(4096))
    refused_alike(["extract", odd], lambda: ett.open(odd))
    missing_db = f"sqlite:{tmp_path / 'none.db'}"
    refused_alike(["analyze", "histogram", "--db", missing_db], lambda: ett.open(missing_db))
    assert not (tmp_path / "none.db").exists()
    refused_alike(["analyze", "histogram", "--db", fx.db, "--trace", "99"], lambda: ett.open(fx.db, trace=99))
    not_db = f"sqlite:{odd}"
    refused_alike(["analyze", "histogram", "--db", not_db], lambda: ett.open(not_db))
