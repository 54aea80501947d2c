// The router's fast path for calls that are one message at two ranks (a
// broadcast or a reduce of a few bytes): the message goes through the
// transport's immediate path (Endpoint::sendNow / recvNow) without building
// buffers or a schedule; a receive whose message has not arrived yet waits
// here, as the general path's one-step schedule would. Anything it does not
// cover, and a send the back end cannot take at once, takes the general
// host path, which then does exactly what it would have done without this.
#pragma once

#include "comm/comm.h"
#include "core/call.h"

namespace gdr::paths {

// True when the call is done; false when nothing happened.
bool tryOneMessage(Communicator& comm, const CollCall& call);

}  // namespace gdr::paths
