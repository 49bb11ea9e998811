#pragma once
// The informational lines commands print on stderr (startup notes, timings) and the switch that turns them off:
// `kairo --quiet CMD` or `kairo CMD --quiet`. Warnings and errors are always printed; results go to stdout either way.
namespace kairo::tools {

void set_quiet(bool quiet);
bool quiet();
// printf to stderr unless quiet.
void note(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace kairo::tools
