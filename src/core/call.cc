#include "core/call.h"

namespace gdr {

namespace {

constexpr CollTraits kTraits[kNumCollKinds] = {
    // name            reduces rooted rankOrderFree layout
    {"allreduce", true, false, true, Layout::Whole},
    {"bcast", false, true, true, Layout::Whole},
    {"reduce", true, true, true, Layout::Whole},
    {"allgather", false, false, false, Layout::GatherOut},
    {"reducescatter", true, false, false, Layout::ScatterIn},
    {"alltoall", false, false, false, Layout::BlockPerPeer},
    {"alltoallv", false, false, false, Layout::Vectors},
    {"barrier", false, false, true, Layout::None},
};

constexpr CollTraits kUnknown{"unknown", false, false, false, Layout::None};

}  // namespace

const CollTraits& traitsOf(CollKind k) {
  const auto i = static_cast<unsigned>(k);
  return i < kNumCollKinds ? kTraits[i] : kUnknown;
}

}  // namespace gdr
