// `max_rss compare BASE NEW`: pairs the commands of two reports (read by
// report_reader.hpp) and flags peaks that grew beyond a threshold. Pure.
#pragma once

#include <max_rss/report/report_reader.hpp>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss {

// One line per entry of peaks with degraded runs, for stderr (no line end):
//   "NEW.json: ./touch 50: 2 of 5 runs degraded (sampled, not traced): its peak may be low"
//   "NEW.json: ./touch 50: a degraded run (sampled, not traced): its peak may be low"
// source names the report; entries are named by their label (name, else command).
std::vector<std::string> degraded_warnings(std::span<const MeasuredPeak> peaks, std::string_view source);

struct CompareRow {
    std::string label;         // the name when BASE has one, else BASE's command
    std::string base_command;  // the two commands differ when paired by name
    std::string new_command;
    uint64_t before_bytes = 0;
    uint64_t after_bytes = 0;
    // (after - before) / before; 0 when both are 0, +infinity when only before is.
    double change = 0;
    bool regression = false;  // change > threshold
};

struct CompareResult {
    std::vector<CompareRow> rows;           // in BASE's order
    std::vector<std::string> only_in_base;  // labels of unpaired entries, in order
    std::vector<std::string> only_in_new;
    double threshold = 0;  // the fraction rows were judged by
    bool any_regression = false;
};

// Pairs base and after entries: first every equal command string (the first
// unpaired one, so repeated commands pair in order), then, among what is left,
// every equal non-empty name. threshold is a fraction (0.05 for 5%).
CompareResult compare_reports(std::span<const MeasuredPeak> base, std::span<const MeasuredPeak> after,
                              double threshold);

// An aligned table for humans, then a verdict and the unpaired commands:
//   Command          Before    After  Change
//   sleep 1         1.0 MiB  1.1 MiB  +10.0%  regression
//   true              512 B    512 B   +0.0%
//   python3 big.py  1.5 MiB  1.0 MiB  -33.3%
//
//   1 regression above +5%.
//   Only in BASE: ./old
//   Only in NEW: ./new
// Labels are padded by code points, sizes are format_bytes(), a change from 0
// is "+inf%". The verdict reads "No regression above +5%." when there is none;
// the table and its blank line are left out when no command pairs.
std::string format_compare_table(const CompareResult& result);

}  // namespace max_rss
