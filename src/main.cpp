// Thin entry point: everything else is in max_rss_core.
#include <max_rss/cli/commands.hpp>

int main(int argc, char** argv) { return max_rss::cli::main(argc, argv); }
