// junit.xml for CI: one <testsuite> per case, one <testcase> per variant, passing exactly when the
// variant's outcome is the one it expected. A mismatch is a <failure> (a fix that broke, or a
// hazard that did not show as documented); a harness failure or a variant the run never reached
// is an <error>; an expected skip is <skipped>. The message goes in the `message` attribute and
// in the body too, since GitLab shows only the body. Written with pugixml, which escapes; text is
// first stripped of what XML 1.0 cannot hold at all (most control characters, invalid UTF-8).
#include <sstream>

#include <pugixml.hpp>

#include "reports/report_view.h"
#include "reports/reporter.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

void attr(pugi::xml_node n, const char* name, const std::string& value) {
  n.append_attribute(name).set_value(xml_safe(value).c_str());
}

void text_child(pugi::xml_node parent, const char* name, const std::string& text) {
  parent.append_child(name).text().set(xml_safe(text).c_str());
}

double seconds(const json& v) {
  return v.contains("duration_s") && v["duration_s"].is_number() ? v["duration_s"].get<double>() : 0.0;
}

std::string fixed3(double s) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(3);
  o << s;
  return o.str();
}

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
};

// What a reader of the CI log needs in a failure's body: what differed, the message, why the
// expectation was what it was.
std::string failure_body(const json& v) {
  std::string body = mismatch_meaning(v);
  if (!field(v, "message").empty()) body += "\n" + field(v, "message");
  if (!field(v, "note").empty()) body += "\n" + field(v, "note");
  if (!field(v, "expected_why").empty()) body += "\nexpected " + field(v, "expected") + " because: " + field(v, "expected_why");
  return body;
}

void testcase(pugi::xml_node suite, const json& c, const json& v, Counts& n) {
  auto tc = suite.append_child("testcase");
  attr(tc, "classname", field(c, "id", "?"));
  attr(tc, "name", field(v, "name", "?"));
  attr(tc, "time", fixed3(seconds(v)));
  ++n.tests;
  n.time += seconds(v);
  const std::string outcome = field(v, "outcome", "skip");
  if (matched(v)) {
    if (outcome == "skip") {
      ++n.skipped;
      attr(tc.append_child("skipped"), "message", field(v, "message", field(v, "expected_why")));
    }
  } else {
    const bool error = v.value("harness_error", false) || v.value("not_run", false) || v.value("interrupted", false);
    auto f = tc.append_child(error ? "error" : "failure");
    ++(error ? n.errors : n.failures);
    attr(f, "message", mismatch_meaning(v) + (field(v, "message").empty() ? "" : ": " + field(v, "message")));
    attr(f, "type", outcome);
    f.text().set(xml_safe(failure_body(v)).c_str());
  }
  if (!field(v, "stdout").empty()) text_child(tc, "system-out", field(v, "stdout"));
  if (!field(v, "stderr").empty()) text_child(tc, "system-err", field(v, "stderr"));
}

void set_counts(pugi::xml_node n, const Counts& c) {
  attr(n, "tests", std::to_string(c.tests));
  attr(n, "failures", std::to_string(c.failures));
  attr(n, "errors", std::to_string(c.errors));
  attr(n, "skipped", std::to_string(c.skipped));
  attr(n, "time", fixed3(c.time));
}

class JunitReporter final : public Reporter {
 public:
  std::string file_name() const override { return "junit.xml"; }
  std::string render(const json& report) const override {
    pugi::xml_document doc;
    auto decl = doc.append_child(pugi::node_declaration);
    decl.append_attribute("version") = "1.0";
    decl.append_attribute("encoding") = "UTF-8";
    auto root = doc.append_child("testsuites");
    attr(root, "name", "forkcheck");
    Counts total;
    const json run = report.is_object() ? report.value("run", json::object()) : json::object();
    for (const auto& c : list(report, "cases")) {
      auto suite = root.append_child("testsuite");
      attr(suite, "name", field(c, "id", "?"));
      if (!field(run, "started_at").empty()) attr(suite, "timestamp", field(run, "started_at"));
      auto props = suite.append_child("properties");
      for (const char* key : {"verdict", "verdict_reason", "title"}) {
        auto p = props.append_child("property");
        attr(p, "name", key);
        attr(p, "value", field(c, key));
      }
      Counts n;
      for (const auto& v : list(c, "variants")) testcase(suite, c, v, n);
      set_counts(suite, n);
      total.tests += n.tests, total.failures += n.failures, total.errors += n.errors;
      total.skipped += n.skipped, total.time += n.time;
    }
    set_counts(root, total);
    std::ostringstream out;
    doc.save(out, "  ", pugi::format_indent, pugi::encoding_utf8);
    return out.str();
  }
};

}  // namespace

std::unique_ptr<Reporter> make_junit_reporter() { return std::make_unique<JunitReporter>(); }

}  // namespace fc::reports
