#pragma once
// Allocation failures that say what they were for. A plain std::bad_alloc carries neither a size nor a purpose, yet
// the boundaries that turn one into an Error (loading a model, starting the engine, an engine step) must say how much
// was asked for and what to change. The allocators of large blocks (allocate_bulk, the CPU kernels' scratch) throw
// OutOfMemory: a std::bad_alloc with both, so code that catches std::bad_alloc catches it too.
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

namespace kairo {

class OutOfMemory : public std::bad_alloc {
 public:
  // `purpose` is a phrase for "cannot allocate 64.00 MiB of <purpose>" (a string literal, or nullptr). The message is
  // formatted into the object itself: nothing is allocated while memory is short.
  OutOfMemory(uint64_t bytes, const char* purpose) noexcept;
  uint64_t bytes() const { return bytes_; }
  const char* what() const noexcept override { return message_; }

 private:
  uint64_t bytes_;
  char message_[112];
};

// A step's device buffers that did not fit: the device allocator's message (what was asked for, on which device, and
// what to change) rather than a size. Not a std::bad_alloc, whose catchers describe host memory.
class StepOutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a message can say about a caught allocation failure: OutOfMemory's "cannot allocate 64.00 MiB of ...", or
// "an allocation failed" for another std::bad_alloc (a container that could not grow: its size is unknown).
std::string describe_allocation_failure(const std::bad_alloc& e);

// "; this process may map at most 512.00 MiB (ulimit -v)" when an address-space limit is set, else "". With one set,
// allocations fail long before the system runs out of memory, and the limit is the knob to turn.
std::string address_space_limit_note();

}  // namespace kairo
