// status.cpp: helpers for host error messages.
#include "common/status.h"

#include <cstring>

namespace ett::host {

std::string errno_message(const std::string& what, int error_number) {
  return what + ": " + std::strerror(error_number);
}

}  // namespace ett::host
