// python_ett.h: what the files of the Python module ett._ett share: the error that becomes ett.Error, the
// event record of the numpy arrays, and the binding functions of each file.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "analysis/capture.h"
#include "common/status.h"
#include "db/database.h"

namespace ett::python {

namespace py = pybind11;

// A host-library error on its way to Python, where it is ett.Error with the message `ett` prints after
// "ett: " and the exit status `ett` would end with (`exit_code`).
class Failure : public std::runtime_error {
 public:
  Failure(int exit_code, const std::string& message) : std::runtime_error(message), m_exit_code(exit_code) {}
  explicit Failure(const host::HostError& error);
  int exit_code() const { return m_exit_code; }

 private:
  int m_exit_code;
};

// The value of an Expected, or its error thrown as a Failure.
template <typename T>
T take(host::Expected<T>&& result) {
  if (!result) throw Failure(result.error());
  return std::move(*result);
}
inline void check(const host::Status& status) {
  if (!status) throw Failure(status.error());
}

// One element of a capture's events array (numpy structured dtype ett.EVENT_DTYPE), 32 bytes.
struct EventRecord {
  uint64_t seq;
  uint64_t tsc;
  double time_ns;  // ns from the capture's start, from the TSC at the capture's rate (negative: pretrigger)
  uint32_t aux;
  uint8_t probe;
  uint8_t code;
  uint8_t lines;  // D7..D0 after the change
  uint8_t flags;
};
static_assert(sizeof(EventRecord) == 32);

// A numpy array of `count` EventRecords, uninitialised, and where its data is.
py::array_t<EventRecord> event_array(size_t count);

// A trace of the database (open_trace_head: its traces row and stalls; the events are read when asked for).
class StoredTrace {
 public:
  StoredTrace(const std::string& url, std::optional<int64_t> trace);
  py::dict info() const;           // CaptureInfo: what the analyses know of the trace
  py::dict header() const;         // its traces row, every column
  py::list stalls() const;         // [{start_ns, length_ns}], in time order
  py::dict labels() const;         // {probe: label or None}
  py::object pps_mapping() const;  // the stored UTC mapping (`ett analyze pps`), or None
  py::array_t<EventRecord> events() const;
  host::Database& db() const { return *m_db; }
  const host::Capture& capture() const { return m_capture; }

 private:
  std::unique_ptr<host::Database> m_db;
  host::Capture m_capture;
};

void bind_captures(py::module_& m);  // captures.cpp: trace images, stored traces, their events
void bind_analyses(py::module_& m);  // analyses.cpp: what `ett analyze` computes, as its JSON text

}  // namespace ett::python
