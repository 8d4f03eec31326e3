// Which max_rss binary the tests run. The test code is compiled once and
// linked twice (tests/CMakeLists.txt): this file is compiled for each test
// binary, with MAX_RSS_BIN naming the max_rss it goes with.
#include "e2e/helpers.hpp"

namespace max_rss::test {

const char* max_rss_bin() { return MAX_RSS_BIN; }

}  // namespace max_rss::test
