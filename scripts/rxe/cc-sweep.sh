#!/bin/bash
# cc-sweep.sh [--build-dir DIR] [SCENARIO...] — the congestion testbed's full
# sweep (scripts/rxe/cc-suite.sh) in one boot of the Soft-RoCE VM: every
# scenario with every GDR_IB_CC variant. Default scenarios: clean rate
# loss0.1 loss1 incast bursts. Tunables go in as CC_* through the kernel
# command line, e.g. CC_ENV="CC_RATE=50mbit,CC_ITERS=16". Prints the table
# rows; the whole console stays in scripts/rxe/out/console.log.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ARGS=()
if [ "${1:-}" = --build-dir ]; then ARGS=(--build-dir "$2"); shift 2; fi
SC=$(IFS=:; echo "${*:-clean:rate:loss0.1:loss1:incast:bursts}")
ENV=${CC_ENV:+,$CC_ENV}
APPEND="gdr.suite=cc:$SC gdr.env=GDR_TRANSPORT=ib,GDR_TIMEOUT_MS=120000$ENV ${APPEND:-}" \
    GDR_RXE_TIMEOUT=${GDR_RXE_TIMEOUT:-1800} exec "$HERE/rxe-test.sh" "${ARGS[@]}"
