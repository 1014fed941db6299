// `tracedoc view`'s report: ONE self-contained HTML file (no network, no external scripts or fonts)
// holding the viewer (report/view_assets: HTML, CSS, JavaScript, embedded at build time) and the
// data of a ViewModel.
//
// The data is one JSON document in a <script type="application/json"> element. Everything from
// the trace (kernel names, thread names, file names) is untrusted: the JSON escapes '<', '>' and
// '&' as \u003c, \u003e, \u0026, so no text can close the element, and the viewer only ever puts
// names into the page as text (textContent, canvas fillText), never as markup. Event columns are
// little-endian typed arrays in base64 (ns times as float64, exact below 2^53 ns = 104 days from
// the timeline's start): a 500,000-event page is about 25 MB and parses in a fraction of a second.
#pragma once

#include <string>

#include "model/trace.h"
#include "view/view_model.h"

namespace tracedoc {

std::string render_view_html(const Trace& trace, const view::ViewModel& vm);

// The data document alone (what the page embeds), for tests and tools.
std::string render_view_data(const Trace& trace, const view::ViewModel& vm);

// Base64 (RFC 4648, with padding) of raw bytes.
std::string base64_encode(const void* data, size_t bytes);

}  // namespace tracedoc
