#include "terminal/notes.h"

#include <cstdarg>
#include <cstdio>

namespace kairo::tools {
namespace {
bool g_quiet = false;
}

void set_quiet(bool quiet) { g_quiet = quiet; }
bool quiet() { return g_quiet; }

void note(const char* fmt, ...) {
  if (g_quiet) return;
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
}

}  // namespace kairo::tools
