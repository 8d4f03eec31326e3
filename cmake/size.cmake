# max_rss's own code in sections of their own, and the linker drops the ones
# nothing calls. max_rss's file pages are most of its own resident memory
# (fault-around maps 64 KiB about each page it touches), and most of the code
# the headers instantiate (CLI11, nlohmann_json, fmt, libstdc++ linked in) is
# never called. Measured side by side (2026-11-27, 2 runs each): text 4.48 ->
# 3.40 MB; `max_rss -q -o r.json -- /bin/true` 4.3-4.8 -> 3.9-4.1 MiB;
# `wide_tree 10000` 8.6 -> 8.1 MiB. Only max_rss's own targets: the fixture
# programs are what is measured and stay as they are.
#
# Optimized for size (-Os in place of -O2): the tracer's time goes to the
# kernel (ptrace stops, /proc reads), not to its own instructions, and less
# code is fewer pages for fault-around to map. Measured side by side
# (2026-12-07, 6 runs each, medians): text 3.44 -> 3.01 MB;
# `max_rss -q -o r.json -- /bin/true` 3.84 -> 3.58 MiB; `wide_tree 10000`
# 7.69 -> 7.39 MiB. Traced time, 5 alternating runs: `fork_loop 2000` 2662 ->
# 2773 ms, `thread_loop 5000` 562 -> 510, `fork_exec_loop 1000` 4415 -> 4060
# (noise: docs/performance.md).
function(max_rss_size_options target)
  target_compile_options(${target} PRIVATE -ffunction-sections -fdata-sections
                                           $<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:-Os>)
endfunction()

function(max_rss_size_link target)
  max_rss_size_options(${target})
  target_link_options(${target} PRIVATE -Wl,--gc-sections)
endfunction()
