// The JSON report of one traced run: a stable, versioned contract (docs/report.md).
#pragma once

#include <max_rss/model.hpp>

#include <nlohmann/json.hpp>

#include <ostream>

namespace max_rss {

inline constexpr int kReportSchemaVersion = 1;

// One process as a JSON object.
nlohmann::ordered_json process_to_json(const Process& process);

// Writes the whole report. Processes are serialised one at a time, so a tree
// of 10,000 processes never exists as one JSON document in memory.
void write_report_json(std::ostream& out, const RunResult& result);

}  // namespace max_rss
