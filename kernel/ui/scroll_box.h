// scroll_box.h: which lines of a long list a fixed-height box shows, moved by the navigation keys. Pure:
// the host tests drive it.
#pragma once

#include <stdint.h>

#include "ui/keys.h"

namespace ett::ui {

class ScrollBox {
 public:
  constexpr ScrollBox(uint64_t line_count, uint32_t height) : m_count(line_count), m_height(height) {}

  uint64_t top() const { return m_top; }
  // One past the last line shown.
  uint64_t bottom() const { return m_top + m_height < m_count ? m_top + m_height : m_count; }
  uint64_t line_count() const { return m_count; }

  // Returns whether the view moved.
  bool apply(Key key) {
    const uint64_t before = m_top;
    switch (key) {
      case Key::Up:
        m_top = m_top > 0 ? m_top - 1 : 0;
        break;
      case Key::Down:
        set_top(m_top + 1);
        break;
      case Key::PageUp:
        m_top = m_top > m_height ? m_top - m_height : 0;
        break;
      case Key::PageDown:
        set_top(m_top + m_height);
        break;
      case Key::Home:
        m_top = 0;
        break;
      case Key::End:
        m_top = last_top();
        break;
      default:
        break;
    }
    return m_top != before;
  }

 private:
  // The top that shows the last line at the bottom of the box (0 when everything fits).
  uint64_t last_top() const { return m_count > m_height ? m_count - m_height : 0; }
  void set_top(uint64_t top) { m_top = top < last_top() ? top : last_top(); }

  uint64_t m_count;
  uint32_t m_height;
  uint64_t m_top = 0;
};

}  // namespace ett::ui
