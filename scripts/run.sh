#!/usr/bin/env bash
# The main job: install what is missing, build, and benchmark gdrcoll's
# all-reduce against the system MPI on host memory with 4 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec mpirun --oversubscribe -np "${NP:-4}" build/bin/gdr-bench allreduce --check --compare mpi "$@"
