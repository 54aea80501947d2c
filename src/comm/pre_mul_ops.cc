#include "comm/pre_mul_ops.h"

#include <cstring>

#include "core/datatype.h"
#include "core/error.h"
#include "core/memory_kind.h"

namespace gdr {

int PreMulOps::create(gdrDataType_t type, const void* scalar, bool scalarOnDevice) {
  Op o{};
  o.type = type;
  o.scalarOnDevice = scalarOnDevice;
  o.pointer = scalar;
  if (!scalarOnDevice) std::memcpy(o.value, scalar, typeSize(type));
  std::lock_guard<std::mutex> g(mu_);
  const int id = next_++;
  ops_[id] = o;
  return id;
}

void PreMulOps::destroy(int op) {
  std::lock_guard<std::mutex> g(mu_);
  GDR_CHECK_ARG(ops_.erase(op) == 1,
                "op %d was not created on this communicator (or was destroyed)", op);
}

PreMul PreMulOps::resolve(int op, gdrDataType_t type) const {
  Op o;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = ops_.find(op);
    GDR_CHECK_ARG(it != ops_.end(),
                  "op %d is neither a built-in op nor one made on this communicator by "
                  "gdrRedOpCreatePreMulSum (destroyed?)",
                  op);
    o = it->second;
  }
  GDR_CHECK_ARG(o.type == type, "op %d was created for another datatype than this call's", op);
  PreMul p;
  // A gdrScalarDevice scalar in host memory is read now, as the call runs.
  if (o.scalarOnDevice && memoryKind(o.pointer) == MemKind::Device) {
    p.onDevice = true;
    p.pointer = o.pointer;
  } else {
    std::memcpy(p.value, o.scalarOnDevice ? o.pointer : o.value, typeSize(type));
  }
  return p;
}

}  // namespace gdr
