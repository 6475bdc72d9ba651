// "Did you mean": the names closest to a misspelt one (a command, an option), by edit distance.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fc::harness {

// The optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring characters cost 1 each ("exce" is 1 from "exec", "al" 1 from "all").
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidates close enough to `typed` to be what was meant, all those at the least distance,
// in the order given: within 1 edit of a name of up to 5 characters, 2 of a longer one, or a name
// that starts with `typed`. Empty when none is close, or when `typed` has fewer than 2 characters.
std::vector<std::string> closest_names(const std::string& typed,
                                       const std::vector<std::string>& candidates);

// "did you mean exec?", "did you mean --only or --out?"; "" for no names.
std::string did_you_mean(const std::vector<std::string>& names);

}  // namespace fc::harness
