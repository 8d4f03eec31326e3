// Linked into the sanitized max_rss and its sanitized test binary only.
// UndefinedBehaviorSanitizer prints where a report came from; the
// environment's UBSAN_OPTIONS still overrides this.
extern "C" const char* __ubsan_default_options() { return "print_stacktrace=1"; }
