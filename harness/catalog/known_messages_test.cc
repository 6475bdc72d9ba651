// What the catalog's cases know of a user's failure (harness/catalog/known_messages.h): the case
// whose messages a failure says, and the case whose failure shows as a stuck wait or an
// environment risk, read from each case's own entry. A made-up catalog, then the signs compiled
// into forkcheck; no process.
#include <string>

#include <gtest/gtest.h>

#include "harness/catalog/case_signs.h"
#include "harness/catalog/known_messages.h"

namespace fc::harness {
namespace {

using nlohmann::json;

json catalog() {
  return json::array(
      {{{"id", "first"},
        {"title", "First"},
        {"explains", {{{"pattern", "Boom"}, {"fix", "fix one"}}}},
        {"shows_as", {"stuck:lock", "risk:fork-with-openmp"}}},
       {{"id", "second"},
        {"title", "Second"},
        {"explains", {{{"pattern", "Bang"}, {"fix", "fix two"}}, {{"pattern", "Boom"}}}},
        {"shows_as", {"stuck:lock", "stuck:pause"}}},
       // Entries a program might list wrongly typed: skipped, never thrown on.
       {{"id", "odd"}, {"shows_as", "stuck:locks"}, {"explains", "Boom"}},
       {{"id", 7}, {"shows_as", {"stuck:locks"}}},
       "not a case"});
}

TEST(KnownMessages, EachCaseWhoseMessageWasSaidOnceInCatalogOrder) {
  const json found = explain_messages(catalog(), "x Bang y Boom z");
  ASSERT_EQ(found.size(), 2u) << found;
  EXPECT_EQ(found[0]["case"], "first");
  EXPECT_EQ(found[0]["fix"], "fix one");
  EXPECT_EQ(found[1]["case"], "second");
  EXPECT_EQ(found[1]["pattern"], "Bang") << "its first pattern that matched";
  EXPECT_TRUE(explain_messages(catalog(), "nothing known").empty());
  EXPECT_TRUE(explain_messages(catalog(), "").empty());
  EXPECT_TRUE(explain_messages(json::object(), "Boom").empty());
}

TEST(KnownMessages, TheCaseShowingASignIsTheFirstThatListsIt) {
  const struct {
    const char* sign;
    const char* expected;
  } table[] = {
      {"stuck:lock", "first"},    // both list it: the first in the catalog
      {"stuck:pause", "second"},  // only the second
      {"risk:fork-with-openmp", "first"},
      {"stuck:locks", ""},         // listed only by entries of the wrong type
      {"risk:dev-shm-small", ""},  // nobody
      {"", ""},
  };
  for (const auto& row : table)
    EXPECT_EQ(case_showing(catalog(), row.sign), row.expected) << row.sign;
  EXPECT_EQ(case_showing(json(), "stuck:lock"), "");
}

TEST(KnownMessages, ARiskACaseShowsIsNamedWithThatCaseOthersAreLeftAlone) {
  json risks = json::array({{{"id", "fork-with-openmp"}, {"note", "n"}, {"why", "w"}},
                            {{"id", "dev-shm-small"}, {"note", "n"}, {"why", "w"}},
                            {{"note", "no id"}},
                            "garbage"});
  name_risk_cases(risks, catalog());
  EXPECT_EQ(risks[0].value("case", ""), "first");
  EXPECT_FALSE(risks[1].contains("case"));
  EXPECT_FALSE(risks[2].contains("case"));
  EXPECT_EQ(risks[3], "garbage");
  json not_a_list = json::object();
  name_risk_cases(not_a_list, catalog());
  EXPECT_EQ(not_a_list, json::object());
}

// The signs compiled into forkcheck are the catalog's shape, and they name the cases of both
// repro programs, the torch program's among them, whichever were built (repros.case_signs_current
// checks them against the programs' own lists).
TEST(CaseSigns, CompiledInAndMatchedLikeTheCatalog) {
  const json& signs = case_signs();
  ASSERT_TRUE(signs.is_array());
  ASSERT_FALSE(signs.empty());
  for (const auto& c : signs) {
    EXPECT_TRUE(c["id"].is_string() && c["title"].is_string()) << c.dump();
    EXPECT_TRUE(c["explains"].is_array() && c["shows_as"].is_array()) << c.dump();
  }
  const json found =
      explain_messages(signs,
                       "RuntimeError: Unable to handle autograd's threading in combination with\n"
                       "    fork-based multiprocessing");
  ASSERT_EQ(found.size(), 1u) << found.dump();
  EXPECT_EQ(found[0]["case"], "autograd-after-fork");
  EXPECT_FALSE(found[0]["fix"].get<std::string>().empty());
  EXPECT_EQ(case_showing(signs, "stuck:lock"), "lock-held-at-fork");
  EXPECT_EQ(case_showing(signs, "risk:fork-with-openmp"), "torch-omp-pool-hang");
}

}  // namespace
}  // namespace fc::harness
