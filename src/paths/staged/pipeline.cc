// The two sides of a staged operation (see StagedContext, context.h): the
// copies and flag-word writes and waits on the caller's stream (issue), and
// the host part of each segment on the progress thread (hostRun).
#include "paths/staged/context.h"

#if GDR_HAVE_CUDA
#include <algorithm>

#include "core/cuda.h"
#include "core/error.h"
#include "paths/staged/driver.h"
#include "security/aead.h"

namespace gdr::paths::staged {

namespace {

void copy2D(const Copy2D& c, char* host, bool toHost, cudaStream_t s) {
  if (toHost)
    checkCuda(cudaMemcpy2DAsync(host + c.hostOff, c.hostPitch, c.dev, c.devPitch, c.width, c.rows,
                                cudaMemcpyDeviceToHost, s),
              "cudaMemcpy2DAsync (device to host) (staged path)");
  else
    checkCuda(cudaMemcpy2DAsync(c.dev, c.devPitch, host + c.hostOff, c.hostPitch, c.width, c.rows,
                                cudaMemcpyHostToDevice, s),
              "cudaMemcpy2DAsync (host to device) (staged path)");
}

char* hostBuf(const Copy2D& c, SlotSet& slots, size_t sl) {
  return c.hostIn ? slots.in[sl] : slots.out[sl];
}

// Wrap-safe "v has reached want".
bool reached(uint32_t v, uint32_t want) { return static_cast<int32_t>(v - want) >= 0; }

}  // namespace

void StagedContext::hostRun(const Plan& plan, SlotSet& slots, size_t ready, size_t result,
                            uint32_t base, const Deadline& d, const staged::OpenLog* log) {
  auto waitReady = [&](uint32_t want, const char* what, size_t k) {
    if (reached(load(ready), want)) return;
    // A wait for the stream shows on the status board while it lasts.
    __atomic_store_n(&boardWords_.stage, static_cast<uint32_t>(k) + 1, __ATOMIC_RELAXED);
    struct Clear {
      uint32_t* w;
      ~Clear() { __atomic_store_n(w, 0u, __ATOMIC_RELAXED); }
    } clear{&boardWords_.stage};
    progress::pollUntil(
        [&] { return reached(load(ready), want); }, d,
        [&] {
          return strprintf(
              "for the %s of segment %zu of %s (queued on the caller's stream: work "
              "before it may not have finished)",
              what, k, plan.what().c_str());
        },
        [this] { return comm_.stopCode(); });
  };
  const size_t nseg = plan.segments();
  for (size_t k = 0; k < nseg; ++k) {
    const uint32_t want = base + static_cast<uint32_t>(k) + 1;
    waitReady(want, "device-to-host copy", k);
    const size_t sl = k % kSlots;
    Segment seg = plan.segment(k);
    if (plan.sealed() && !seg.toHost.empty() && seg.toHost[0].seal.on &&
        security::testing::takeCorruptRequest())
      slots.in[sl][seg.toHost[0].hostOff] ^= 1;  // tests: a bit flipped in transit
    seg.host(slots.in[sl], slots.out[sl]);
    store(result, want);
  }
  if (log) {
    // The stream is past every open (the log is complete: the stream wrote
    // this value after all of them were queued): check them before it may
    // go on. Every sealed operation does this, opens or not, so both sides
    // agree without reading the log early.
    const uint32_t want = base + static_cast<uint32_t>(nseg) + 1;
    waitReady(want, "GPU opens", nseg - 1);
    std::string forged = sealer_->verify(*log);
    if (!forged.empty()) throw Error(gdrRemoteError, forged);
    store(result, want);
  }
}

void StagedContext::issue(const Plan& plan, SlotSet& slots, GpuSealer* sealer, staged::OpenLog* log,
                          size_t ready, size_t result, uint32_t base, cudaStream_t s) {
  const size_t nseg = plan.segments();
  auto cs = reinterpret_cast<CUstream>(s);
  auto waitFor = [&](size_t word, uint32_t want) {
    cuOk(driver().waitValue32(cs, wordAt(word), want, CU_STREAM_WAIT_VALUE_GEQ),
         "cuStreamWaitValue32");
  };
  auto toHost = [&](size_t k) {
    const size_t sl = k % kSlots;
    for (Copy2D c : plan.segment(k).toHost) {
      if (c.seal.on) sealer->seal(c, hostBuf(c, slots, sl), slots.sealBuf(sl), s);
      copy2D(c, hostBuf(c, slots, sl), true, s);
    }
    cuOk(driver().writeValue32(cs, wordAt(ready), base + static_cast<uint32_t>(k) + 1,
                               CU_STREAM_WRITE_VALUE_DEFAULT),
         "cuStreamWriteValue32");
  };
  for (size_t k = 0; k < std::min(kSlots, nseg); ++k) toHost(k);
  for (size_t k = 0; k < nseg; ++k) {
    waitFor(result, base + static_cast<uint32_t>(k) + 1);
    const size_t sl = k % kSlots;
    for (const Copy2D& c : plan.segment(k).toDevice) {
      copy2D(c, hostBuf(c, slots, sl), false, s);
      if (c.seal.on) sealer->open(c, hostBuf(c, slots, sl), *log, s);
    }
    if (k + kSlots < nseg) toHost(k + kSlots);
  }
  if (log) {  // the progress thread checks the opens (hostRun)
    const uint32_t fin = base + static_cast<uint32_t>(nseg) + 1;
    cuOk(driver().writeValue32(cs, wordAt(ready), fin, CU_STREAM_WRITE_VALUE_DEFAULT),
         "cuStreamWriteValue32");
    waitFor(result, fin);
  }
}

}  // namespace gdr::paths::staged

#endif
