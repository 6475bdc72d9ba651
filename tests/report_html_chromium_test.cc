// A real run's report.html (FC_REAL_REPORT_DIR, from the ctest fixture reports.real_run) opened
// in headless Chromium, as a person would: the page must show the matrix and the tiny NN's loss
// curves (the rendered DOM), look like a page (a screenshot that is not blank), fetch nothing
// (Chromium's own net log: no request initiated by the page), and read from a phone to a wide
// screen: at 360 and 1280 px wide no horizontal page scroll, and the key finding on the first
// screen.
#include <png.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"
#include "read_text.h"

namespace {

namespace fs = std::filesystem;
using fc::test_text::occurrences;
using nlohmann::json;

const fs::path kHtml = fs::path(FC_REAL_REPORT_DIR) / "report.html";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Chromium : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("forkcheck-chromium-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override {
    const std::string chromium = FC_CHROMIUM;
    if (chromium.empty() || chromium.find("NOTFOUND") != std::string::npos || !fs::exists(chromium))
      GTEST_SKIP() << "chromium is not installed (ci/install-deps-debian.sh installs it)";
    ASSERT_TRUE(fs::exists(kHtml)) << kHtml;
  }

  // Runs headless Chromium on report.html with `extra` flags; a fresh profile each time, and
  // every host name unresolvable, so that nothing leaves this machine whatever is asked for.
  static fc::harness::ChildResult chromium(const std::string& name, std::vector<std::string> extra,
                                           const fs::path& page = kHtml) {
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_CHROMIUM,
                 "--headless",
                 "--no-sandbox",
                 "--disable-gpu",
                 "--disable-background-networking",
                 "--no-first-run",
                 "--disable-component-update",
                 "--disable-sync",
                 "--user-data-dir=" + (dir_ / ("profile-" + name)).string(),
                 "--host-resolver-rules=MAP * ~NOTFOUND",
                 "--window-size=1280,2000"};
    spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
    spec.argv.push_back("file://" + page.string());
    spec.timeout_s = 120;
    spec.channel = false;
    spec.capture_cap = 16u << 20;  // the DOM comes on stdout
    return fc::harness::supervise(spec);
  }

  // What a page at `width` CSS px shows. Headless Chromium's window is at least 500 px wide, so an
  // outer page holds report.html in an iframe `width` px wide and 800 px high, which is then the
  // report's viewport (its media queries, its innerWidth). The report has no script and wants none:
  // a copy of it gets one appended that measures the page once it is laid out and posts the numbers
  // to the outer page, whose DOM --dump-dom prints.
  static fs::path measuring_page(int width) {
    constexpr const char* kMeasure = R"js(<script>(function () {
    var d = document.documentElement, k = document.getElementById('key-finding');
    var m = document.getElementById('matrix'), r = k ? k.getBoundingClientRect() : null;
    // what sticks out of the page and is not inside a box that scrolls or clips it
    var wide = [];
    document.querySelectorAll('body *').forEach(function (e) {
      var b = e.getBoundingClientRect();
      if (b.right <= d.clientWidth + 0.5 || wide.length >= 10) return;
      for (var p = e.parentElement; p; p = p.parentElement)
        if (['auto', 'scroll', 'hidden'].indexOf(getComputedStyle(p).overflowX) >= 0) return;
      wide.push(e.tagName.toLowerCase() + '.' + e.className + ' right=' + Math.round(b.right));
    });
    // the matrix readable: how narrow its cells get, and whether a verdict sticks out of its cell
    var narrowest = 1e9, sticking = [];
    document.querySelectorAll('#matrix td .cell').forEach(function (c) {
      narrowest = Math.min(narrowest, c.getBoundingClientRect().width);
    });
    document.querySelectorAll('#matrix .verdict').forEach(function (v) {
      if (v.getBoundingClientRect().right > v.parentElement.getBoundingClientRect().right + 0.5)
        sticking.push(v.textContent);
    });
    parent.postMessage(JSON.stringify({
      scrollWidth: d.scrollWidth, clientWidth: d.clientWidth,
      innerWidth: window.innerWidth, innerHeight: window.innerHeight,
      finding: k ? {top: r.top, bottom: r.bottom, height: r.height,
                    shown: getComputedStyle(k).display !== 'none' && getComputedStyle(k).visibility === 'visible',
                    before_matrix: !!m && !!(k.compareDocumentPosition(m) & Node.DOCUMENT_POSITION_FOLLOWING)}
                 : null,
      narrowest_cell: narrowest, verdicts_sticking_out: sticking, wide: wide}), '*');
  })();</script>
  )js";
    const fs::path copy = dir_ / "report-measured.html";
    std::ofstream(copy, std::ios::binary) << slurp(kHtml) << kMeasure;
    const fs::path outer = dir_ / ("at-" + std::to_string(width) + ".html");
    std::ofstream(outer, std::ios::binary)
        << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body { margin: 0; } iframe { "
           "border: 0; display: block; }</style></head><body><iframe src=\"report-measured.html\" "
           "width=\""
        << width
        << "\" height=\"800\"></iframe><pre id=\"fc-measure\"></pre><script>addEventListener("
           "'message', function (e) { document.getElementById('fc-measure').textContent = e.data; "
           "});</script></body></html>\n";
    return outer;
  }

  static inline fs::path dir_;
};

TEST_F(Chromium, DomShowsTheMatrixAndTheLossCurves) {
  auto r = chromium("dom", {"--dump-dom"});
  ASSERT_TRUE(r.exit.exited_ok()) << r.exit.describe() << "\n" << r.err.last_lines(10);
  const std::string dom = r.out.text();
  ASSERT_NE(dom.find("<table class=\"matrix\">"), std::string::npos) << dom.substr(0, 2000);
  for (const char* id : {"gomp-fork-hang", "tiny-nn-spawn"})
    EXPECT_NE(dom.find("<tr class=\"case-row\" id=\"row-" + std::string(id) + "\""),
              std::string::npos)
        << id;
  EXPECT_NE(dom.find("hang \u2713 expected hang"), std::string::npos);

  const size_t featured = dom.find("id=\"featured\"");
  ASSERT_NE(featured, std::string::npos);
  const std::string section = dom.substr(featured, dom.find("</section>", featured) - featured);
  // spawn and forkserver: each a chart of the 5 workers' curves, each curve many points
  EXPECT_GE(occurrences(section, "<svg"), 1u);
  std::regex polyline(R"(<polyline[^>]*points="([^"]*)\")");
  size_t curves = 0;
  for (auto it = std::sregex_iterator(section.begin(), section.end(), polyline);
       it != std::sregex_iterator(); ++it)
    if (occurrences((*it)[1].str(), ",") >= 10) ++curves;
  EXPECT_GE(curves, 5u) << "five loss curves";
  EXPECT_EQ(curves % 5, 0u);
  EXPECT_NE(section.find("Unable to handle autograd"), std::string::npos)
      << "fork's error beside them";
  EXPECT_NE(dom.find("id=\"environment\""), std::string::npos);
}

TEST_F(Chromium, ScreenshotIsAPageNotABlank) {
  const fs::path png = dir_ / "report.png";
  auto r = chromium("shot", {"--screenshot=" + png.string()});
  ASSERT_TRUE(r.exit.exited_ok()) << r.exit.describe() << "\n" << r.err.last_lines(10);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 20u * 1024)
      << "a page with text, tables and charts compresses to more";

  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&image, png.c_str())) << image.message;
  image.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> pixels(PNG_IMAGE_SIZE(image));
  ASSERT_TRUE(png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) << image.message;
  EXPECT_EQ(image.width, 1280u);
  std::set<unsigned> colours;
  size_t not_white = 0;
  for (size_t i = 0; i + 2 < pixels.size(); i += 3) {
    colours.insert(static_cast<unsigned>(pixels[i] << 16 | pixels[i + 1] << 8 | pixels[i + 2]));
    if (pixels[i] < 240 || pixels[i + 1] < 240 || pixels[i + 2] < 240) ++not_white;
  }
  EXPECT_GT(colours.size(), 50u) << "text, the outcome colours, the chart lines";
  EXPECT_GT(not_white, pixels.size() / 3 / 50) << "more than 2% of the page is drawn on";
}

TEST_F(Chromium, ThePageFetchesNothing) {
  const fs::path log = dir_ / "net-log.json";
  auto r = chromium("net", {"--dump-dom", "--log-net-log=" + log.string()});
  ASSERT_TRUE(r.exit.exited_ok()) << r.exit.describe();
  const json netlog = json::parse(slurp(log), nullptr, false);
  ASSERT_FALSE(netlog.is_discarded()) << "Chromium's net log";
  const int start_job = netlog["constants"]["logEventTypes"].value("URL_REQUEST_START_JOB", -1);
  ASSERT_GE(start_job, 0);
  // Chromium's own background requests have no initiator ("not an origin"); the page's have its
  // origin (file: pages have the opaque origin "null").
  for (const auto& e : netlog["events"]) {
    if (e.value("type", -1) != start_job || !e.contains("params")) continue;
    const std::string initiator = e["params"].value("initiator", "not an origin");
    const std::string url = e["params"].value("url", "");
    if (initiator == "not an origin") continue;
    EXPECT_EQ(url.rfind("file:", 0), 0u) << "the page fetched " << url;
  }
  // and statically: nothing in the file that would load something
  const std::string html = slurp(kHtml);
  for (const char* s : {"<script", "<link", "<img", "<iframe", "@import", "url("})
    EXPECT_EQ(html.find(s), std::string::npos) << s;
  EXPECT_FALSE(std::regex_search(
      html, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
}

TEST_F(Chromium, ReadableAt360AndAt1280PxWideWithTheFindingOnTheFirstScreen) {
  for (const int width : {360, 1280}) {
    SCOPED_TRACE("at " + std::to_string(width) + " px wide");
    auto r = chromium("width-" + std::to_string(width),
                      {"--dump-dom", "--virtual-time-budget=5000"}, measuring_page(width));
    ASSERT_TRUE(r.exit.exited_ok()) << r.exit.describe() << "\n" << r.err.last_lines(10);
    const std::string dom = r.out.text();
    const std::string open = "<pre id=\"fc-measure\">";
    const size_t at = dom.find(open);
    ASSERT_NE(at, std::string::npos) << dom.substr(0, 2000);
    std::string text = dom.substr(at + open.size(), dom.find("</pre>", at) - at - open.size());
    for (const auto& [entity, c] :
         {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
      for (size_t p = text.find(entity); p != std::string::npos; p = text.find(entity, p + 1))
        text.replace(p, entity.size(), c);
    const json m = json::parse(text, nullptr, false);
    ASSERT_TRUE(m.is_object()) << "no measurement came back: " << text;
    std::cout << "at " << width << " px: scrollWidth " << m["scrollWidth"] << ", innerWidth "
              << m["innerWidth"] << ", clientWidth " << m["clientWidth"] << ", narrowest cell "
              << m["narrowest_cell"] << "; key finding " << m["finding"].dump() << "\n";
    RecordProperty("scrollWidth_at_" + std::to_string(width), m["scrollWidth"].get<int>());
    ASSERT_EQ(m["innerWidth"], width) << "the viewport measured is the one asked for";
    // No horizontal page scroll: nothing wider than the viewport, nor than what a vertical
    // scrollbar leaves of it.
    EXPECT_LE(m["scrollWidth"].get<int>(), m["innerWidth"].get<int>()) << m["wide"];
    EXPECT_LE(m["scrollWidth"].get<int>(), m["clientWidth"].get<int>()) << m["wide"];
    EXPECT_TRUE(m["wide"].empty()) << m["wide"];
    // The matrix readable, in its own box: a cell wide enough for "fork-pause-resource · fix"
    // to break at its words, each verdict inside its cell.
    EXPECT_GE(m["narrowest_cell"].get<double>(), 140.0);
    EXPECT_TRUE(m["verdicts_sticking_out"].empty()) << m["verdicts_sticking_out"];
    // The key finding, at the top: shown, before the matrix, starting on the first screen.
    const json& f = m["finding"];
    ASSERT_TRUE(f.is_object()) << "no #key-finding on the page";
    EXPECT_TRUE(f["shown"].get<bool>());
    EXPECT_TRUE(f["before_matrix"].get<bool>());
    EXPECT_GT(f["height"].get<double>(), 20.0);
    EXPECT_GE(f["top"].get<double>(), 0.0);
    EXPECT_LT(f["top"].get<double>() + 40, m["innerHeight"].get<double>())
        << "its headline on the first screen, not just its edge";
  }
}

}  // namespace
