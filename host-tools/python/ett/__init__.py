"""ett: ETT's trace images, trace database and analyses from Python.

    import ett
    c = ett.open("trace.img")          # the newest session of a trace image (session=N for another)
    a = c.events()                     # numpy structured array, ett.EVENT_DTYPE, filled by the decoder
    df = c.dataframe()                 # the same as a pandas DataFrame
    t = ett.open("sqlite:traces.db")   # the newest loaded trace (trace=N for another; or postgresql://...)
    t.durations("1:1", "1:2")          # dict: what `ett analyze durations --format json` prints

Errors are ett.Error: str(e) is the message `ett` prints after "ett: ", e.exit_code the status it exits with.
The package is a pybind11 module (ett._ett) over the host libraries of the `ett` command; docs/guide/python.md.
"""

import json as _json
import os as _os

import numpy as _numpy

from ._ett import Error
from . import _ett

# The record the decoder writes (32 bytes, fields at their C++ offsets), its fields named in this order.
_FIELDS = ("seq", "tsc", "time_ns", "probe", "code", "aux", "flags", "lines")
EVENT_DTYPE = _numpy.dtype({"names": _FIELDS,
                            "formats": [_ett.EVENT_DTYPE.fields[name][0] for name in _FIELDS],
                            "offsets": [_ett.EVENT_DTYPE.fields[name][1] for name in _FIELDS],
                            "itemsize": _ett.EVENT_DTYPE.itemsize})

__all__ = ["EVENT_DTYPE", "Error", "open", "sessions", "traces", "load", "align", "compare", "ImageCapture",
           "StoredCapture"]


def _is_db_url(source):
    return source.startswith(("sqlite:", "postgresql://", "postgres://"))


def _error(message, exit_code=1):
    error = Error(message)
    error.exit_code = exit_code
    return error


def _require_database(url):
    """The refusal `ett` gives for a SQLite file that is not there (opening it would create an empty one)."""
    if url.startswith("sqlite:"):
        path = url[len("sqlite:"):]
        if not _os.path.exists(path):
            raise _error(f"--db {url}: no such database file (`ett load` creates one; check $ETT_DB)")
        if not _os.path.isfile(path):
            raise _error(f"--db {url}: not a regular file")


def open(source, *, trace=None, session=None, salvage=False):
    """A capture: a session of a trace image (path; `session` N, default the newest; `salvage` reads a
    damaged session's good chunks) or a trace of the database ("sqlite:FILE", "postgresql://..."; `trace` N,
    default the newest loaded)."""
    source = _os.fspath(source)
    if _is_db_url(source):
        _require_database(source)
        return StoredCapture(_ett.StoredTrace(source, trace))
    return ImageCapture(_ett.ImageSession(source, session, salvage))


def sessions(image):
    """Every session of a trace image, as `ett ls` lists them: header fields, health and detail."""
    return _ett.image_sessions(_os.fspath(image))


def traces(db):
    """The traces of a database: trace_id, disk_uuid, session, event_count, mode, layout, captured_at."""
    _require_database(db)
    return _ett.traces(db)


def load(image, db, *, session=None, all=False, salvage=False):
    """`ett load IMAGE --db DB`: loads a session (the newest, `session` N, or `all`); one dict per session
    (session, trace_id, events, already_loaded, health, skipped, lost)."""
    return _ett.load(_os.fspath(image), db, session, all, salvage)


def align(db, traces, *, sync=None, pps=False):
    """`ett analyze align --traces ID,... --sync P|--pps --format json`, as a dict."""
    _require_database(db)
    return _json.loads(_ett.align_json(db, list(traces), sync or 0, pps))


def compare(db, baseline, candidate, from_, to, *, pair="same-code", size_of_code=None, fit="linear",
            stat="median", max_regression="5%", confidence=0.95, resamples=2000, seed=1, min_actions=20,
            pi_ns=None, stalled="drop"):
    """`ett compare --baseline IDS --candidate IDS --from FROM --to TO --format json`, as a dict; the gate's
    decision is result["gate"]["decision"] (pass, regression, undecided). Errors: ett.Error, exit_code 8."""
    _require_database(db)
    if isinstance(size_of_code, dict):
        size_of_code = ",".join(f"{code}={size}" for code, size in size_of_code.items())
    return _json.loads(_ett.compare_json(db, list(baseline), list(candidate), str(from_), str(to), pair,
                                         size_of_code or "", fit, stat, str(max_regression), confidence,
                                         resamples, seed, min_actions, pi_ns, stalled))


class _Capture:
    def events(self):
        """The events as a numpy structured array of ett.EVENT_DTYPE: seq, tsc, time_ns (ns from the capture's
        start), probe, code, aux, flags, lines."""
        return self._source.events().view(EVENT_DTYPE)

    def dataframe(self):
        """The events as a pandas DataFrame (a column per field of ett.EVENT_DTYPE)."""
        import pandas

        return pandas.DataFrame(self.events())

    @property
    def header(self):
        """The session header, a dict under the traces table's column names."""
        return self._source.header()

    @property
    def stalls(self):
        """The capture's stalls: [{"start_ns", "length_ns"}], in ns from the capture's start."""
        return self._source.stalls()


class ImageCapture(_Capture):
    """One session of a trace image, checked when opened as `ett extract` checks it."""

    def __init__(self, source):
        self._source = source

    @property
    def path(self):
        return self._source.path

    @property
    def session(self):
        return self._source.session

    @property
    def warnings(self):
        """What `ett extract` would warn about (a short image, a partial or salvaged session)."""
        return list(self._source.warnings)

    def __repr__(self):
        return f"<ett.ImageCapture {self.path} session {self.session}>"


class StoredCapture(_Capture):
    """A trace of the database; its analyses are those of `ett analyze`, returned as the dicts its
    --format json prints."""

    def __init__(self, source):
        self._source = source

    @property
    def trace_id(self):
        return self._source.trace_id

    @property
    def info(self):
        """What the analyses know of the trace: name, tsc_hz, capture_start_tsc, mode, layout, ..."""
        return self._source.info()

    @property
    def labels(self):
        """{probe: label}, as `ett label` set them (None where unlabelled)."""
        return self._source.labels()

    @property
    def pps_mapping(self):
        """The stored TSC-to-UTC mapping (`ett analyze pps`), a dict, or None."""
        return self._source.pps_mapping()

    def precision(self, *, bins=40, store=True):
        """`ett analyze precision` (store=False: --no-store)."""
        return _json.loads(_ett.precision_json(self._source, bins, store))

    def durations(self, from_, to, *, pair="same-code", pi_ns=None, size_of_code=None, fit=None):
        """`ett analyze durations --from FROM --to TO`: actions with their bound and stall, the summary, and
        with size_of_code ("1=16,2=500" or {1: 16, 2: 500}) and fit ("linear" | "robust") the fit."""
        if isinstance(size_of_code, dict):
            size_of_code = ",".join(f"{code}={size}" for code, size in size_of_code.items())
        return _json.loads(_ett.durations_json(self._source, str(from_), str(to), pair, pi_ns,
                                               size_of_code or "", fit or ""))

    def actions(self, from_, to, **options):
        """The actions of durations() as a pandas DataFrame (a row per action)."""
        import pandas

        return pandas.DataFrame(self.durations(from_, to, **options)["actions"])

    def fit(self, from_, to, size_of_code, method="linear", **options):
        """The fit of durations(): duration = a + b * size over the actions' sizes (size_of_code)."""
        return self.durations(from_, to, size_of_code=size_of_code, fit=method, **options)["fit"]

    def intervals(self, *, tau_ns=None):
        """`ett analyze intervals` (tau_ns: --tau-ns; default the stored tau of the machine)."""
        return _json.loads(_ett.intervals_json(self._source, tau_ns))

    def histogram(self, *, by="code", match=None, max_buckets=100_000):
        """`ett analyze histogram --by code|probe|time:BUCKET [--match TRITS]`."""
        return _json.loads(_ett.histogram_json(self._source, by, match or "", max_buckets))

    def pps(self, *, line="D7", falling=False, utc_at_edge=None, store=True):
        """`ett analyze pps` (store=False: --no-store)."""
        return _json.loads(_ett.pps_json(self._source, line, falling, utc_at_edge or "", store))

    def __repr__(self):
        return f"<ett.StoredCapture trace {self.trace_id}>"
