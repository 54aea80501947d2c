// gdr-info: prints gdrcoll's version, build features and every GDR_*
// variable with its current value. --markdown prints the README's table.
#include <cstdio>
#include <cstring>
#include <string>

#include "core/params.h"
#include "gdrcoll.h"
#if GDR_HAVE_IB
#include "transport/ib/gdr_mode.h"
#endif

int main(int argc, char** argv) {
  bool markdown = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--markdown")) {
      markdown = true;
    } else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("usage: gdr-info [--markdown]\n  Prints the build's features and every GDR_* variable.\n");
      return 0;
    } else {
      std::fprintf(stderr, "gdr-info: unknown option '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  if (markdown) {
    std::printf("| variable | type | default | meaning |\n| --- | --- | --- | --- |\n");
    for (const auto& p : gdr::param::all())
      std::printf("| `%s` | %s | `%s` | %s |\n", p.name, gdr::param::typeName(p.type),
                  *p.defaultValue ? p.defaultValue : "", p.description);
    return 0;
  }
  int v = 0;
  gdrGetVersion(&v);
  std::printf("gdrcoll %d.%d.%d  CUDA: %s  verbs: %s\n\n", v / 10000, (v / 100) % 100, v % 100,
              GDR_HAVE_CUDA ? "built in" : "not built", GDR_HAVE_IB ? "built in (loaded at run time)" : "not built");
#if GDR_HAVE_IB
  {  // GPU memory over the network on this machine (the topology's path check aside)
    gdr::transport::ib::GdrChecks c = gdr::transport::ib::probeGdrChecks();
    std::printf("GPUDirect RDMA: %s\n\n",
                gdr::transport::ib::describeGdr(c, gdr::transport::ib::decideGdr(c)).c_str());
  }
#endif
  for (const auto& p : gdr::param::all()) {
    std::string cur = gdr::param::current(p);
    std::printf("%-24s %-6s = %-10s (default %s)\n    %s\n", p.name, gdr::param::typeName(p.type), cur.c_str(),
                *p.defaultValue ? p.defaultValue : "\"\"", p.description);
  }
  return 0;
}
