// terminal_text.h: text from a capture or a user (labels, names, command lines) made safe for a terminal:
// control characters are shown as escapes instead of being sent, so that a label holding ESC or an OSC
// sequence cannot move the cursor, rewrite the window title or hide output.
#pragma once

#include <string>
#include <string_view>

namespace ett::host {

// \t \n \r as written; any other C0 control, DEL and the C1 controls (UTF-8 C2 80..C2 9F) as \xHH or \u00HH;
// everything else (printable ASCII, UTF-8) unchanged.
std::string escape_control_characters(std::string_view text);
// Whether escape_control_characters would change `text`.
bool has_control_characters(std::string_view text);

}  // namespace ett::host
