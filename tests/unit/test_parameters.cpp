#include <max_rss/bench/parameters.hpp>
#include <max_rss/bench/runner.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace max_rss;

TEST_CASE("parameter scan: MIN to MAX by STEP, whole or with STEP's decimals", "[bench][parameters]") {
    CHECK(scan_parameter("n", "1", "4", std::nullopt).values == std::vector<std::string>{"1", "2", "3", "4"});
    CHECK(scan_parameter("n", "0", "10", "5").values == std::vector<std::string>{"0", "5", "10"});
    CHECK(scan_parameter("n", "0", "1", "0.25").values ==
          std::vector<std::string>{"0.00", "0.25", "0.50", "0.75", "1.00"});
    // Counting steps, not adding them: 0.1 * 3 does not overshoot 0.3.
    CHECK(scan_parameter("x", "0", "0.3", "0.1").values == std::vector<std::string>{"0.0", "0.1", "0.2", "0.3"});
    CHECK_THROWS_WITH(scan_parameter("n", "5", "1", std::nullopt), "MIN 5 is above MAX 1");
    CHECK_THROWS_WITH(scan_parameter("n", "a", "1", std::nullopt), "'a' is not a number");
    CHECK_THROWS_WITH(scan_parameter("n", "1", "2", "0"), "STEP must be above 0, not 0");
    CHECK_THROWS_WITH(scan_parameter("n", "0", "1e9", std::nullopt), "more than 100000 values");
}

TEST_CASE("parameter lists: comma-separated, combined in hyperfine's order", "[bench][parameters]") {
    CHECK(list_parameter("c", "gzip,,xz").values == std::vector<std::string>{"gzip", "", "xz"});
    const auto combinations =
        parameter_combinations({list_parameter("a", "1,2"), list_parameter("b", "x,y")});
    REQUIRE(combinations.size() == 4);
    CHECK(combinations[0] == std::vector<BenchParameter>{{"a", "1"}, {"b", "x"}});
    CHECK(combinations[1] == std::vector<BenchParameter>{{"a", "1"}, {"b", "y"}});
    CHECK(combinations[3] == std::vector<BenchParameter>{{"a", "2"}, {"b", "y"}});
    CHECK(parameter_combinations({}).size() == 1);
    CHECK_THROWS_WITH(parameter_combinations({list_parameter("a", "1"), list_parameter("a", "2")}),
                      "the parameter 'a' is given twice");
}

TEST_CASE("parameter substitution: every {NAME}, once, other braces kept", "[bench][parameters]") {
    const std::vector<BenchParameter> values = {{"n", "{m}"}, {"m", "7"}};
    CHECK(substitute_parameters("touch {n} {m} {n}", values) == "touch {m} 7 {m}");
    CHECK(substitute_parameters("awk '{print}' {x} {", values) == "awk '{print}' {x} {");
}

TEST_CASE("planned runs: --runs, or as many as fit in 3 s within --min-runs/--max-runs", "[bench]") {
    BenchSettings fixed;
    fixed.runs = 7;
    CHECK(planned_runs(fixed, 100.0) == 7);
    BenchSettings automatic;
    automatic.runs = 0;
    automatic.min_runs = 10;
    automatic.max_runs = 50;
    CHECK(planned_runs(automatic, 1.0) == 10);    // 3 runs fit: at least 10
    CHECK(planned_runs(automatic, 0.1) == 30);    // 30 fit
    CHECK(planned_runs(automatic, 0.001) == 50);  // 3000 fit: at most 50
    CHECK(planned_runs(automatic, 0.0) == 50);
}
