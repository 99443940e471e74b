// html_assets.h: the report page's script and style and the vendored uPlot charting library (vendor/uplot,
// MIT licence), compiled into `ett` by html_embed.cmake so that every report is one offline file.
#pragma once

namespace ett::host {

extern const char kUplotJs[];       // vendor/uplot/uPlot.iife.min.js
extern const char kUplotCss[];      // vendor/uplot/uPlot.min.css
extern const char kUplotVersion[];  // vendor/uplot/VERSION, e.g. "1.6.32"
extern const char kReportJs[];      // html.js: builds the charts from the page's data
extern const char kReportCss[];     // html.css

}  // namespace ett::host
