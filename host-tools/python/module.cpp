// module.cpp: the Python module ett._ett (the package ett wraps it, ett/__init__.py): its error class and
// the bindings of captures.cpp and analyses.cpp.
#include "common/exit_codes.h"
#include "common/interrupt.h"
#include "python_ett.h"

namespace ett::python {

namespace {

// The exit status `ett` ends with for an error of this kind (cli/cli_util.cpp's report()).
int exit_code_of(host::ErrorKind kind) {
  using host::ErrorKind;
  switch (kind) {
    case ErrorKind::NotTraceDisk:
      return host::kExitNotTraceDisk;
    case ErrorKind::UnknownVersion:
      return host::kExitUnknownVersion;
    case ErrorKind::BadCrc:
      return host::kExitBadCrc;
    case ErrorKind::Truncated:
      return host::kExitTruncated;
    case ErrorKind::EmptyDisk:
      return host::kExitEmptyDisk;
    case ErrorKind::NoSuchSession:
      return host::kExitNoSuchSession;
    case ErrorKind::KernelFailure:
      return host::kExitKernelFailure;
    case ErrorKind::Timeout:
      return host::kExitTimeout;
    case ErrorKind::QemuFailure:
      return host::kExitQemuFailure;
    case ErrorKind::Interrupted:
      return host::interrupt_exit_status();
    default:
      return host::kExitUsage;
  }
}

}  // namespace

Failure::Failure(const host::HostError& error) : Failure(exit_code_of(error.kind), error.message) {}

}  // namespace ett::python

PYBIND11_MODULE(_ett, m) {
  namespace py = pybind11;
  using ett::python::Failure;
  m.doc() = "ETT's host libraries: trace images, the trace database and the analyses (use the package ett)";
  // ett.Error(message, exit_code): the message `ett` prints after "ett: ", the status it exits with.
  static py::exception<Failure> error(m, "Error");
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const Failure& failure) {
      py::object instance = py::reinterpret_borrow<py::object>(error.ptr())(py::str(failure.what()));
      instance.attr("exit_code") = failure.exit_code();
      PyErr_SetObject(error.ptr(), instance.ptr());
    }
  });
  ett::python::bind_captures(m);
  ett::python::bind_analyses(m);
}
