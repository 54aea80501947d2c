// A PreMulSum call's input scaled into scratch that lives as long as the
// call: the router makes one around the call (dispatch/route.cc), so the
// host, cuda_ipc and staged paths all run a plain sum over the scaled copy.
// Device buffers: scratch from the stream's pool, the scale kernel and the
// free all ordered on the call's stream (a device scalar read when the
// kernel runs). Host buffers: scaled here (a device scalar copied out first,
// stream-ordered).
#pragma once

#include <vector>

#include "core/call.h"

namespace gdr::paths {

class PreMulInput {
 public:
  // `pm`: the scalar of call's op (a PreMulSum); `nranks` sizes a
  // reduce-scatter's input.
  PreMulInput(const CollCall& call, const PreMul& pm, int nranks, bool onDevice,
              gdrStream_t stream);
  ~PreMulInput();
  PreMulInput(const PreMulInput&) = delete;
  PreMulInput& operator=(const PreMulInput&) = delete;

  // The call as the path runs it: a sum of the scaled copy, not in place.
  const CollCall& call() const { return call_; }

 private:
  CollCall call_;
  gdrStream_t stream_ = nullptr;
  void* device_ = nullptr;
  std::vector<unsigned char> host_;
};

}  // namespace gdr::paths
