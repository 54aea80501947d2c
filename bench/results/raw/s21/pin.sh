#!/bin/bash
# PINMAP="0 1 1": rank i on cpu PINMAP[i]
map=($PINMAP)
exec taskset -c ${map[$OMPI_COMM_WORLD_RANK]} "$@"
