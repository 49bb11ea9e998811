#pragma once
// Read-only memory map of a whole file. Refuses directories, FIFOs and devices up front so a bad path is an error,
// never a hang on open() or read().
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/result.h"

namespace kairo {

class MappedFile {
 public:
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Unmaps from this process the whole pages inside [p, p + n) (madvise MADV_DONTNEED), for contents that were
  // copied elsewhere (repacked weights), so resident memory does not count them twice. Reading them again is still
  // correct: the pages fault back in from the file. Ranges outside the mapping are ignored.
  void release_pages(const void* p, size_t n) const;

 private:
  MappedFile() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole small file (JSON configs, templates). Same checks as MappedFile::open.
Result<std::string> read_text_file(const std::string& path, size_t max_bytes = size_t{64} << 20);

}  // namespace kairo
