// man_pages.h: the manual pages of ett and of each verb (`ett man [VERB]`, `ett man --markdown [VERB]`), built
// from the CLI11 option definitions, the exit-status table and the examples beside them (man_pages.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ett::cli {

enum class PageFormat { Roff, Markdown };

// ett(1) when `verb` is null, else ett-VERB(1) (a verb's page covers its subverbs: ett-analyze(1) holds
// precision, durations, ...). The markdown carries no version, so that the checked-in reference
// (docs/reference/cli) changes only when the interface does.
std::string manual_page(const CLI::App& app, const CLI::App* verb, PageFormat format);

}  // namespace ett::cli
