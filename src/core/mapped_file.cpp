#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/format.h"

namespace kairo {
namespace {

Result<int> open_regular_file(const std::string& path, struct stat* st) {
  // O_NONBLOCK so that opening a FIFO cannot block waiting for a writer; we reject it right after.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Error{strprintf("%s: cannot open: %s", path.c_str(), std::strerror(errno))};
  if (::fstat(fd, st) != 0) {
    const int err = errno;
    ::close(fd);
    return Error{strprintf("%s: cannot stat: %s", path.c_str(), std::strerror(err))};
  }
  if (S_ISDIR(st->st_mode)) {
    ::close(fd);
    return Error{strprintf("%s: is a directory, expected a file", path.c_str())};
  }
  if (!S_ISREG(st->st_mode)) {
    ::close(fd);
    return Error{strprintf("%s: is not a regular file (FIFO, socket or device), expected a file", path.c_str())};
  }
  return fd;
}

}  // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
  struct stat st {};
  KAIRO_TRY_ASSIGN(const int fd, open_regular_file(path, &st));
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ == 0) {
    ::close(fd);
    return file;  // an empty mapping; readers report "file is empty"
  }
  void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED) return Error{strprintf("%s: cannot mmap: %s", path.c_str(), std::strerror(err))};
  file->data_ = static_cast<const uint8_t*>(p);
  return file;
}

void MappedFile::release_pages(const void* p, size_t n) const {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const auto base = reinterpret_cast<uintptr_t>(data_);
  if (data_ == nullptr || begin < base || n > size_ || begin - base > size_ - n) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + n) / page * page;
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

Result<std::string> read_text_file(const std::string& path, size_t max_bytes) {
  struct stat st {};
  KAIRO_TRY_ASSIGN(const int fd, open_regular_file(path, &st));
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Error{strprintf("%s: file is %s, larger than the %s limit", path.c_str(),
                           human_bytes(static_cast<uint64_t>(st.st_size)).c_str(), human_bytes(max_bytes).c_str())};
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}

}  // namespace kairo
