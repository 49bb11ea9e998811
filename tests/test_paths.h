#pragma once
// Where test fixtures live. Shared reference data sits at ../shared beside the checkout (developers and CI alike);
// small copies the suite always needs are under tests/data and models/.
#include <string>

namespace kairo::testing {

inline std::string source_path(const std::string& rel) { return std::string(KAIRO_SOURCE_DIR) + "/" + rel; }
inline std::string shared_path(const std::string& rel) { return std::string(KAIRO_SHARED_DIR) + "/" + rel; }
inline std::string demo_model_path() { return source_path("models/aidreams260K.gguf"); }

}  // namespace kairo::testing
