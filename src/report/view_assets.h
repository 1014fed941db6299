// The viewer's files, embedded at build time (cmake/embed_assets.cmake) from src/report/view_assets.
#pragma once

namespace tracedoc::view_assets {

extern const char* const viewer_html;  // the page, with placeholders for the rest
extern const char* const viewer_css;
extern const char* const viewer_js;

}  // namespace tracedoc::view_assets
