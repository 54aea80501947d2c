#!/usr/bin/env bash
# freeze.sh stop|cont : SIGSTOP every helper build/test/VM process (cwd under /work/wt8-*, or a
# compiler/VM by name), remember them, SIGCONT them later. A watchdog resumes them after 300 s anyway.
set -u
F=/tmp/frozen.pids
if [ "$1" = stop ]; then
  : > $F
  for pass in 1 2 3 4; do
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}; [ "$pid" = $$ ] && continue
    c=$(readlink $p/cwd 2>/dev/null) || continue
    comm=$(cat $p/comm 2>/dev/null)
    case "$c" in /work/wt8-*) echo $pid >> $F; continue;; esac
    case "$comm" in ninja|cc1plus|cc1|collect2|ld|as|cmake|ctest|nvcc|cicc|ptxas|fatbinary|qemu-system-x86|clang*|gdr-*|mpirun|orted|python3|prted) echo $pid >> $F;; esac
  done
  sort -u -o $F $F
  kill -STOP $(cat $F) 2>/dev/null
  sleep 0.3
  done
  (sleep 300; kill -CONT $(cat $F) 2>/dev/null) > /dev/null 2>&1 &
  echo "stopped $(wc -l < $F) processes"
else
  kill -CONT $(cat $F) 2>/dev/null; echo "resumed $(wc -l < $F)"
fi
