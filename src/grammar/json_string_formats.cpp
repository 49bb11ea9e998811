#include "grammar/json_string_formats.h"

namespace kairo::grammar {

namespace {

const char* kDate =
    "[0-9]{4} \"-\" ( ( \"0\" [13578] | \"1\" [02] ) \"-\" ( \"0\" [1-9] | [12] [0-9] | \"3\" [01] ) "
    "| ( \"0\" [469] | \"11\" ) \"-\" ( \"0\" [1-9] | [12] [0-9] | \"30\" ) "
    "| \"02\" \"-\" ( \"0\" [1-9] | \"1\" [0-9] | \"2\" [0-8] ) )";
const char* kTime =
    "( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{1,6} )? "
    "( \"Z\" | [+-] ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )";
const char* kUuid =
    "[0-9a-f]{8} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{12}";
// A dot-atom local part and a hostname of two or more labels (letters, digits, inner hyphens).
const char* kEmail =
    "[a-zA-Z0-9_%+-]{1,32} ( \".\" [a-zA-Z0-9_%+-]{1,32} ){0,3} \"@\" "
    "[a-zA-Z0-9] ( [a-zA-Z0-9-]{0,20} [a-zA-Z0-9] )? ( \".\" [a-zA-Z0-9] ( [a-zA-Z0-9-]{0,20} [a-zA-Z0-9] )? ){1,3}";

}  // namespace

std::optional<std::string> string_format_gbnf(const std::string& format) {
  if (format == "date") return std::string(kDate);
  if (format == "time") return std::string(kTime);
  if (format == "date-time") return std::string("( ") + kDate + " ) \"T\" ( " + kTime + " )";
  if (format == "uuid") return std::string(kUuid);
  if (format == "email") return std::string(kEmail);
  return std::nullopt;
}

const char* supported_string_formats() { return "date, time, date-time, uuid, email"; }

}  // namespace kairo::grammar
