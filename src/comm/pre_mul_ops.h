// The PreMulSum ops made on one communicator (gdrRedOpCreatePreMulSum), a
// member of it: an op value from gdrNumOps up names one, and a call with it
// sums each rank's input multiplied by the op's scalar (core/call.h PreMul).
#pragma once

#include <map>
#include <mutex>

#include "core/call.h"
#include "gdrcoll.h"

namespace gdr {

class PreMulOps {
 public:
  // A new op for `type`. scalarOnDevice (gdrScalarDevice): `scalar` is read
  // at each call (stream-ordered when it is device memory); otherwise its
  // bytes are taken now. Returns the op's value.
  int create(gdrDataType_t type, const void* scalar, bool scalarOnDevice);
  // Throws InvalidArgument unless `op` was made here and not destroyed.
  void destroy(int op);
  // What a call of `type` with `op` (not a built-in op) asks for; throws
  // InvalidArgument for an unknown op or one made for another type.
  PreMul resolve(int op, gdrDataType_t type) const;

 private:
  struct Op {
    gdrDataType_t type;
    bool scalarOnDevice;
    const void* pointer;
    unsigned char value[8];
  };
  mutable std::mutex mu_;
  std::map<int, Op> ops_;
  int next_ = gdrNumOps;
};

}  // namespace gdr
