#include "harness/base/did_you_mean.h"

#include <algorithm>

namespace fc::harness {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  // d[i][j]: the distance between a's first i characters and b's first j.
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::vector<std::string> closest_names(const std::string& typed,
                                       const std::vector<std::string>& candidates) {
  std::vector<std::string> best;
  if (typed.size() < 2) return best;  // one character is one edit from every other
  std::size_t best_distance = 0;
  for (const auto& name : candidates) {
    const std::size_t d = edit_distance(typed, name);
    const std::size_t allowed = std::max(typed.size(), name.size()) <= 5 ? 1 : 2;
    const bool prefix = typed.size() >= 2 && name.compare(0, typed.size(), typed) == 0;
    if (d > allowed && !prefix) continue;
    if (best.empty() || d < best_distance) {
      best = {name};
      best_distance = d;
    } else if (d == best_distance && std::find(best.begin(), best.end(), name) == best.end()) {
      best.push_back(name);
    }
  }
  return best;
}

std::string did_you_mean(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string s = "did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s + "?";
}

}  // namespace fc::harness
