// The command-line front end: each command registers its options on the CLI11
// app and returns the action to run once parsing succeeded.
#pragma once


#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace max_rss::cli {

// Runs after a successful parse; returns the process exit code.
using Action = std::function<int()>;

// `max_rss [OPTIONS] [--] COMMAND [ARGS...]`: options live on the top-level app.
// after_dashdash: what followed the first "--" of the command line, if any (main()
// splits it off so that nothing after it is ever parsed as max_rss's own).
Action add_run_command(CLI::App& app, const std::optional<std::vector<std::string>>& after_dashdash);
// `max_rss bench [OPTIONS] [--] COMMAND...`
Action add_bench_command(CLI::App& app, const std::optional<std::vector<std::string>>& after_dashdash);
// `max_rss compare [--threshold 5%] [--] BASE NEW`
Action add_compare_command(CLI::App& app, const std::optional<std::vector<std::string>>& after_dashdash);

// Builds the whole app and runs it; what main() calls.
int main(int argc, char** argv);

}  // namespace max_rss::cli
