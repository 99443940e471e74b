// result.h: errors as values. Result<T, E> holds a T or an E; the kernel and the host tools share it.
// Freestanding (no standard library): the kernel builds with -nostdinc++.
#pragma once

#if __STDC_HOSTED__
#include <new>
#else
#include "runtime/new.h"  // the kernel's own placement new
#endif

namespace ett {

namespace detail {
template <typename T>
struct RemoveRef {
  using Type = T;
};
template <typename T>
struct RemoveRef<T&> {
  using Type = T;
};
template <typename T>
struct RemoveRef<T&&> {
  using Type = T;
};
}  // namespace detail

template <typename T>
constexpr typename detail::RemoveRef<T>::Type&& move(T&& value) {
  return static_cast<typename detail::RemoveRef<T>::Type&&>(value);
}

// The kernel's error: a static message, shown on screen and serial as it is.
struct Error {
  const char* message;
};

// Wraps an error so that `return Failure{...}` converts to any Result with that error type.
template <typename E>
struct Failure {
  E error;
};
template <typename E>
Failure(E) -> Failure<E>;

inline Failure<Error> fail(const char* message) {
  return Failure<Error>{Error{message}};
}

template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(const T& value) : m_ok(true) { new (&m_value) T(value); }
  Result(T&& value) : m_ok(true) { new (&m_value) T(ett::move(value)); }
  template <typename F>
  Result(Failure<F> failure) : m_ok(false) {
    new (&m_error) E(ett::move(failure.error));
  }
  Result(const Result& other) : m_ok(other.m_ok) {
    if (m_ok)
      new (&m_value) T(other.m_value);
    else
      new (&m_error) E(other.m_error);
  }
  Result(Result&& other) : m_ok(other.m_ok) {
    if (m_ok)
      new (&m_value) T(ett::move(other.m_value));
    else
      new (&m_error) E(ett::move(other.m_error));
  }
  Result& operator=(const Result&) = delete;
  ~Result() {
    if (m_ok)
      m_value.~T();
    else
      m_error.~E();
  }

  bool ok() const { return m_ok; }
  explicit operator bool() const { return m_ok; }
  T& value() { return m_value; }
  const T& value() const { return m_value; }
  T* operator->() { return &m_value; }
  const T* operator->() const { return &m_value; }
  T& operator*() { return m_value; }
  const T& operator*() const { return m_value; }
  const E& error() const { return m_error; }
  Failure<E> failure() const { return Failure<E>{m_error}; }

 private:
  bool m_ok;
  union {
    T m_value;
    E m_error;
  };
};

template <typename E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() : m_ok(true) {}
  template <typename F>
  Result(Failure<F> failure) : m_ok(false), m_error(ett::move(failure.error)) {}

  bool ok() const { return m_ok; }
  explicit operator bool() const { return m_ok; }
  const E& error() const { return m_error; }
  Failure<E> failure() const { return Failure<E>{m_error}; }

 private:
  bool m_ok;
  E m_error{};
};

using Status = Result<void, Error>;

}  // namespace ett

// Returns the error of `expr` from the enclosing function when it failed.
#define ETT_TRY(expr)                                       \
  do {                                                      \
    auto ett_try_result_ = (expr);                          \
    if (!ett_try_result_) return ett_try_result_.failure(); \
  } while (0)

// Declares `decl` from the value of `expr`, or returns its error.
#define ETT_CONCAT_INNER_(a, b) a##b
#define ETT_CONCAT_(a, b) ETT_CONCAT_INNER_(a, b)
#define ETT_TRY_ASSIGN(decl, expr) ETT_TRY_ASSIGN_IMPL_(ETT_CONCAT_(ett_try_, __LINE__), decl, expr)
#define ETT_TRY_ASSIGN_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                          \
  if (!tmp) return tmp.failure();             \
  decl = ett::move(tmp.value())
