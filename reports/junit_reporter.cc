// junit.xml for CI: one <testsuite> per case, one <testcase> per variant, passing exactly when the
// variant's outcome is the one it expected. A mismatch is a <failure> (a fix that broke, or a
// hazard that did not show as documented); a harness failure is an <error>; an expected skip, and
// a variant the run did not see to its end (forkcheck was interrupted: not run, or not finished),
// is <skipped>, never a failure. The message goes in the `message` attribute and
// in the body too, since GitLab shows only the body, with the workers that failed, what the
// watchdog saw of the process tree (blocked, or still working at the deadline), a protocol error's
// line, and the tree's stacks; those facts and stacks are also in <system-out>, after the output,
// where the testcase passed (a hazard that hung as documented). Written with pugixml, which
// escapes; text is first stripped of what XML 1.0 cannot hold at all (most control characters,
// invalid UTF-8). `forkcheck watch` adds a testcase per hazardous fork: a <failure> each, unless
// allowed. `exec` and `watch` add one per process of the program's tree that failed (killed by a
// signal, exited non-zero, its target raised): a <failure> each, even when the program exited 0.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <pugixml.hpp>

#include "reports/finding.h"
#include "reports/model/report_model_json.h"
#include "reports/python_view.h"
#include "reports/report_view.h"
#include "reports/reporter.h"
#include "reports/text.h"
#include "reports/watch_view.h"
#include "reports/watchdog_text.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

void attr(pugi::xml_node n, const char* name, const std::string& value) {
  n.append_attribute(name).set_value(xml_safe(value).c_str());
}

void text_child(pugi::xml_node parent, const char* name, const std::string& text) {
  parent.append_child(name).text().set(xml_safe(text).c_str());
}

std::string fixed3(double s) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(3);
  o << s;
  return o.str();
}

constexpr size_t kFramesPerThread = 24;
constexpr size_t kStacksCap = 64 * 1024;

// A tree's stacks as a CI log shows them: each thread, then its first frames. "" when none.
std::string stacks_text(const Variant& v) {
  if (v.stacks.empty()) return "";
  std::string text = stacks_title(v) + " (" + std::to_string(v.stacks.size()) + " threads" +
                     (v.stacks_method.empty() ? "" : ", by " + v.stacks_method) + "):\n";
  if (!v.stacks_note.empty()) text += v.stacks_note + "\n";
  if (!v.stacks_python_note.empty()) text += v.stacks_python_note + "\n";
  for (const Thread& t : v.stacks) {
    text += thread_line(t) + "\n";
    if (const std::string py = python_frames_text(t, kFramesPerThread); !py.empty())
      text += "Python:\n" + py + "native:\n";
    size_t i = 0;
    for (const auto& f : t.frames) {
      if (i == kFramesPerThread) {
        text += "  ...\n";
        break;
      }
      text += "  #" + std::to_string(i++) + " " + f + "\n";
    }
  }
  return cap_text(text, kStacksCap);
}

// What the watchdog saw and what the channel carried, one line each: "" when nothing.
std::string watchdog_text(const Variant& v) {
  std::string text;
  if (v.hang)  // a step that stalled; "hung" only if it was ended so
    text += std::string(v.outcome == "hang" ? "hung at " : "stalled at ") + v.hang->step +
            " (pid " + std::to_string(v.hang->pid) + ")\n";
  if (const std::string tree = tree_facts(v.watchdog, v.outcome); !tree.empty())
    text += "process tree: " + tree + "\n";
  if (v.protocol_error)
    text += "protocol error: " + v.protocol_error->why +
            "\n  line: " + cap_text(v.protocol_error->line, kProtocolLineCap) + "\n";
  return text;
}

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
};

// What a reader of the CI log needs in a failure's body: what differed, the message, the fix the
// run showed (a user's program), why the expectation was what it was.
std::string failure_body(const Case& c, const Variant& v) {
  std::string body = mismatch_meaning(v);
  if (!v.message.empty()) body += "\n" + v.message;
  if (!v.note.empty()) body += "\n" + v.note;
  if (v.role == "subject")
    if (const std::string fix = subject_fix(c, v); !fix.empty()) body += "\nfix: " + fix;
  // A user's program was expected nothing but to work: no expectation to explain.
  if (!v.expected_why.empty() && v.role != "subject")
    body += "\nexpected " + v.expected + " because: " + v.expected_why;
  if (const auto failed = failed_workers(v); !failed.empty()) {
    body += "\nworkers that failed:";
    for (const auto& line : failed) body += "\n  " + line;
  }
  if (const std::string watchdog = watchdog_text(v); !watchdog.empty()) body += "\n" + watchdog;
  if (const std::string stacks = stacks_text(v); !stacks.empty()) body += "\n" + stacks;
  return body;
}

// What the user's command is called in CI's history, the same from run to run: the script a
// Python interpreter runs ("train.py", "-m pytest", "-c"), else the program's own name.
std::string command_label(const Case& c) {
  const std::vector<std::string>& words = c.command;
  if (words.empty()) return c.id.empty() ? "?" : c.id;
  auto base = [](const std::string& p) { return p.substr(p.find_last_of('/') + 1); };
  std::string program = base(words[0]);  // not const: returned, it is moved
  if (program.rfind("python", 0) != 0) return program;
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i] == "-m" && i + 1 < words.size()) return "-m " + words[i + 1];
    if (words[i] == "-c") return "-c";
    if (words[i].empty() || words[i][0] != '-') return base(words[i]);
  }
  return program;
}

// A subject's testcases (exec, watch, matrix): "exec" / "train.py"; a matrix's methods
// "matrix.train.py" / "spawn". Catalog variants: the case / the variant.
std::pair<std::string, std::string> testcase_names(const Case& c, const Variant& v) {
  if (v.role != "subject") return {or_else(c.id, "?"), or_else(v.name, "?")};
  if (c.id == "matrix") return {"matrix." + command_label(c), or_else(v.name, "?")};
  return {or_else(c.id, "?"), command_label(c)};
}

// The classname of the testcases a variant adds (its forks, its failed processes).
std::string owner_name(const Case& c, const Variant& v) {
  const auto [classname, name] = testcase_names(c, v);
  return classname + "." + name;
}

void testcase(pugi::xml_node suite, const Case& c, const Variant& v, Counts& n) {
  auto tc = suite.append_child("testcase");
  const auto [classname, name] = testcase_names(c, v);
  attr(tc, "classname", classname);
  attr(tc, "name", name);
  attr(tc, "time", fixed3(v.duration_s));
  ++n.tests;
  n.time += v.duration_s;
  const std::string outcome = or_else(v.outcome, "skip");
  if (unfinished(v)) {
    // Not run to its end (forkcheck was interrupted): neither a pass nor a failure.
    ++n.skipped;
    attr(tc.append_child("skipped"), "message", v.message.empty() ? outcome_shown(v) : v.message);
  } else if (matched(v)) {
    if (outcome == "skip") {
      ++n.skipped;
      attr(tc.append_child("skipped"), "message", v.message.empty() ? v.expected_why : v.message);
    }
  } else {
    const bool error = v.harness_error;
    auto f = tc.append_child(error ? "error" : "failure");
    ++(error ? n.errors : n.failures);
    // Exited 0 while processes of it failed: the message says so whole, once.
    attr(f, "message",
         (exited_zero_but_processes_failed(v) ? std::string("the program did not end well")
                                              : mismatch_meaning(v)) +
             (v.message.empty() ? "" : ": " + v.message));
    attr(f, "type", outcome);
    f.text().set(xml_safe(failure_body(c, v)).c_str());
  }
  std::string out = v.stdout_text;
  // A failure's body has the watchdog's facts and the stacks already. A pass that ended by itself
  // after time was called says so in its message alone: shown.
  const bool by_itself = v.watchdog.exited_by_itself;
  if (const std::string facts =
          matched(v) || unfinished(v)
              ? (matched(v) && by_itself && !v.message.empty() ? "message: " + v.message + "\n"
                                                               : "") +
                    watchdog_text(v) + stacks_text(v)
              : "";
      !facts.empty())
    out += (out.empty() || out.back() == '\n' ? "" : "\n") + facts;
  if (!out.empty()) text_child(tc, "system-out", out);
  if (!v.stderr_text.empty()) text_child(tc, "system-err", v.stderr_text);
}

// `forkcheck watch`: a testcase per hazardous fork listed, beside the program's own. One that
// fails the watch is a <failure> naming the hazard and the fork, its body the full advice with
// the fix; one of a kind allowed (--allow) passes, the same text in <system-out>. Forks that fail
// but are not listed (report.json keeps the first 500) are one more <failure>.
void fork_testcases(pugi::xml_node suite, const Case& c, const Variant& v, Counts& n) {
  for (const ForkEvent* f : hazardous_forks(v)) {
    auto tc = suite.append_child("testcase");
    // By order, not by pid: the same fork keeps its name in CI's history (the pids are in the
    // message).
    attr(tc, "classname", owner_name(c, v));
    attr(tc, "name", "fork-" + std::to_string(f->index));
    attr(tc, "time", fixed3(0));
    ++n.tests;
    const std::string message = fork_failure_message(*f);
    const std::string body = message + "\n" + fork_advice_text(*f);
    if (f->allowed) {
      text_child(tc, "system-out", body);
      continue;
    }
    auto failure = tc.append_child("failure");
    ++n.failures;
    attr(failure, "message", message);
    attr(failure, "type", "hazardous-fork");
    failure.text().set(xml_safe(body).c_str());
  }
  if (const size_t more = unlisted_failing(v); more > 0) {
    auto tc = suite.append_child("testcase");
    attr(tc, "classname", owner_name(c, v));
    attr(tc, "name", "hazardous forks not listed");
    attr(tc, "time", fixed3(0));
    auto failure = tc.append_child("failure");
    ++n.tests, ++n.failures;
    const std::string message =
        std::to_string(more) +
        " more hazardous forks, not listed in report.json (it lists the first 500)";
    attr(failure, "message", message);
    attr(failure, "type", "hazardous-fork");
    failure.text().set(xml_safe(message).c_str());
  }
}

// `exec`/`watch`: a testcase per process of the tree that failed, a <failure> each: the work
// it was given was not done, whatever the program's own exit status says.
void descendant_testcases(pugi::xml_node suite, const Case& c, const Variant& v, Counts& n) {
  if (v.role != "subject") return;
  size_t index = 0;
  for (const auto& d : failed_descendants(v)) {
    auto tc = suite.append_child("testcase");
    attr(tc, "classname", owner_name(c, v));
    // By order and what it ran, not by pid (the pid is in the message).
    attr(tc, "name",
         "failed-process-" + std::to_string(++index) + (d.what.empty() ? "" : " " + d.what));
    attr(tc, "time", fixed3(0));
    ++n.tests;
    auto failure = tc.append_child("failure");
    ++n.failures;
    const std::string message = descendant_text(d);
    attr(failure, "message", message);
    attr(failure, "type", "process-failed");
    failure.text().set(xml_safe(message).c_str());
  }
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
  std::string render(const Report& report) const override {
    pugi::xml_document doc;
    auto decl = doc.append_child(pugi::node_declaration);
    decl.append_attribute("version") = "1.0";
    decl.append_attribute("encoding") = "UTF-8";
    auto root = doc.append_child("testsuites");
    attr(root, "name", "forkcheck");
    Counts total;
    const Run& run = report.run;
    for (const Case& c : report.cases) {
      auto suite = root.append_child("testsuite");
      attr(suite, "name", or_else(c.id, "?"));
      if (!run.started_at.empty()) attr(suite, "timestamp", run.started_at);
      auto props = suite.append_child("properties");
      for (const auto& [key, value] :
           {std::pair<const char*, const std::string&>{"verdict", c.verdict},
            {"verdict_reason", c.verdict_reason},
            {"title", c.title}}) {
        auto p = props.append_child("property");
        attr(p, "name", key);
        attr(p, "value", value);
      }
      Counts n;
      for (const Variant& v : c.variants) {
        testcase(suite, c, v, n);
        fork_testcases(suite, c, v, n);
        descendant_testcases(suite, c, v, n);
      }
      set_counts(suite, n);
      total.tests += n.tests, total.failures += n.failures, total.errors += n.errors;
      total.skipped += n.skipped, total.time += n.time;
    }
    // A repro program that could not list its cases: an <error> of its own, so CI shows that cases
    // are missing rather than passing on the ones that were there.
    if (const auto& errors = run.catalog_errors; !errors.empty()) {
      auto suite = root.append_child("testsuite");
      attr(suite, "name", "forkcheck");
      if (!run.started_at.empty()) attr(suite, "timestamp", run.started_at);
      Counts n;
      for (const auto& e : errors) {
        auto tc = suite.append_child("testcase");
        attr(tc, "classname", "forkcheck");
        attr(tc, "name", "catalog: " + e.substr(0, e.find(" --list")));
        attr(tc, "time", fixed3(0));
        auto err = tc.append_child("error");
        attr(err, "message", std::string(kCatalogErrorsHeadline) + ": " + e);
        attr(err, "type", "catalog");
        err.text().set(xml_safe(e).c_str());
        ++n.tests, ++n.errors;
      }
      set_counts(suite, n);
      total.tests += n.tests, total.errors += n.errors;
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
