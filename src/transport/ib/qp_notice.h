// "QP down": what a verbs endpoint tells its peer, over the side connection
// (Endpoint::sendNotice), when one of its QPs failed and its chunks moved to
// the others. The peer's end of that QP may still hold writes the dead end
// will never acknowledge; without the notice the peer finds out only when
// they exhaust their retries (4.096 us x 2^GDR_IB_TIMEOUT x (retry count + 1):
// 34 s at the defaults). With it, the peer moves its end to the error state
// at once, so its writes flush and fail over the same way.
//
// QP index q names the pair (this side's QP q is connected to the peer's QP
// q), so the notice means the same QP to both. Pure: tests drive it.
#pragma once

#include <cstdint>
#include <string>

namespace gdr::transport::ib {

struct QpDownNotice {
  int qp = 0;      // index among the connection's QPs
  int status = 0;  // the ibv_wc_status the failed QP completed with
};

std::string encodeQpDown(const QpDownNotice& n);
// False when `bytes` is not a QP-down notice for a connection of `nQps`
// QPs (another kind of notice, another version, or a QP out of range).
bool decodeQpDown(const std::string& bytes, int nQps, QpDownNotice* out);

}  // namespace gdr::transport::ib
