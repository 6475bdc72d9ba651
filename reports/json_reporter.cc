// report.json: everything the other formats show, for tools.
#include "reports/reporter.h"

namespace fc::reports {
namespace {

class JsonReporter final : public Reporter {
 public:
  std::string file_name() const override { return "report.json"; }
  std::string render(const Report& report) const override {
    return report.document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
};

}  // namespace

std::unique_ptr<Reporter> make_json_reporter() { return std::make_unique<JsonReporter>(); }

}  // namespace fc::reports
