// The Mann-Whitney U test behind compare, against scipy.stats.mannwhitneyu's
// figures for the same samples (exact, and asymptotic with continuity).
#include <max_rss/bench/significance.hpp>

#include <catch2/catch.hpp>

#include <vector>

using max_rss::mann_whitney_p_greater;
using max_rss::mann_whitney_smallest_p;

TEST_CASE("mann-whitney: separated samples of 5 give scipy's exact p, 1/252", "[stats][significance]") {
    const std::vector<double> before = {100, 103, 101, 99, 102};
    const std::vector<double> after = {104, 106, 105, 107, 108};
    CHECK(*mann_whitney_p_greater(before, after) == Approx(0.003968253968253968));
    CHECK(*mann_whitney_p_greater(before, after) == Approx(mann_whitney_smallest_p(5, 5)));
    // The other direction: nothing suggests after is smaller... but before is.
    CHECK(*mann_whitney_p_greater(after, before) == Approx(1.0));
}

TEST_CASE("mann-whitney: interleaved samples are not significant", "[stats][significance]") {
    const std::vector<double> before = {100, 105, 98, 103, 101};
    const std::vector<double> after = {104, 99, 106, 100.5, 102};
    CHECK(*mann_whitney_p_greater(before, after) == Approx(0.34523809523809523));
    // With a tie across the samples, mid-ranks: an exact permutation p (scipy's
    // "exact" ignores ties and says 0.42 here).
    const std::vector<double> tied = {104, 99, 106, 100, 102};
    CHECK(*mann_whitney_p_greater(before, tied) == Approx(93.0 / 252));
}

TEST_CASE("mann-whitney: ties and large samples use the normal approximation", "[stats][significance]") {
    const std::vector<double> before = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    const std::vector<double> after = {5.5, 7.5, 9.5, 11.5, 13, 14, 15, 16, 17, 18, 19, 20};
    CHECK(*mann_whitney_p_greater(before, after) == Approx(0.0006769707215463154).epsilon(1e-6));
    const std::vector<double> tied_before = {10, 10, 10, 12, 12, 12, 12, 11, 11, 11, 11, 11};
    const std::vector<double> tied_after = {11, 11, 12, 12, 13, 13, 13, 12, 12, 14, 10, 11};
    CHECK(*mann_whitney_p_greater(tied_before, tied_after) == Approx(0.021925580190663832).epsilon(1e-6));
}

TEST_CASE("mann-whitney: equal samples, empty samples, the smallest p of few runs", "[stats][significance]") {
    const std::vector<double> same = {7, 7, 7};
    CHECK(*mann_whitney_p_greater(same, same) == Approx(1.0));
    CHECK_FALSE(mann_whitney_p_greater({}, same));
    CHECK(mann_whitney_smallest_p(3, 3) == Approx(0.05));
    CHECK(mann_whitney_smallest_p(2, 2) == Approx(1.0 / 6));
    CHECK(mann_whitney_smallest_p(1, 10) == Approx(1.0 / 11));
    CHECK(mann_whitney_smallest_p(0, 10) == 1.0);
}
