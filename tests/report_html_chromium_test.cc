// A real run's report.html (FC_REAL_REPORT_DIR, from the ctest fixture reports.real_run) opened
// in headless Chromium, as a person would: the page must show the matrix and the tiny NN's loss
// curves (the rendered DOM), look like a page (a screenshot that is not blank), and fetch
// nothing (Chromium's own net log: no request initiated by the page).
#include <png.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kHtml = fs::path(FC_REAL_REPORT_DIR) / "report.html";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
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
  static fc::harness::ChildResult chromium(const std::string& name, std::vector<std::string> extra) {
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--no-first-run", "--disable-component-update", "--disable-sync",
                 "--user-data-dir=" + (dir_ / ("profile-" + name)).string(),
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1280,2000"};
    spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
    spec.argv.push_back("file://" + kHtml.string());
    spec.timeout_s = 120;
    spec.channel = false;
    spec.capture_cap = 16u << 20;  // the DOM comes on stdout
    return fc::harness::supervise(spec);
  }

  static inline fs::path dir_;
};

TEST_F(Chromium, DomShowsTheMatrixAndTheLossCurves) {
  auto r = chromium("dom", {"--dump-dom"});
  ASSERT_TRUE(r.exit.exited_ok()) << r.exit.describe() << "\n" << r.err.last_lines(10);
  const std::string dom = r.out.text();
  ASSERT_NE(dom.find("<table class=\"matrix\">"), std::string::npos) << dom.substr(0, 2000);
  for (const char* id : {"gomp-fork-hang", "tiny-nn-spawn"})
    EXPECT_NE(dom.find("<tr class=\"case-row\" id=\"row-" + std::string(id) + "\""), std::string::npos) << id;
  EXPECT_NE(dom.find("hang \u2713 expected hang"), std::string::npos);

  const size_t featured = dom.find("id=\"featured\"");
  ASSERT_NE(featured, std::string::npos);
  const std::string section = dom.substr(featured, dom.find("</section>", featured) - featured);
  // spawn and forkserver: each a chart of the 5 workers' curves, each curve many points
  EXPECT_GE(count(section, "<svg"), 1u);
  std::regex polyline(R"(<polyline[^>]*points="([^"]*)\")");
  size_t curves = 0;
  for (auto it = std::sregex_iterator(section.begin(), section.end(), polyline); it != std::sregex_iterator(); ++it)
    if (count((*it)[1].str(), ",") >= 10) ++curves;
  EXPECT_GE(curves, 5u) << "five loss curves";
  EXPECT_EQ(curves % 5, 0u);
  EXPECT_NE(section.find("Unable to handle autograd"), std::string::npos) << "fork's error beside them";
  EXPECT_NE(dom.find("id=\"environment\""), std::string::npos);
}

TEST_F(Chromium, ScreenshotIsAPageNotABlank) {
  const fs::path png = dir_ / "report.png";
  auto r = chromium("shot", {"--screenshot=" + png.string()});
  ASSERT_TRUE(r.exit.exited_ok()) << r.exit.describe() << "\n" << r.err.last_lines(10);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 20u * 1024) << "a page with text, tables and charts compresses to more";

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
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
}

}  // namespace
