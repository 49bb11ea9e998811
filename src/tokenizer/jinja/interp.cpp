#include "tokenizer/jinja/interp.h"

#include <cstdio>
#include <ctime>

#include "tokenizer/jinja/error.h"

namespace kairo::jinja {

static std::string limit_hint() { return "; the template is probably runaway, or raise the limit in RenderOptions"; }

void Interp::check_string_size(size_t n_bytes) const {
  if (n_bytes > options_.max_output_bytes)
    throw TemplateError("template built a string larger than max_output_bytes (" +
                            std::to_string(options_.max_output_bytes) + " bytes)" + limit_hint(),
                        TemplateError::Kind::Limit);
}

void Interp::check_list_size(size_t n_items) const {
  if (n_items > static_cast<uint64_t>(options_.max_loop_iterations))
    throw TemplateError("template built a list longer than max_loop_iterations (" +
                            std::to_string(options_.max_loop_iterations) + " items)" + limit_hint(),
                        TemplateError::Kind::Limit);
}

void Interp::count_loop_iteration() {
  if (++loop_iterations_ > options_.max_loop_iterations)
    throw TemplateError("template ran more than max_loop_iterations (" +
                            std::to_string(options_.max_loop_iterations) + ") loop iterations" + limit_hint(),
                        TemplateError::Kind::Limit);
}

void Interp::enter_call() {
  if (call_depth_ + 1 > options_.max_recursion_depth)
    throw TemplateError("macro calls nested deeper than max_recursion_depth (" +
                            std::to_string(options_.max_recursion_depth) + ")" + limit_hint(),
                        TemplateError::Kind::Limit);
  if (++macro_calls_ > options_.max_macro_calls)
    throw TemplateError("template made more than max_macro_calls (" + std::to_string(options_.max_macro_calls) +
                            ") macro calls" + limit_hint(),
                        TemplateError::Kind::Limit);
  ++call_depth_;
}

void Interp::append_output(std::string& out, const std::string& text) const {
  if (out.size() + text.size() > options_.max_output_bytes)
    throw TemplateError("template output is larger than max_output_bytes (" +
                            std::to_string(options_.max_output_bytes) + " bytes)" + limit_hint(),
                        TemplateError::Kind::Limit);
  out += text;
}

Value Interp::call(const Value& callee, CallArgs& args) {
  require_defined(callee);
  if (!callee.is_callable()) fail("'" + type_name(callee) + "' object is not callable");
  return callee.callable_obj().fn(*this, args);
}

Value Interp::apply_filter(const std::string& name, const Value& input, CallArgs& args) {
  FilterFn f = find_filter(name);
  if (!f) fail("No filter named '" + name + "'.");
  return f(*this, input, args);
}

bool Interp::apply_test(const std::string& name, const Value& input, CallArgs& args) {
  TestFn t = find_test(name);
  if (!t) fail("No test named '" + name + "'.");
  return t(*this, input, args);
}

std::string Interp::strftime_now(const std::string& format) const {
  std::tm tm{};
  if (!options_.strftime_now_date.empty()) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    int n = std::sscanf(options_.strftime_now_date.c_str(), "%d-%d-%d %d:%d:%d", &y, &mo, &d, &h, &mi, &s);
    if (n < 3) fail("RenderOptions.strftime_now_date must look like 2026-01-15 or 2026-01-15 13:45:00");
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    std::time_t t = timegm(&tm);  // normalizes and fills in the weekday and day of the year, independent of TZ
    gmtime_r(&t, &tm);
  } else {
    std::time_t t = std::time(nullptr);
    localtime_r(&t, &tm);
  }
  if (format.size() > 256) fail("strftime_now format is longer than 256 characters");
  char buf[2048];
  size_t n = std::strftime(buf, sizeof(buf), format.c_str(), &tm);
  return std::string(buf, n);
}

ArgReader::ArgReader(const CallArgs& args, const char* func, std::initializer_list<const char*> names) {
  std::vector<const char*> n(names);
  if (args.positional.size() > n.size())
    fail(std::string(func) + "() takes at most " + std::to_string(n.size()) + " argument(s) (" +
         std::to_string(args.positional.size()) + " given)");
  values_.assign(n.size(), nullptr);
  for (size_t i = 0; i < args.positional.size(); ++i) values_[i] = &args.positional[i];
  for (const auto& [k, v] : args.keyword) {
    size_t i = 0;
    while (i < n.size() && k != n[i]) ++i;
    if (i == n.size()) fail(std::string(func) + "() got an unexpected keyword argument '" + k + "'");
    if (values_[i]) fail(std::string(func) + "() got multiple values for argument '" + k + "'");
    values_[i] = &v;
  }
}

}  // namespace kairo::jinja
