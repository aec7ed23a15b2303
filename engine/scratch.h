// Scratch buffers that a kernel overwrites whole before anything reads them: std::vector
// without the zero fill, which every decoder step would otherwise pay on its activations (the
// measured share: docs/PERFORMANCE.md "rpt vs CTranslate2 after batch invariance and the
// host-side cuts").
#pragma once

#include <memory>
#include <vector>

namespace rpt {

// std::allocator whose element construction without arguments leaves the element
// default-initialized (uninitialized for float) instead of zeroed.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* at) noexcept(noexcept(::new (static_cast<void*>(at)) U)) {
    ::new (static_cast<void*>(at)) U;
  }
  template <typename U, typename... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};

// Only for buffers written whole before they are read (a GEMM's output with beta 0, a layer
// norm's output): its elements start undefined.
using ScratchFloats = std::vector<float, DefaultInitAllocator<float>>;

}  // namespace rpt
