// Colour for forkcheck's own verdict words on a terminal ("as expected" green, "FAILED" and
// "REGRESSION" red, "differs" yellow): only when stdout is a terminal and NO_COLOR
// (https://no-color.org) is unset or empty, and TERM is not "dumb". Never in a file: the reports
// are written from the run log, never from what is printed, and paint() adds nothing when stdout
// is a pipe or a file.
#pragma once

#include <cstddef>
#include <string>

namespace fc::harness {

enum class Style {
  kGood,  // green: as expected, ok, reproduced
  kBad,   // red: FAILED, REGRESSION, a finding
  kWarn,  // yellow: differs, not-reproduced
};

// Whether forkcheck's stdout gets colour: decided once, on the first call.
bool colour_enabled();

// `text` between the style's escape sequence and a reset when colour_enabled(), else `text` as it
// is. Paint text already escaped for the terminal (reports::terminal_safe would show the escape
// sequence as text), and count columns on the plain text: the sequences take none.
std::string paint(Style style, const std::string& text);

// The style of a verdict word forkcheck prints (a variant's "as expected", "REGRESSION", "FAILED",
// "differs"; a case's "ok", "reproduced", "failed", "regression", "not-reproduced"); false for a
// word that gets no colour ("skipped").
bool verdict_style(const std::string& word, Style& style);

// The verdict word (escaped for the terminal already), painted by verdict_style(), then spaces to
// `width` columns: the padding `%-15s` would give, counted on the word alone.
std::string paint_verdict(const std::string& word, std::size_t width = 0);

}  // namespace fc::harness
