// ettprobe.hpp: the C++ face of libettprobe: an owning ett::Probe whose errors are exceptions.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "ettprobe.h"

namespace ett {

class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Probe {
 public:
  // Throws ProbeError with ett_probe_last_error()'s message.
  explicit Probe(const std::string& url) : m_probe(ett_probe_open(url.c_str())) {
    if (!m_probe) throw ProbeError(ett_probe_last_error());
  }
  Probe(Probe&& other) noexcept : m_probe(std::exchange(other.m_probe, nullptr)) {}
  Probe& operator=(Probe&& other) noexcept {
    if (this != &other) {
      ett_probe_close(m_probe);
      m_probe = std::exchange(other.m_probe, nullptr);
    }
    return *this;
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;
  ~Probe() { ett_probe_close(m_probe); }

  void signal(int probe, int code) {
    if (ett_probe_signal(m_probe, probe, code) != 0) throw ProbeError(ett_probe_last_error());
  }
  int count() const { return ett_probe_count(m_probe); }
  int max_code() const { return ett_probe_max_code(m_probe); }
  unsigned lines() const { return ett_probe_lines(m_probe); }
  ett_probe* get() const { return m_probe; }

 private:
  ett_probe* m_probe;
};

}  // namespace ett
